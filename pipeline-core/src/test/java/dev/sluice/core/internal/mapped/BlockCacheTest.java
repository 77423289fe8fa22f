package dev.sluice.core.internal.mapped;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.core.DatasetClosedException;
import dev.sluice.core.DatasetFormatException;
import dev.sluice.core.MemoryManager;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The block cache of positioned reads: a shuffled gather reads each block of a file within the
 * budget once and copies the right rows; a file over the budget is read one run at a time; the
 * budget is shared; blocks cut short by a shrinking file are not kept; close releases everything.
 */
class BlockCacheTest {
  private static final int HEADER = 128;
  private static final int ROW = 24; // 1 MiB is not a multiple: rows cross block boundaries
  private static final int ROWS = 100_000;
  private static final int BLOCK = 1 << 20;

  @AfterEach
  void nothingHeld() {
    assertEquals(0, BlockCache.heldBytes());
    MemoryManager.shared().checkNoOutstanding();
  }

  /** A file of {@code HEADER + ROWS * ROW} bytes, seeded. */
  private static byte[] file(long seed) {
    byte[] b = new byte[HEADER + ROWS * ROW];
    new Random(seed).nextBytes(b);
    return b;
  }

  /** Positioned reads of {@code data} (which may be shorter than the file was), counted. */
  private static PositionedReader reader(byte[] data, AtomicInteger calls) {
    return (dst, position) -> {
      calls.incrementAndGet();
      if (position >= data.length) {
        return -1;
      }
      int n = (int) Math.min(dst.remaining(), data.length - position);
      dst.put(data, (int) position, n);
      return n;
    };
  }

  private static long[] shuffled(long seed) {
    long[] a = new long[ROWS];
    for (int i = 0; i < ROWS; i++) {
      a[i] = i;
    }
    Random r = new Random(seed);
    for (int i = a.length - 1; i > 0; i--) {
      int j = r.nextInt(i + 1);
      long t = a[i];
      a[i] = a[j];
      a[j] = t;
    }
    return a;
  }

  /** Gathers {@code indices[from, to)} in batches of 256 and checks every row against {@code data}. */
  private static void gatherAndCheck(MappedRows rows, byte[] data, long[] indices, int from, int to) {
    ByteBuffer dst = ByteBuffer.allocateDirect(256 * ROW);
    byte[] got = new byte[ROW];
    byte[] want = new byte[ROW];
    for (int at = from; at < to; at += 256) {
      int n = Math.min(256, to - at);
      rows.copy(indices, at, n, 0, dst, 0, false);
      for (int r = 0; r < n; r++) {
        dst.get(r * ROW, got);
        System.arraycopy(data, HEADER + (int) indices[at + r] * ROW, want, 0, ROW);
        if (!java.util.Arrays.equals(want, got)) {
          throw new AssertionError("row " + indices[at + r] + " gathered wrong bytes");
        }
      }
    }
  }

  private static MappedRows rows(PositionedReader reader) {
    return new MappedRows("f", MappedChunks.positioned("f", reader, HEADER, (long) ROWS * ROW, ROW, Integer.MAX_VALUE),
        ROWS, ROW);
  }

  @Test
  void aShuffledGatherReadsEachBlockOnceAndCopiesTheRightRows() {
    byte[] data = file(1);
    AtomicInteger calls = new AtomicInteger();
    try (BlockCache cache = BlockCache.over(reader(data, calls), data.length, BLOCK, 64L << 20)) {
      assertTrue(cache.isCaching());
      gatherAndCheck(rows(cache), data, shuffled(2), 0, ROWS);
      int blocks = (data.length + BLOCK - 1) / BLOCK;
      assertThat(calls.get()).as("positioned reads for %d shuffled rows", ROWS).isEqualTo(blocks);
      assertEquals(data.length, BlockCache.heldBytes());
      assertThat(MemoryManager.shared().outstandingBytesByStage()).containsKey("read-cache");
    }
  }

  @Test
  void aFileLargerThanTheBudgetIsReadOneRunAtATimeAndNothingIsHeld() {
    byte[] data = file(3);
    AtomicInteger calls = new AtomicInteger();
    try (BlockCache cache = BlockCache.over(reader(data, calls), data.length, BLOCK, data.length - 1)) {
      assertFalse(cache.isCaching());
      long[] idx = shuffled(4);
      gatherAndCheck(rows(cache), data, idx, 0, 1024);
      int runs = 0;
      for (int i = 0; i < 1024; i++) {
        if (i % 256 == 0 || idx[i] != idx[i - 1] + 1) {
          runs++;
        }
      }
      assertEquals(runs, calls.get());
      assertEquals(0, BlockCache.heldBytes());
    }
  }

  @Test
  void theBudgetIsSharedByEveryOpenFileAndRowsThatDoNotFitAreReadFromTheFile() {
    byte[] a = file(5);
    byte[] b = file(6);
    long budget = 3L * BLOCK;
    AtomicInteger callsB = new AtomicInteger();
    try (BlockCache ca = BlockCache.over(reader(a, new AtomicInteger()), a.length, BLOCK, budget);
        BlockCache cb = BlockCache.over(reader(b, callsB), b.length, BLOCK, budget)) {
      gatherAndCheck(rows(ca), a, shuffled(7), 0, ROWS);
      assertEquals(a.length, BlockCache.heldBytes());
      gatherAndCheck(rows(cb), b, shuffled(8), 0, ROWS);
      assertThat(BlockCache.heldBytes()).isLessThanOrEqualTo(budget);
      assertThat(callsB.get()).as("rows of the second file beyond the budget are read from it").isGreaterThan(3);
    }
  }

  @Test
  void concurrentGathersAgreeAndAReadAfterCloseIsAClosedError() throws Exception {
    byte[] data = file(9);
    AtomicInteger calls = new AtomicInteger();
    BlockCache cache = BlockCache.over(reader(data, calls), data.length, BLOCK, 64L << 20);
    MappedRows rows = rows(cache);
    long[] idx = shuffled(10);
    List<CompletableFuture<Void>> workers = new ArrayList<>();
    for (int w = 0; w < 4; w++) {
      int from = w * (ROWS / 4);
      workers.add(CompletableFuture.runAsync(() -> gatherAndCheck(rows, data, idx, from, from + ROWS / 4)));
    }
    CompletableFuture.allOf(workers.toArray(CompletableFuture[]::new)).get();
    cache.close();
    assertEquals(0, BlockCache.heldBytes());
    assertThatThrownBy(() -> gatherAndCheck(rows, data, idx, 0, 256)).isInstanceOf(DatasetClosedException.class);
    cache.close();
  }

  @Test
  void aBlockCutShortByAShrunkFileIsNotKeptAndTheReadReportsTruncated() {
    byte[] whole = file(11);
    byte[] shrunk = java.util.Arrays.copyOf(whole, whole.length - 5000);
    try (BlockCache cache = BlockCache.over(reader(shrunk, new AtomicInteger()), whole.length, BLOCK, 64L << 20)) {
      MappedRows rows = rows(cache);
      long[] last = {ROWS - 1};
      assertThatThrownBy(() -> gatherAndCheck(rows, whole, last, 0, 1))
          .isInstanceOf(DatasetFormatException.class).hasMessageContaining("truncated");
      long[] first = {0};
      gatherAndCheck(rows, whole, first, 0, 1);
      assertEquals(BLOCK, BlockCache.heldBytes());
    }
  }
}
