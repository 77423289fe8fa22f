package dev.sluice.io.parquet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.core.Batch;
import dev.sluice.core.MemoryManager;
import dev.sluice.core.Options.NullPolicy;
import dev.sluice.core.Shape;
import dev.sluice.core.spi.BufferPool;
import dev.sluice.core.testing.NoLeaks;
import dev.sluice.io.Checksums;
import dev.sluice.io.parquet.ParquetTestFiles.Config;
import dev.sluice.io.parquet.internal.ColumnPlan;
import dev.sluice.io.parquet.internal.ParquetFileInfo;
import dev.sluice.io.parquet.internal.RowGroupReader;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.apache.parquet.bytes.BytesInput;
import org.apache.parquet.bytes.BytesUtils;
import org.apache.parquet.bytes.HeapByteBufferAllocator;
import org.apache.parquet.column.ColumnDescriptor;
import org.apache.parquet.column.Encoding;
import org.apache.parquet.column.ParquetProperties.WriterVersion;
import org.apache.parquet.column.statistics.Statistics;
import org.apache.parquet.column.values.rle.RunLengthBitPackingHybridEncoder;
import org.apache.parquet.example.data.Group;
import org.apache.parquet.hadoop.ParquetFileWriter;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;
import org.apache.parquet.io.LocalInputFile;
import org.apache.parquet.io.LocalOutputFile;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.MessageTypeParser;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Level layouts that parquet-java's record writer never produces but other writers do, written
 * page by page and checked against parquet-java's Group reader; and rows whose values are too large
 * for one batch.
 */
@ExtendWith(NoLeaks.class)
class ParquetLevelLayoutsTest {
  private static final int LEN = 8;

  @TempDir
  Path dir;

  /**
   * DuckDB writes a null {@code FLOAT[n]} array as n levels: the row's (0, 0) then n - 1 filler
   * levels (1, 0) that repeat a list that is null. parquet-java reads the row as null; so must
   * Sluice, through the variable-length path and through a declared shape. A row also spans two
   * pages here (a v1 page may end in the middle of a row).
   */
  @Test
  void fillerLevelsOfNullArraysAndRowsAcrossPagesReadAsParquetJavaReadsThem() throws Exception {
    MessageType schema = MessageTypeParser.parseMessageType("""
        message duckdb_schema {
          optional group emb (LIST) { repeated group list { optional float element; } }
        }""");
    Path f = dir.resolve("duckdb-null-arrays.parquet");
    int rows = 40;
    List<int[]> levels = new ArrayList<>(); // {rep, def}
    List<Float> values = new ArrayList<>();
    for (int r = 0; r < rows; r++) {
      for (int k = 0; k < LEN; k++) {
        int rep = k == 0 ? 0 : 1;
        if (r % 5 == 1) {
          levels.add(new int[] {rep, 0}); // a null array: a filler level per element
        } else if (r % 7 == 3 && k == 2) {
          levels.add(new int[] {rep, 2}); // a null element
        } else {
          levels.add(new int[] {rep, 3});
          values.add(r + k / 10f);
        }
      }
    }
    // pages of 100 and of 220 levels: boundaries in the middle of rows
    writeLists(f, schema, rows, levels, values, 100, 220);
    List<Group> groups = ParquetTestFiles.readGroups(f);
    assertEquals(rows, groups.size());
    assertEquals(0, groups.get(1).getFieldRepetitionCount("emb"), "parquet-java reads the filler row as null");

    ParquetDataset ds = Parquet.open(f);
    List<ColumnPlan> plans = ParquetTestFiles.plans(ds, f);
    for (int batch : new int[] {1, 3, 7, 64}) {
      List<Batch> batches = ds.batches(batch).collectList().block();
      try {
        assertEquals(rows, ParquetTestFiles.assertBatchesMatch(batches, groups, 0, plans, "batches of " + batch));
      } finally {
        batches.forEach(Batch::close);
      }
    }
    assertEquals(ParquetTestFiles.canonicalSha(groups, plans), Checksums.sha256(ds));

    // a declared shape: the filler rows are null rows; a null element is refused as the shape says
    ParquetDataset fixed = Parquet.open(f, ParquetOptions.builder().shape("emb", Shape.of(LEN))
        .nullPolicy(NullPolicy.FILL).build());
    List<Batch> batches = fixed.readBatches(fixed.splits().get(0), 0, 3, 3).collectList().block();
    try {
      Batch b = batches.get(0);
      assertEquals(List.of(true, false, true), List.of(b.column(0).isValid(0), b.column(0).isValid(1),
          b.column(0).isValid(2)));
      assertEquals(2.7f, b.column(0).row(2).getFloat(LEN - 1), 1e-6);
    } finally {
      batches.forEach(Batch::close);
    }
  }

