package dev.sluice.io.parquet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.core.Batch;
import dev.sluice.core.DType;
import dev.sluice.core.Example;
import dev.sluice.core.MemoryManager;
import dev.sluice.core.Shape;
import dev.sluice.core.Split;
import dev.sluice.core.TensorSpec;
import dev.sluice.core.spi.BatchBuilder;
import dev.sluice.core.spi.BufferPool;
import dev.sluice.core.spi.ColumnCursor;
import dev.sluice.core.testing.NoLeaks;
import dev.sluice.io.parquet.ParquetTestFiles.Config;
import dev.sluice.io.parquet.internal.ColumnPlan;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.parquet.example.data.Group;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** Reads files written by parquet-java in many shapes and compares with parquet-java's Group reader. */
@ExtendWith(NoLeaks.class)
class ParquetReadTest {
  private static final int ROWS = 700;

  @TempDir
  Path dir;

  @Test
  void everyTypeAndLayoutMatchesTheGroupReaderPairwiseOverCodecsPagesAndEncodings() throws Exception {
    long seed = 1;
    for (Config c : ParquetTestFiles.pairwise()) {
      Path f = dir.resolve("wide-" + seed + ".parquet");
      ParquetTestFiles.write(f, ParquetTestFiles.WIDE, ParquetTestFiles.WIDE_META, c, ROWS, 250, 60, seed++);
      List<Group> groups = ParquetTestFiles.readGroups(f);
      ParquetDataset ds = Parquet.open(f, ParquetOptions.builder()
          .localFiles(seed % 2 == 0 ? ParquetOptions.LocalFiles.MAPPED : ParquetOptions.LocalFiles.STREAM).build());
      List<ColumnPlan> plans = ParquetTestFiles.plans(ds, f);
      assertEquals(3, ds.splits().size(), c + ": row groups");
      assertEquals(ROWS, ds.rowCount());
      // columnar path, batch size that does not divide the row groups
      int row = 0;
      for (Split s : ds.splits()) {
        List<Batch> batches = ds.readBatches(s, 0, Long.MAX_VALUE, 97).collectList().block();
        try {
          row = ParquetTestFiles.assertBatchesMatch(batches, groups, row, plans, c + " " + s.id());
        } finally {
          batches.forEach(Batch::close);
        }
      }
      assertEquals(ROWS, row);
      // as the window shuffle reads: windows across row groups, a field at a time, gathered
      List<Batch> windows = ParquetTestFiles.gatherByColumns(ds, 113, false);
      try {
        assertEquals(ROWS, ParquetTestFiles.assertBatchesMatch(windows, groups, 0, plans, c + " by columns"));
      } finally {
        windows.forEach(Batch::close);
      }
      // row path
      List<Example> examples = ds.flux().collectList().block();
      assertEquals(ROWS, examples.size());
      for (int r = 0; r < ROWS; r++) {
        assertEquals(r, examples.get(r).index());
        for (int k = 0; k < plans.size(); k++) {
          TensorSpec spec = ds.schema().field(k);
          assertEquals(ParquetTestFiles.expected(groups.get(r), plans.get(k)),
              ParquetTestFiles.actual(examples.get(r), spec), c + " row path: row " + r + ", column " + spec.name());
        }
      }
    }
  }

