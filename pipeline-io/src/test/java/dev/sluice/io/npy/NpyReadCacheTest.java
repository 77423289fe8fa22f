package dev.sluice.io.npy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.sluice.core.Batch;
import dev.sluice.core.DatasetFormatException;
import dev.sluice.core.IoMode;
import dev.sluice.core.ReadCache;
import dev.sluice.core.internal.mapped.BlockCache;
import dev.sluice.io.Checksums;
import dev.sluice.operators.Pipeline;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * npy files read with positioned reads through the block cache: a shuffled pass reads the same rows
 * as a mapped one, and the cache's blocks are released when the dataset closes after a pass that
 * completes, fails or is cancelled.
 */
class NpyReadCacheTest {
  private static final int ROWS = 60_000;
  private static final int WIDTH = 5; // 40-byte rows: rows cross the 1 MiB blocks

  @TempDir
  Path dir;

  @AfterEach
  void released() {
    NpyFiles.resetReadCacheAndAssertReleased();
  }

  private Path write() throws IOException {
    return NpyFiles.int64Matrix(dir.resolve("x.npy"), ROWS, WIDTH, i -> i * 7 + 3);
  }

  /** The sum of every value of every batch of a shuffled pass (same seed: same batches). */
  private static long shuffledSum(NpyDataset ds) {
    AtomicLong sum = new AtomicLong();
    Pipeline.from(ds).shuffle().batch(256).flux().doOnNext(b -> {
      try (b) {
        ByteBuffer x = b.column(0).values().data();
        for (int i = 0; i + 8 <= x.remaining(); i += 8) {
          sum.addAndGet(x.getLong(x.position() + i) * (i + 1));
        }
      }
    }).blockLast();
    return sum.get();
  }

  @Test
  void aShuffledPassReadsTheMappedRowsAndCompletesHoldingNothingAfterClose() throws IOException {
    Path f = write();
    long expected;
    String checksum;
    try (NpyDataset mapped = Npy.open(f, IoMode.MMAP)) {
      expected = shuffledSum(mapped);
      checksum = Checksums.sha256(mapped);
    }
    try (NpyDataset read = Npy.open(f, IoMode.READ)) {
      assertEquals(expected, shuffledSum(read));
      assertThat(BlockCache.heldBytes()).as("the file's blocks, kept for the next epoch").isPositive();
      assertEquals(checksum, Checksums.sha256(read));
    }
  }

  @Test
  void aFileOverTheBudgetReadsTheSameRowsAndHoldsNoBlocks() throws IOException {
    Path f = write();
    long expected;
    try (NpyDataset mapped = Npy.open(f, IoMode.MMAP)) {
      expected = shuffledSum(mapped);
    }
    ReadCache.setBudget(1 << 20);
    try (NpyDataset read = Npy.open(f, IoMode.READ)) {
      assertEquals(expected, shuffledSum(read));
      assertEquals(0, BlockCache.heldBytes());
    }
  }

  @Test
  void aPassThatFailsOnAShrunkFileNamesItAndReleasesTheBlocksOnClose() throws IOException {
    Path f = write();
    try (NpyDataset read = Npy.open(f, IoMode.READ)) {
      try (FileChannel ch = FileChannel.open(f, StandardOpenOption.WRITE)) {
        ch.truncate(ch.size() - 3 * (1 << 20) / 2);
      }
      assertThatThrownBy(() -> shuffledSum(read)).isInstanceOf(DatasetFormatException.class)
          .hasMessageContaining(f.toString()).hasMessageContaining("truncated");
    }
  }

  @Test
  void aCancelledPassReleasesTheBlocksOnClose() throws Exception {
    Path f = write();
    try (NpyDataset read = Npy.open(f, IoMode.READ)) {
      CountDownLatch done = new CountDownLatch(1);
      Pipeline.from(read).shuffle().batch(256).flux().doFinally(s -> done.countDown()).take(3)
          .doOnNext(Batch::close).blockLast();
      assertThat(done.await(30, TimeUnit.SECONDS)).isTrue();
      assertThat(BlockCache.heldBytes()).isPositive();
    }
  }
}
