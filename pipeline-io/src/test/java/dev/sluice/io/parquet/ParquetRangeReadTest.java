package dev.sluice.io.parquet;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.core.Batch;
import dev.sluice.core.DatasetFormatException;
import dev.sluice.core.MemoryManager;
import dev.sluice.core.Split;
import dev.sluice.core.spi.BatchBuilder;
import dev.sluice.core.spi.BufferPool;
import dev.sluice.core.spi.ColumnCursor;
import dev.sluice.core.testing.NoLeaks;
import dev.sluice.io.parquet.ParquetTestFiles.Config;
import dev.sluice.io.parquet.internal.ColumnPlan;
import dev.sluice.io.parquet.internal.ParquetFileInfo;
import dev.sluice.io.parquet.internal.WindowedInputFile;
import java.io.RandomAccessFile;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.apache.parquet.column.ParquetProperties.WriterVersion;
import org.apache.parquet.example.data.Group;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.hadoop.metadata.BlockMetaData;
import org.apache.parquet.hadoop.metadata.ColumnChunkMetaData;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;
import org.apache.parquet.internal.column.columnindex.OffsetIndex;
import org.apache.parquet.io.LocalInputFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Reads of part of a row group ({@code readBatches(split, from, to, n)}, {@code openColumns(split,
 * from, to)}) deliver exactly the rows of the same range of a whole read, with and without an
 * offset index, and do not read the pages before the range.
 */
@ExtendWith(NoLeaks.class)
class ParquetRangeReadTest {
  private static final int ROWS = 600;
  private static final int PAGE_ROWS = 50;

  @TempDir
  Path dir;

  /** Every type and layout of the wide schema, v1 and v2 pages, dictionary and plain, nulls. */
  private static List<Config> configs() {
    return List.of(
        new Config(CompressionCodecName.SNAPPY, WriterVersion.PARQUET_1_0, true, false, true),
        new Config(CompressionCodecName.UNCOMPRESSED, WriterVersion.PARQUET_1_0, false, true, true),
        new Config(CompressionCodecName.ZSTD, WriterVersion.PARQUET_2_0, true, false, true),
        new Config(CompressionCodecName.GZIP, WriterVersion.PARQUET_2_0, false, false, true));
  }

  /** Ranges at page boundaries, mid-page, single rows, the last row, empty ranges, and a few drawn at random. */
  private static List<long[]> ranges(long rows, long seed) {
    List<long[]> out = new ArrayList<>(List.of(
        new long[] {0, 1}, new long[] {PAGE_ROWS - 1, PAGE_ROWS + 1}, new long[] {PAGE_ROWS, 2 * PAGE_ROWS},
        new long[] {PAGE_ROWS, PAGE_ROWS + 1}, new long[] {37, 151}, new long[] {123, rows - 1},
        new long[] {rows - 1, rows}, new long[] {rows - 1, Long.MAX_VALUE}, new long[] {rows, rows},
        new long[] {100, 100}, new long[] {3 * PAGE_ROWS + 7, 4 * PAGE_ROWS}, new long[] {0, rows}));
    out.replaceAll(r -> new long[] {Math.min(r[0], Math.min(r[1], rows)),
        r[1] == Long.MAX_VALUE ? r[1] : Math.min(r[1], rows)});
    Random rnd = new Random(seed);
    for (int i = 0; i < 4; i++) {
      long a = rnd.nextInt((int) rows);
      long b = a + rnd.nextInt((int) (rows - a) + 1);
      out.add(new long[] {a, b});
    }
    return out;
  }

  @Test
  void rangesOfOneLargeRowGroupDeliverTheRowsOfAWholeReadWithAndWithoutAnOffsetIndex() throws Exception {
    long seed = 21;
    for (Config c : configs()) {
      Path f = dir.resolve("one-" + seed + ".parquet");
      ParquetTestFiles.write(f, ParquetTestFiles.WIDE, ParquetTestFiles.WIDE_META, c, ROWS, ROWS, PAGE_ROWS, seed);
      List<Group> groups = ParquetTestFiles.readGroups(f);
      for (boolean index : new boolean[] {true, false}) {
        try (ParquetDataset ds = open(f, index, ParquetOptions.builder().build())) {
          assertEquals(1, ds.splits().size());
          assertRangesMatch(ds, f, groups, c + (index ? " with" : " without") + " offset index", seed);
        }
      }
      seed++;
    }
  }