  @Test
  void schemaNamesTypesAndShapes() throws Exception {
    Path f = dir.resolve("wide.parquet");
    ParquetTestFiles.write(f, ParquetTestFiles.WIDE, ParquetTestFiles.WIDE_META, ParquetTestFiles.pairwise().get(0),
        10, 100, 100, 7);
    ParquetDataset ds = Parquet.open(f);
    var s = ds.schema();
    assertEquals(new TensorSpec("i32", DType.INT32, Shape.scalar(), false), s.field("i32"));
    assertEquals(DType.INT8, s.field("i8").dtype());
    assertEquals(DType.UINT8, s.field("u8").dtype());
    assertEquals(DType.UINT64, s.field("u64").dtype());
    assertEquals(DType.FLOAT16, s.field("half").dtype());
    assertEquals(DType.FLOAT64, s.field("dec32").dtype());
    assertEquals(DType.FLOAT64, s.field("decbin").dtype());
    assertEquals(DType.INT32, s.field("day").dtype());
    assertEquals(DType.INT64, s.field("tsm").dtype());
    assertEquals(DType.INT64, s.field("legacy_ts").dtype());
    assertEquals(DType.STRING, s.field("s").dtype());
    assertEquals(DType.BYTES, s.field("raw").dtype());
    assertEquals(DType.BYTES, s.field("fixed").dtype());
    assertTrue(s.contains("st.a") && s.contains("st.inner.b"));
    assertEquals(new TensorSpec("x", DType.FLOAT32, Shape.of(2, 2), true), s.field("x"));
    assertEquals(new TensorSpec("v", DType.INT64, Shape.of(-1), true, 0b1), s.field("v"));
    assertEquals(new TensorSpec("legacy", DType.INT32, Shape.of(-1), true), s.field("legacy"));
    assertEquals(new TensorSpec("bare", DType.FLOAT64, Shape.of(-1), false), s.field("bare"));
    assertEquals(new TensorSpec("m.key", DType.INT32, Shape.of(-1), true), s.field("m.key"));
    assertEquals(new TensorSpec("m.value", DType.FLOAT64, Shape.of(-1), true, 0b1), s.field("m.value"));
    // a null struct element and a null field of a present one are both null elements
    assertEquals(new TensorSpec("ls.p", DType.INT32, Shape.of(-1), true, 0b1), s.field("ls.p"));
    assertEquals(new TensorSpec("ls.q", DType.FLOAT32, Shape.of(-1), true, 0b1), s.field("ls.q"));
  }

  @Test
  void projectionReadsOnlyTheNamedColumnsInOrder() throws Exception {
    Path f = dir.resolve("p.parquet");
    Config c = ParquetTestFiles.pairwise().get(3);
    ParquetTestFiles.write(f, ParquetTestFiles.WIDE, ParquetTestFiles.WIDE_META, c, 300, 100, 50, 3);
    List<Group> groups = ParquetTestFiles.readGroups(f);
    ParquetDataset ds = Parquet.open(f, ParquetOptions.builder().columns("x", "st", "s").build());
    assertEquals(List.of("x", "st.a", "st.inner.b", "s"),
        ds.schema().fields().stream().map(TensorSpec::name).toList());
    List<ColumnPlan> plans = ParquetTestFiles.plans(ds, f);
    List<Batch> batches = ds.batches(64).collectList().block();
    try {
      assertEquals(300, ParquetTestFiles.assertBatchesMatch(batches, groups, 0, plans, "projection"));
    } finally {
      batches.forEach(Batch::close);
    }
  }

  @Test
  void rowRangesOfASplitStartAndEndWhereAsked() throws Exception {
    Path f = dir.resolve("r.parquet");
    Config c = ParquetTestFiles.pairwise().get(1);
    ParquetTestFiles.write(f, ParquetTestFiles.WIDE, ParquetTestFiles.WIDE_META, c, 400, 200, 30, 5);
    List<Group> groups = ParquetTestFiles.readGroups(f);
    ParquetDataset ds = Parquet.open(f);
    List<ColumnPlan> plans = ParquetTestFiles.plans(ds, f);
    Split second = ds.splits().get(1);
    List<Batch> batches = ds.readBatches(second, 37, 151, 50).collectList().block();
    try {
      assertEquals(List.of(50, 50, 14), batches.stream().map(Batch::size).toList());
      assertEquals(200 + 151, ParquetTestFiles.assertBatchesMatch(batches, groups, 200 + 37, plans, "range"));
    } finally {
      batches.forEach(Batch::close);
    }
    List<Example> rows = ds.read(second, 199, Long.MAX_VALUE).collectList().block();
    assertEquals(1, rows.size());
    assertEquals(399, rows.get(0).index());
  }

