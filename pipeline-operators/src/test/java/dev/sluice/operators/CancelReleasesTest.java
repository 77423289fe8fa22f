package dev.sluice.operators;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.core.Batch;
import dev.sluice.core.Datasets;
import dev.sluice.core.Example;
import dev.sluice.core.MemoryManager;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.RandomAccessDataset;
import dev.sluice.core.spi.BufferPool;
import dev.sluice.core.spi.PooledBuffer;
import dev.sluice.core.testing.NoLeaks;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import reactor.test.StepVerifier;

/**
 * The pattern a user's StepVerifier test follows: a pipeline with a parallel {@code map} and a
 * {@code prefetch}, one batch requested, then {@code thenCancel()}; after {@code verify()} returns,
 * {@link MemoryManager#awaitNoOutstanding(Duration)} sees every pooled byte come back.
 */
@ExtendWith(NoLeaks.class)
class CancelReleasesTest {
  private static final int RUNS = 200;

  @Test
  void stepVerifierCancelWithPrefetchAndParallelMapReleasesEverythingInEveryRun() {
    RandomAccessDataset<Example> data = Datasets.synthetic(4_096, 64, 7);
    MemoryManager memory = MemoryManager.shared();
    int passed = 0;
    for (int run = 0; run < RUNS; run++) {
      PipelineContext ctx = PipelineContext.defaults().withSeed(run);
      Pipeline<Batch> p = Pipeline.from(data).shuffle().map(e -> e, 4).batch(64, false, 2).prefetch(4);
      StepVerifier.create(p.flux(ctx), 0)
          .thenRequest(1)
          .consumeNextWith(b -> {
            try (b) {
              assertEquals(64, b.size());
            }
          })
          .thenCancel()
          .verify(Duration.ofSeconds(30));
      memory.awaitNoOutstanding(Duration.ofSeconds(10));
      passed++;
    }
    assertEquals(RUNS, passed);
  }

  @Test
  void awaitNoOutstandingNamesTheStagesStillHoldingMemory() {
    MemoryManager memory = new MemoryManager(0);
    BufferPool pool = memory.pool("batch");
    try (PooledBuffer held = pool.allocate(1024)) {
      IllegalStateException e = assertThrows(IllegalStateException.class,
          () -> memory.awaitNoOutstanding(Duration.ofMillis(20)));
      assertTrue(e.getMessage().contains("batch=1024"), e.getMessage());
      assertEquals(1024, held.size());
    }
    memory.awaitNoOutstanding(Duration.ZERO);
    assertThrows(IllegalArgumentException.class, () -> memory.awaitNoOutstanding(Duration.ofMillis(-1)));
  }
}