  @Test
  void rangesOfSeveralRowGroupsCarryTheirGlobalIndices() throws Exception {
    Path f = dir.resolve("three.parquet");
    Config c = configs().get(2);
    ParquetTestFiles.write(f, ParquetTestFiles.WIDE, ParquetTestFiles.WIDE_META, c, ROWS, 250, 30, 7);
    List<Group> groups = ParquetTestFiles.readGroups(f);
    for (boolean index : new boolean[] {true, false}) {
      try (ParquetDataset ds = open(f, index, ParquetOptions.builder().build())) {
        assertEquals(3, ds.splits().size());
        assertRangesMatch(ds, f, groups, "three row groups" + (index ? "" : " without offset index"), 7);
      }
    }
  }

  private void assertRangesMatch(ParquetDataset ds, Path f, List<Group> groups, String what, long seed)
      throws Exception {
    List<ColumnPlan> plans = ParquetTestFiles.plans(ds, f);
    BufferPool pool = MemoryManager.shared().pool("test.range");
    long first = 0;
    for (Split s : ds.splits()) {
      List<long[]> ranges = ranges(s.rowCount(), seed++);
      try (ParquetDataset indexed = Parquet.open(f)) { // exactly at, before and after page starts
        long[] starts = indexed.blockStarts(indexed.splits().get(ds.splits().indexOf(s)));
        for (int k = 1; k < Math.min(4, starts.length); k++) {
          ranges.add(new long[] {starts[k], k + 1 < starts.length ? starts[k + 1] : s.rowCount()});
          ranges.add(new long[] {starts[k] - 1, starts[k] + 1});
          ranges.add(new long[] {starts[k - 1] + 1, starts[k]});
        }
      }
      for (long[] r : ranges) {
        long end = Math.min(r[1], s.rowCount());
        String range = what + " " + s.id() + " [" + r[0] + ", " + r[1] + ")";
        List<Batch> batches = ds.readBatches(s, r[0], r[1], 37).collectList().block();
        try {
          assertEquals(first + end, ParquetTestFiles.assertBatchesMatch(batches, groups, (int) (first + r[0]), plans,
              range), range + ": rows delivered");
        } finally {
          batches.forEach(Batch::close);
        }
        List<Batch> columns = new ArrayList<>();
        try (ColumnCursor cursor = ds.openColumns(s, r[0], r[1])) {
          assertEquals(Math.max(0, end - r[0]), cursor.remaining(), range);
          while (cursor.remaining() > 0) {
            int n = (int) Math.min(29, cursor.remaining());
            try (BatchBuilder b = BatchBuilder.create(ds.schema(), n, pool)) {
              for (int k = 0; k < ds.schema().size(); k++) {
                cursor.decode(k, b.column(k), 0, n);
              }
              b.commitRange(cursor.index(), n);
              cursor.advance(n);
              columns.add(b.build());
            }
          }
          assertEquals(first + end, ParquetTestFiles.assertBatchesMatch(columns, groups, (int) (first + r[0]), plans,
              range + " by columns"), range + ": rows delivered by columns");
        } finally {
          columns.forEach(Batch::close);
        }
      }
      first += s.rowCount();
    }
    assertEquals(0, pool.outstandingBytes());
  }