  /**
   * A cursor over a row range decodes, one field at a time and the fields in any order, what
   * {@code readBatches} decodes, for every type, layout, codec and encoding; its contract (each
   * field once per step, no more rows than are left) is enforced naming the file and field.
   */
  @Test
  void aColumnCursorDecodesARangeOneFieldAtATime() throws Exception {
    BufferPool pool = MemoryManager.shared().pool("test.cursor");
    long seed = 11;
    for (Config c : ParquetTestFiles.pairwise().subList(0, 6)) {
      Path f = dir.resolve("cursor-" + seed + ".parquet");
      ParquetTestFiles.write(f, ParquetTestFiles.WIDE, ParquetTestFiles.WIDE_META, c, 400, 200, 30, seed++);
      List<Group> groups = ParquetTestFiles.readGroups(f);
      try (ParquetDataset ds = Parquet.open(f)) {
        assertTrue(ds.decodesColumns());
        List<ColumnPlan> plans = ParquetTestFiles.plans(ds, f);
        Split second = ds.splits().get(1);
        List<Batch> batches = new ArrayList<>();
        try (ColumnCursor cursor = ds.openColumns(second, 37, 151)) {
          assertEquals(114, cursor.remaining());
          assertEquals(237, cursor.index());
          while (cursor.remaining() > 0) {
            int n = (int) Math.min(50, cursor.remaining());
            try (BatchBuilder b = BatchBuilder.create(ds.schema(), n, pool)) {
              for (int k = ds.schema().size() - 1; k >= 0; k--) { // any order of fields
                cursor.decode(k, b.column(k), 0, n);
              }
              b.commitRange(cursor.index(), n);
              cursor.advance(n);
              batches.add(b.build());
            }
          }
          assertEquals(200 + 151, ParquetTestFiles.assertBatchesMatch(batches, groups, 200 + 37, plans, c + " cursor"));
        } finally {
          batches.forEach(Batch::close);
        }
        try (ColumnCursor cursor = ds.openColumns(second, 190, Long.MAX_VALUE);
            BatchBuilder b = BatchBuilder.create(ds.schema(), 20, pool)) {
          assertEquals(10, cursor.remaining());
          cursor.decode(0, b.column(0), 0, 4);
          IllegalStateException twice = assertThrows(IllegalStateException.class, () -> cursor.decode(0, b.column(0), 4, 4));
          assertTrue(twice.getMessage().contains(ds.schema().field(0).name()) && twice.getMessage().contains(f.getFileName().toString()),
              twice.getMessage());
          IllegalStateException early = assertThrows(IllegalStateException.class, () -> cursor.advance(4));
          assertTrue(early.getMessage().contains(ds.schema().field(1).name()), early.getMessage());
          IllegalArgumentException tooMany = assertThrows(IllegalArgumentException.class,
              () -> cursor.decode(1, b.column(1), 0, 11));
          assertTrue(tooMany.getMessage().contains("10 are left"), tooMany.getMessage());
        }
        ds.close();
        assertThrows(dev.sluice.core.DatasetClosedException.class, () -> ds.openColumns(second, 0, 10));
      }
    }
    assertEquals(0, pool.outstandingBytes());
  }

  @Test
  void aClosedDatasetRefusesNewReadsNamingTheFileAndAPassUnderWayFinishes() throws Exception {
    Path f = dir.resolve("c.parquet");
    ParquetTestFiles.write(f, ParquetTestFiles.WIDE, ParquetTestFiles.WIDE_META, ParquetTestFiles.pairwise().get(2),
        200, 50, 25, 9);
    for (ParquetOptions.LocalFiles mode : ParquetOptions.LocalFiles.values()) {
      ParquetDataset ds = Parquet.open(f, ParquetOptions.builder().localFiles(mode).build());
      Split first = ds.splits().get(0);
      var rows = ds.flux().toIterable(1).iterator();
      rows.next();
      reactor.core.publisher.Flux<Batch> running = ds.batches(40);
      List<Batch> started = new ArrayList<>();
      var it = running.toIterable(1).iterator();
      started.add(it.next());
      ds.close();
      ds.close(); // idempotent
      it.forEachRemaining(started::add);
      int n = 1;
      for (; rows.hasNext(); rows.next()) {
        n++;
      }
      assertEquals(200, n, "the row pass under way finishes");
      assertEquals(200, started.stream().mapToInt(Batch::size).sum(), "the pass under way finishes");
      started.forEach(Batch::close);
      for (Runnable read : List.<Runnable>of(() -> ds.batches(4), () -> ds.flux(), () -> ds.read(first, 0, 10),
          () -> ds.readBatches(first, 0, 10, 4))) {
        dev.sluice.core.DatasetClosedException e =
            org.junit.jupiter.api.Assertions.assertThrows(dev.sluice.core.DatasetClosedException.class, read::run);
        assertEquals("already closed: " + f, e.getMessage());
      }
      assertTrue(ds.isClosed());
    }
  }

