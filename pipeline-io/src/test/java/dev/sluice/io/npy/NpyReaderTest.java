package dev.sluice.io.npy;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.core.Batch;
import dev.sluice.core.DatasetClosedException;
import dev.sluice.core.DatasetFormatException;
import dev.sluice.core.Datasets;
import dev.sluice.core.MemoryManager;
import dev.sluice.core.Tensor;
import dev.sluice.core.spi.BatchBuilder;
import dev.sluice.core.testing.NoLeaks;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import reactor.test.StepVerifier;

@ExtendWith(NoLeaks.class)
class NpyReaderTest {
  @TempDir Path dir;

  /** A file of {@code rows} int32[3] rows where row r holds (r, 2r, 3r). */
  private Path ints(String name, int rows) {
    ByteBuffer b = ByteBuffer.allocate(rows * 12).order(ByteOrder.LITTLE_ENDIAN);
    for (int r = 0; r < rows; r++) {
      b.putInt(r).putInt(2 * r).putInt(3 * r);
    }
    b.flip();
    Npy.write(Datasets.fromTensors(name, Tensor.wrap(dev.sluice.core.DType.INT32, dev.sluice.core.Shape.of(rows, 3), b)), dir);
    return dir.resolve(name + ".npy");
  }

  @Test
  void tinyChunks_getAndGatherAcrossChunkBoundaries() {
    Path f = ints("v", 1000);
    for (long chunk : new long[] {1, 12, 40, 4096}) {
      try (NpyDataset ds = Npy.open(f, chunk)) {
        assertEquals(1000, ds.size());
        for (long r : new long[] {0, 1, 2, 3, 332, 333, 334, 999}) {
          Tensor t = ds.get(r).tensor("v");
          assertArrayEquals(new int[] {(int) r, (int) (2 * r), (int) (3 * r)},
              new int[] {t.getInt(0), t.getInt(1), t.getInt(2)}, "row " + r + " with chunks of " + chunk);
        }
        long[] inOrder = new long[1000];
        for (int i = 0; i < 1000; i++) {
          inOrder[i] = i;
        }
        NpyFiles.assertGatherMatchesGet(ds, inOrder, 256);
        NpyFiles.assertGatherMatchesGet(ds, NpyFiles.shuffled(1000, chunk), 256);
      }
    }
  }

  @Test
  void fluxIsTheRowsInOrder() {
    Path f = ints("v", 5);
    try (NpyDataset ds = Npy.open(f)) {
      StepVerifier.create(ds.flux().map(e -> e.index() * 100 + e.tensor("v").getInt(1)))
          .expectNext(0L, 102L, 204L, 306L, 408L)
          .verifyComplete();
    }
  }

  @Test
  void sparseFileOverTwoGiB_isMappedInChunksOfWholeRows() throws Exception {
    int rowBytes = 100; // 2^30 is not a multiple of 100, so chunk boundaries fall between rows
    long rows = 22_000_000L; // 2.2 GB of data
    byte[] header = NpyFiles.header(1, NpyFiles.dict("|u1", false, rows, rowBytes));
    Path f = dir.resolve("big.npy");
    long perChunk = Npy.DEFAULT_MAX_CHUNK_BYTES / rowBytes;
    long[] touched = {0, perChunk - 1, perChunk, 2 * perChunk - 1, 2 * perChunk, rows - 1};
    try (RandomAccessFile raf = new RandomAccessFile(f.toFile(), "rw")) {
      raf.write(header);
      raf.setLength(header.length + rows * rowBytes); // sparse: only the touched rows get blocks
      for (long r : touched) {
        raf.seek(header.length + r * rowBytes);
        raf.write(pattern(r, rowBytes));
      }
    }
    try (NpyDataset ds = Npy.open(f)) {
      assertEquals(rows, ds.size());
      for (long r : touched) {
        assertArrayEquals(pattern(r, rowBytes), ds.get(r).tensor("big").toByteArray(), "row " + r);
      }
      try (BatchBuilder bb = BatchBuilder.create(ds.schema(), touched.length, MemoryManager.shared().pool("test.big"))) {
        ds.gather(touched, 0, touched.length, bb);
        try (Batch b = bb.build()) {
          for (int i = 0; i < touched.length; i++) {
            assertArrayEquals(pattern(touched[i], rowBytes), b.column(0).row(i).toByteArray(), "gathered row " + touched[i]);
          }
        }
      }
      // a contiguous run that crosses the first chunk boundary
      long[] run = {perChunk - 1, perChunk};
      NpyFiles.assertGatherMatchesGet(ds, run, 2);
    }
  }