  /**
   * A page before the range whose bytes are corrupt fails a whole read with a checksum mismatch
   * but not a read of a later range: the range read neither reads nor decompresses it.
   */
  @Test
  void aRangeReadDoesNotReadThePagesBeforeIt() throws Exception {
    Path f = dir.resolve("corrupt.parquet");
    Config c = new Config(CompressionCodecName.SNAPPY, WriterVersion.PARQUET_1_0, false, false, true);
    ParquetTestFiles.write(f, ParquetTestFiles.WIDE, ParquetTestFiles.WIDE_META, c, ROWS, ROWS, PAGE_ROWS, 3);
    List<Group> groups = ParquetTestFiles.readGroups(f);
    List<String> columns = List.of("i32", "s", "v", "bare");
    // the last bytes of the second data page of each of those columns (page bodies, not headers)
    long[] i32Page1 = new long[2];
    try (ParquetFileReader r = ParquetFileReader.open(new LocalInputFile(f));
        RandomAccessFile raf = new RandomAccessFile(f.toFile(), "rw")) {
      BlockMetaData block = r.getFooter().getBlocks().get(0);
      for (ColumnChunkMetaData m : block.getColumns()) {
        if (columns.contains(m.getPath().toArray()[0])) {
          OffsetIndex oi = r.readOffsetIndex(m);
          assertTrue(oi.getPageCount() > 4, m.getPath() + " has several pages");
          assertTrue(oi.getFirstRowIndex(2) <= 3 * PAGE_ROWS, m.getPath() + " page 2 starts by row 150");
          if (m.getPath().toDotString().equals("i32")) {
            i32Page1[0] = oi.getFirstRowIndex(1);
            i32Page1[1] = oi.getFirstRowIndex(2);
          }
          long endOfPage = oi.getOffset(1) + oi.getCompressedPageSize(1);
          raf.seek(endOfPage - 4);
          raf.write(new byte[] {0x5A, 0x5A, 0x5A, 0x5A});
        }
      }
    }
    for (boolean index : new boolean[] {true, false}) {
      // without an offset index, the rows of a repeated column's v1 pages are known only from their levels
      List<String> read = index ? columns : List.of("i32", "s");
      ParquetOptions options = ParquetOptions.builder().columns(read.toArray(String[]::new))
          .pageChecksums(ParquetOptions.PageChecksums.VERIFY).build();
      try (ParquetDataset ds = open(f, index, options)) {
        Split s = ds.splits().get(0);
        DatasetFormatException whole = assertThrows(DatasetFormatException.class,
            () -> ds.readBatches(s, 0, Long.MAX_VALUE, 64).doOnNext(Batch::close).blockLast());
        assertTrue(whole.getMessage().contains("checksum"), whole.getMessage());
        List<Batch> batches = ds.readBatches(s, 3 * PAGE_ROWS, 5 * PAGE_ROWS + 3, 64).collectList().block();
        try {
          assertEquals(5 * PAGE_ROWS + 3, ParquetTestFiles.assertBatchesMatch(batches, groups, 3 * PAGE_ROWS,
              ParquetTestFiles.plans(ds, f), "after the corrupt page" + (index ? "" : " without offset index")));
        } finally {
          batches.forEach(Batch::close);
        }
        try (ColumnCursor cursor = ds.openColumns(s, 3 * PAGE_ROWS, ROWS)) {
          assertEquals(ROWS - 3 * PAGE_ROWS, cursor.remaining());
        }
        DatasetFormatException covering = assertThrows(DatasetFormatException.class,
            () -> ds.readBatches(s, i32Page1[0] + 1, i32Page1[1], 64).doOnNext(Batch::close).blockLast());
        assertTrue(covering.getMessage().contains("checksum") && covering.getMessage().contains("row group 0"),
            covering.getMessage());
      }
    }
    try (ParquetDataset nested = open(f, false, ParquetOptions.builder().columns("v")
        .pageChecksums(ParquetOptions.PageChecksums.VERIFY).build())) {
      DatasetFormatException e = assertThrows(DatasetFormatException.class, () -> nested.readBatches(
          nested.splits().get(0), 3 * PAGE_ROWS, 4 * PAGE_ROWS, 64).doOnNext(Batch::close).blockLast());
      assertTrue(e.getMessage().contains("checksum"), "read from the chunk's start: " + e.getMessage());
    }
  }