  @Test
  void parallelDecodeKeepsOrderAcrossFilesDirectoriesAndGlobs() throws Exception {
    Config c = ParquetTestFiles.pairwise().get(4);
    List<Group> all = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      Path f = dir.resolve("part-" + i + ".parquet");
      ParquetTestFiles.write(f, ParquetTestFiles.WIDE, ParquetTestFiles.WIDE_META, c, 150 + i, 40, 20, 10 + i);
      all.addAll(ParquetTestFiles.readGroups(f));
    }
    for (ParquetDataset ds : List.of(
        Parquet.open(dir, ParquetOptions.builder().decodeParallelism(3).build()),
        Parquet.open(dir.resolve("part-*.parquet"), ParquetOptions.builder().decodeParallelism(2)
            .localFiles(ParquetOptions.LocalFiles.MAPPED).build()),
        Parquet.open(dir.toUri().toString(), ParquetOptions.builder().decodeParallelism(2).build()))) {
      assertEquals(3, ds.files().size());
      assertEquals(all.size(), ds.rowCount());
      assertEquals(12, ds.splits().size());
      List<ColumnPlan> plans = ParquetTestFiles.plans(ds, dir.resolve("part-0.parquet"));
      List<Batch> batches = ds.batches(33).collectList().block();
      try {
        assertEquals(all.size(), ParquetTestFiles.assertBatchesMatch(batches, all, 0, plans, ds.files().get(0)));
      } finally {
        batches.forEach(Batch::close);
      }
    }
  }

  /**
   * Spark writes a timestamp beyond the int96 nanosecond range (year 290000) with a Julian day
   * whose int32 is negative; Spark and parquet-java read that day signed, and so does Sluice (the
   * nanoseconds then wrap as any int64 arithmetic would).
   */
  @Test
  void int96DaysAreSignedAsSparkAndParquetJavaReadThem() throws Exception {
    org.apache.parquet.schema.MessageType schema = org.apache.parquet.schema.MessageTypeParser.parseMessageType(
        "message spark_schema { optional int96 a; }");
    Path f = dir.resolve("int96.parquet");
    org.apache.parquet.example.data.simple.SimpleGroupFactory groups =
        new org.apache.parquet.example.data.simple.SimpleGroupFactory(schema);
    int[] days = {2_460_311, 0xF9B0ABA8, 5_373_484, -1, 0};
    long[] nanos = {45_296_123_456_000L, -7_605_000_000_000L, 82_800_000_000_000L, 0, 1};
    try (var w = ParquetTestFiles.writer(f, schema, java.util.Map.of(), ParquetTestFiles.pairwise().get(0), 100, 100)) {
      for (int i = 0; i < days.length; i++) {
        w.write(groups.newGroup().append("a", new org.apache.parquet.example.data.simple.NanoTime(days[i], nanos[i])));
      }
    }
    List<Group> expected = ParquetTestFiles.readGroups(f);
    ParquetDataset ds = Parquet.open(f);
    List<ColumnPlan> plans = ParquetTestFiles.plans(ds, f);
    List<Batch> batches = ds.batches(10).collectList().block();
    try {
      assertEquals(days.length, ParquetTestFiles.assertBatchesMatch(batches, expected, 0, plans, "int96"));
      assertEquals((0xF9B0ABA8 - 2_440_588L) * 86_400_000_000_000L - 7_605_000_000_000L,
          batches.get(0).column(0).row(1).getLong(0));
    } finally {
      batches.forEach(Batch::close);
    }
  }
}