  /**
   * Writes one row group of one list column from explicit (repetition, definition) levels and the
   * present values, as uncompressed v1 pages of the given level counts (the last size repeats).
   */
  private static void writeLists(Path f, MessageType schema, int rows, List<int[]> levels, List<Float> values,
      int... pageSizes) throws IOException {
    ColumnDescriptor col = schema.getColumns().get(0);
    ParquetFileWriter w = new ParquetFileWriter(new LocalOutputFile(f), schema, ParquetFileWriter.Mode.CREATE,
        128L << 20, 0);
    w.start();
    w.startBlock(rows);
    w.startColumn(col, levels.size(), CompressionCodecName.UNCOMPRESSED);
    Statistics<?> stats = Statistics.createStats(col.getPrimitiveType());
    int at = 0;
    int value = 0;
    for (int p = 0; at < levels.size(); p++) {
      int n = Math.min(pageSizes[Math.min(p, pageSizes.length - 1)], levels.size() - at);
      ByteArrayOutputStream page = new ByteArrayOutputStream();
      ByteBuffer plain = ByteBuffer.allocate(4 * n).order(ByteOrder.LITTLE_ENDIAN);
      for (int which = 0; which < 2; which++) {
        int max = which == 0 ? col.getMaxRepetitionLevel() : col.getMaxDefinitionLevel();
        RunLengthBitPackingHybridEncoder enc = new RunLengthBitPackingHybridEncoder(
            BytesUtils.getWidthFromMaxInt(max), 64, 1024, new HeapByteBufferAllocator());
        for (int i = at; i < at + n; i++) {
          enc.writeInt(levels.get(i)[which]);
        }
        byte[] bytes = enc.toBytes().toByteArray();
        page.writeBytes(ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(bytes.length).array());
        page.writeBytes(bytes);
      }
      for (int i = at; i < at + n; i++) {
        if (levels.get(i)[1] == col.getMaxDefinitionLevel()) {
          plain.putFloat(values.get(value++));
        }
      }
      page.write(plain.array(), 0, plain.position());
      byte[] bytes = page.toByteArray();
      w.writeDataPage(n, bytes.length, BytesInput.from(bytes), stats, Encoding.RLE, Encoding.RLE, Encoding.PLAIN);
      at += n;
    }
    w.endColumn();
    w.endBlock();
    w.end(Map.of());
  }

  /**
   * A batch ends early, at a row boundary, once a variable-length column holds the reader's batch
   * value bytes: with a budget of 2 KiB, rows of a map with strings of up to 1 KiB (one of 5 KiB)
   * come in batches shorter than asked, every row exactly once and as parquet-java reads it.
   */
  @Test
  void batchesEndEarlyWhenVariableLengthValuesReachTheBatchBytes() throws Exception {
    MessageType schema = MessageTypeParser.parseMessageType("""
        message schema {
          required int64 id;
          optional group arr (MAP) {
            repeated group key_value { required binary key (STRING); optional int32 value; }
          }
          optional binary s (STRING);
        }""");
    Path f = dir.resolve("big-strings.parquet");
    int rows = 300;
    Random rnd = new Random(11);
    try (var w = ParquetTestFiles.writer(f, schema, Map.of(),
        new Config(CompressionCodecName.SNAPPY, WriterVersion.PARQUET_1_0, true, false, true), 1 << 20, 4096)) {
      for (int r = 0; r < rows; r++) {
        Group g = new org.apache.parquet.example.data.simple.SimpleGroupFactory(schema).newGroup().append("id", (long) r);
        Group m = g.addGroup("arr");
        for (int k = 0; k < r % 3; k++) {
          m.addGroup("key_value").append("key", "k".repeat(r == 100 ? 5000 : rnd.nextInt(1024))).append("value", k);
        }
        if (r % 4 != 0) {
          g.append("s", "s".repeat(rnd.nextInt(300)));
        }
        w.write(g);
      }
    }
    List<Group> groups = ParquetTestFiles.readGroups(f);
    assertEquals(rows, groups.size());
    try (ParquetDataset ds = Parquet.open(f)) {
      List<ColumnPlan> plans = ParquetTestFiles.plans(ds, f);
      ParquetFileInfo info = ParquetFileInfo.open(f.toString(), new LocalInputFile(f));
      BufferPool pool = MemoryManager.shared().pool("test.batch-bytes");
      int row = 0;
      int batches = 0;
      try (RowGroupReader reader = new RowGroupReader(info, 0, plans, ds.schema(), pool, 0, NullPolicy.FILL, false,
          2048)) {
        while (reader.remaining() > 0) {
          try (Batch b = reader.next(64)) {
            assertTrue(b.size() >= 1 && b.size() <= 64);
            row = ParquetTestFiles.assertBatchesMatch(List.of(b), groups, row, plans, "batch " + batches);
            batches++;
          }
        }
      } finally {
        info.release();
      }
      assertEquals(rows, row);
      assertTrue(batches > rows / 64 + 1, "batches ended early: " + batches);
      assertEquals(ParquetTestFiles.canonicalSha(groups, plans), Checksums.sha256(ds));
    }
  }

}