  private static byte[] pattern(long row, int n) {
    byte[] b = new byte[n];
    for (int i = 0; i < n; i++) {
      b[i] = (byte) (row * 31 + i + 1);
    }
    return b;
  }

  @Test
  void readsAfterCloseThrow_viewsTakenBeforeStayValid() {
    Path f = ints("v", 10);
    NpyDataset ds = Npy.open(f);
    Tensor before = ds.get(4).tensor("v");
    ds.close();
    ds.close(); // idempotent
    DatasetClosedException e = assertThrows(DatasetClosedException.class, () -> ds.get(1));
    assertTrue(e.getMessage().contains("already closed") && e.getMessage().contains("v.npy"), e.getMessage());
    try (BatchBuilder bb = BatchBuilder.create(ds.schema(), 1, MemoryManager.shared().pool("test.closed"))) {
      assertThrows(DatasetClosedException.class, () -> ds.gather(new long[] {1}, 0, 1, bb));
    }
    assertEquals(8, before.getInt(1));
  }

  @Test
  void fileTruncatedAfterOpen_isADataErrorNotACrash() throws Exception {
    Path f = ints("v", 50_000); // 600 KB: many pages past the new end
    try (NpyDataset ds = Npy.open(f)) {
      // warm up so that get and gather run compiled, where the fault is reported asynchronously
      for (int i = 0; i < 20_000; i++) {
        assertEquals(3 * (i % 1000), ds.get(i % 1000).tensor("v").getInt(2));
      }
      for (int i = 0; i < 5_000; i++) {
        try (BatchBuilder bb = BatchBuilder.create(ds.schema(), 2, MemoryManager.shared().pool("test.warm"))) {
          ds.gather(new long[] {i, i + 1}, 0, 2, bb);
          bb.build().close();
        }
      }
      try (FileChannel ch = FileChannel.open(f, StandardOpenOption.WRITE)) {
        ch.truncate(200);
      }
      for (long row : new long[] {40_000, 45_000, 49_999}) {
        DatasetFormatException e = assertThrows(DatasetFormatException.class, () -> ds.get(row).tensor("v").getInt(0));
        assertTrue(e.getMessage().contains("v.npy changed while mapped"), e.getMessage());
      }
      // and nothing is left pending for the code that follows
      java.util.List<Object> allocations = new java.util.ArrayList<>();
      for (int i = 0; i < 10_000; i++) {
        allocations.add(new long[64]);
      }
      assertEquals(10_000, allocations.size());
      try (BatchBuilder bb = BatchBuilder.create(ds.schema(), 2, MemoryManager.shared().pool("test.trunc"))) {
        DatasetFormatException g = assertThrows(DatasetFormatException.class,
            () -> ds.gather(new long[] {30_000, 30_001}, 0, 2, bb));
        assertTrue(g.getMessage().contains("changed while mapped"), g.getMessage());
      }
    }
  }

  @Test
  void indexOutOfRangeNamesTheDataset() {
    Path f = ints("v", 3);
    try (NpyDataset ds = Npy.open(f)) {
      IndexOutOfBoundsException e = assertThrows(IndexOutOfBoundsException.class, () -> ds.get(3));
      assertTrue(e.getMessage().contains("v.npy"), e.getMessage());
    }
  }
}