  @Test
  void blockStartsAreThePageStartsOfTheLargestProjectedColumnOrNullWithoutAnOffsetIndex() throws Exception {
    Path f = dir.resolve("starts.parquet");
    Config c = configs().get(0);
    ParquetTestFiles.write(f, ParquetTestFiles.WIDE, ParquetTestFiles.WIDE_META, c, ROWS, 250, 40, 5);
    List<String> columns = List.of("i32", "s", "x");
    try (ParquetFileReader r = ParquetFileReader.open(new LocalInputFile(f));
        ParquetDataset ds = open(f, true, ParquetOptions.builder().columns(columns.toArray(String[]::new)).build());
        ParquetDataset narrow = open(f, true, ParquetOptions.builder().columns("i32").build());
        ParquetDataset none = open(f, false, ParquetOptions.builder().build())) {
      int pages = 0;
      for (int g = 0; g < ds.splits().size(); g++) {
        BlockMetaData block = r.getFooter().getBlocks().get(g);
        ColumnChunkMetaData largest = null;
        ColumnChunkMetaData i32 = null;
        for (ColumnChunkMetaData m : block.getColumns()) {
          String top = m.getPath().toArray()[0];
          if (columns.contains(top)
              && (largest == null || m.getTotalUncompressedSize() > largest.getTotalUncompressedSize())) {
            largest = m;
          }
          if (top.equals("i32")) {
            i32 = m;
          }
        }
        long[] starts = ds.blockStarts(ds.splits().get(g));
        assertArrayEquals(firstRows(r.readOffsetIndex(largest)), starts, "row group " + g);
        assertEquals(0, starts[0]);
        for (int i = 1; i < starts.length; i++) {
          assertTrue(starts[i - 1] < starts[i], "row group " + g + ": ascending");
        }
        pages += starts.length;
        assertArrayEquals(firstRows(r.readOffsetIndex(i32)), narrow.blockStarts(narrow.splits().get(g)));
        assertNull(none.blockStarts(none.splits().get(g)), "no offset index");
      }
      assertTrue(pages > 2 * ds.splits().size(), pages + " pages");
      assertThrows(IllegalArgumentException.class, () -> ds.blockStarts(new Split("other#rg0", 5)));
    }
  }

  /** An offset index that does not describe its column chunk (another chunk's) is not trusted: the page headers are. */
  @Test
  void anOffsetIndexThatDoesNotFitItsChunkIsIgnored() throws Exception {
    Path f = dir.resolve("swapped.parquet");
    Config c = configs().get(0);
    ParquetTestFiles.write(f, ParquetTestFiles.WIDE, ParquetTestFiles.WIDE_META, c, ROWS, ROWS, PAGE_ROWS, 9);
    List<Group> groups = ParquetTestFiles.readGroups(f);
    ParquetFileInfo info = ParquetFileInfo.open(f.toString(), new WindowedInputFile(f));
    List<ColumnChunkMetaData> chunks = info.rowGroups().get(0).getColumns();
    var first = chunks.get(0).getOffsetIndexReference();
    for (int i = 0; i < chunks.size(); i++) { // each chunk gets the next one's index
      chunks.get(i).setOffsetIndexReference(i + 1 < chunks.size() ? chunks.get(i + 1).getOffsetIndexReference() : first);
    }
    try (ParquetDataset ds = new ParquetDataset(List.of(info), ParquetOptions.builder().build())) {
      Split s = ds.splits().get(0);
      List<Batch> batches = ds.readBatches(s, 3 * PAGE_ROWS + 7, 5 * PAGE_ROWS, 40).collectList().block();
      try {
        assertEquals(5 * PAGE_ROWS, ParquetTestFiles.assertBatchesMatch(batches, groups, 3 * PAGE_ROWS + 7,
            ParquetTestFiles.plans(ds, f), "swapped offset indexes"));
      } finally {
        batches.forEach(Batch::close);
      }
    }
  }

  private static long[] firstRows(OffsetIndex oi) {
    long[] out = new long[oi.getPageCount()];
    for (int i = 0; i < out.length; i++) {
      out[i] = oi.getFirstRowIndex(i);
    }
    return out;
  }

  /** A dataset of {@code f}; without {@code index} its footer is read as if the file had no offset index. */
  private static ParquetDataset open(Path f, boolean index, ParquetOptions options) {
    if (index) {
      return Parquet.open(f, options);
    }
    ParquetFileInfo info = ParquetFileInfo.open(f.toString(), new WindowedInputFile(f));
    for (BlockMetaData b : info.rowGroups()) {
      for (ColumnChunkMetaData m : b.getColumns()) {
        m.setOffsetIndexReference(null);
        m.setColumnIndexReference(null);
      }
    }
    return new ParquetDataset(List.of(info), options);
  }
}
