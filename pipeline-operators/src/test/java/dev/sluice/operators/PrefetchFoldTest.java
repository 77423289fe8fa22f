package dev.sluice.operators;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.core.Batch;
import dev.sluice.core.Datasets;
import dev.sluice.core.MemoryManager;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.testing.NoLeaks;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import reactor.test.StepVerifier;

/**
 * A {@code prefetch} right after a parallel gather on the index path is folded into the gather: the
 * output is the same as without it for any number of workers, and cancel releases every batch.
 */
@ExtendWith(NoLeaks.class)
class PrefetchFoldTest {
  private static List<Long> values(Pipeline<Batch> p, PipelineContext ctx) {
    List<Long> out = new ArrayList<>();
    for (Batch b : p.flux(ctx).toIterable()) {
      try (b) {
        for (long v : b.column("value").values().toLongArray()) {
          out.add(v);
        }
      }
    }
    return out;
  }

  @Test
  void explainSaysWhenThePrefetchIsFoldedIntoTheParallelGather() {
    String folded = Pipeline.from(Datasets.range(100)).shuffle().batch(8, false, 2).prefetch(4).explain();
    assertTrue(folded.contains("folded into the parallel gather"), folded);
    String sequential = Pipeline.from(Datasets.range(100)).shuffle().batch(8).prefetch(4).explain();
    assertFalse(sequential.contains("folded"), sequential);
  }

  @Test
  void theOutputDoesNotDependOnTheWorkersOrTheFoldedPrefetch() {
    PipelineContext ctx = PipelineContext.defaults().withSeed(11).withEpoch(2);
    List<Long> expected = values(Pipeline.from(Datasets.range(1_003)).shuffle().batch(16), ctx);
    assertEquals(1_003, expected.size());
    for (int workers = 1; workers <= 3; workers++) {
      for (int prefetch : new int[] {1, 4, 9}) {
        Pipeline<Batch> p = Pipeline.from(Datasets.range(1_003)).shuffle().batch(16, false, workers).prefetch(prefetch);
        assertEquals(expected, values(p, ctx), "workers " + workers + ", prefetch " + prefetch);
        assertEquals(expected.subList(5 * 16, expected.size()), values(p.skip(5), ctx),
            "skip 5 batches, workers " + workers + ", prefetch " + prefetch);
      }
    }
  }

  @Test
  void cancelAfterOneBatchReleasesEverything() {
    MemoryManager memory = MemoryManager.shared();
    for (int run = 0; run < 50; run++) {
      Pipeline<Batch> p = Pipeline.from(Datasets.synthetic(2_048, 64, 7)).shuffle().batch(64, false, 2).prefetch(8);
      StepVerifier.create(p.flux(PipelineContext.defaults().withSeed(run)), 0)
          .thenRequest(1)
          .consumeNextWith(Batch::close)
          .thenCancel()
          .verify(Duration.ofSeconds(30));
      memory.awaitNoOutstanding(Duration.ofSeconds(10));
    }
  }
}
