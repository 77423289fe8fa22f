package dev.sluice.io.npy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.sluice.core.Batch;
import dev.sluice.core.IoMode;
import dev.sluice.core.Options;
import dev.sluice.core.ReadCache;
import dev.sluice.core.internal.mapped.BlockCache;
import dev.sluice.core.spi.BudgetRequests;
import dev.sluice.operators.Pipeline;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code Options.readCacheBytes}: a pipeline's budget applies to files opened before it started,
 * while its passes run, and the default comes back once none runs.
 */
class ReadCacheOptionTest {
  private static final int ROWS = 40_000;
  private static final int WIDTH = 4; // 32-byte rows, about 1.2 MiB of data: two blocks

  @TempDir
  Path dir;

  @AfterEach
  void released() {
    NpyFiles.resetReadCacheAndAssertReleased();
  }

  private Path write() throws IOException {
    return NpyFiles.int64Matrix(dir.resolve("x.npy"), ROWS, WIDTH, i -> i * 5 + 1);
  }

  /** The rows of one shuffled pass of {@code ds} with the read cache budget {@code bytes} (null: none asked). */
  private static long pass(NpyDataset ds, Long bytes, AtomicLong budgetDuring) {
    Pipeline<dev.sluice.core.Example> p = Pipeline.from(ds);
    if (bytes != null) {
      p = p.withOptions(Options.builder().readCacheBytes(bytes).build());
    }
    AtomicLong rows = new AtomicLong();
    p.shuffle().batch(512).flux().doOnNext(b -> {
      budgetDuring.set(ReadCache.budget());
      try (Batch batch = b) {
        rows.addAndGet(batch.size());
      }
    }).blockLast();
    return rows.get();
  }

  @Test
  void aPipelinesBudgetIsTheOneTheCacheEnforcesWhileItRuns() throws IOException {
    Path f = write();
    ReadCache.setBudget(0); // the default: no cache
    AtomicLong during = new AtomicLong(-1);
    try (NpyDataset read = Npy.open(f, IoMode.READ)) {
      assertEquals(ROWS, pass(read, null, during));
      assertEquals(0, during.get());
      assertEquals(0, BlockCache.heldBytes(), "the default budget 0 keeps no block");

      assertEquals(ROWS, pass(read, 1L << 20, during));
      assertEquals(1L << 20, during.get());
      assertEquals(0, BlockCache.heldBytes(), "a budget smaller than the file keeps none of its blocks");

      assertEquals(ROWS, pass(read, 64L << 20, during));
      assertEquals(64L << 20, during.get());
      assertThat(BlockCache.heldBytes()).as("the file's blocks, kept under the pipeline's budget")
          .isEqualTo(Files.size(f));
      assertEquals(0, ReadCache.budget(), "the default once no pipeline runs");
    }
  }

  @Test
  void whileTwoPipelinesRunTheLargestBudgetApplies() {
    ReadCache.setBudget(5);
    try (BudgetRequests.Request small = ReadCache.request(10)) {
      assertEquals(10, ReadCache.budget());
      try (BudgetRequests.Request large = ReadCache.request(100)) {
        assertEquals(100, ReadCache.budget());
      }
      assertEquals(10, ReadCache.budget());
      try (BudgetRequests.Request none = ReadCache.request(0)) {
        assertEquals(10, ReadCache.budget());
      }
    }
    assertEquals(5, ReadCache.budget());
  }
}
