package dev.sluice.operators;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.core.Batch;
import dev.sluice.core.Example;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.SplitDataset;
import dev.sluice.core.Tensor;
import dev.sluice.core.testing.BatchContents;
import dev.sluice.core.testing.NoLeaks;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import reactor.core.publisher.Flux;
import reactor.test.StepVerifier;

/**
 * The element path over a split source that decodes into batches: the element stages receive views
 * of the decoded batches' rows, and a {@code batch} re-cuts runs of unchanged rows. Each pipeline is
 * compared with the same pipeline over the same rows read one by one (a plain split source).
 */
@ExtendWith(NoLeaks.class)
class SplitElementViewsTest {
  private static final long[] SIZES = {700, 1, 1500, 333, 2048};

  /** Element stages between the source and {@code batch}, with the map's worker count. */
  private static List<UnaryOperator<Pipeline<Example>>> stages(int workers) {
    return List.of(
        p -> p.filter(e -> e.index() % 4 != 1),
        p -> p.shuffle().filter(e -> e.index() % 3 != 0),
        p -> p.shuffle().map(e -> filled(e).with("y", e.tensor("x")), workers).filter(e -> e.index() % 4 != 1),
        p -> p.shard(3, 1).map(e -> filled(e).with("x", Tensor.of(1f, 2f, (float) e.index())), workers),
        p -> p.shuffle(SplitShuffle.SPLITS).shuffle(100).filter(e -> e.index() % 5 != 2));
  }

  /**
   * {@code e} with its null fields filled in: a batch after a {@code map} takes its schema from the
   * first example, which then may hold no nulls.
   */
  private static Example filled(Example e) {
    Example out = e.isNull("f") ? e.with("f", Tensor.scalar(-1f)) : e;
    return e.isNull("s") ? out.with("s", Tensor.ofString("none")) : out;
  }

  /** The rows of {@code source} read one by one: a plain split source with the same schema (the row path). */
  private static SplitDataset<Example> rowsOf(MemoryBatchSplits source) {
    return BatchContents.rowsOnly(source);
  }

  @Test
  void mapFilterAndBatchGiveTheBatchesOfTheRowPathForAnyWorkerCountAndSeed() {
    MemoryBatchSplits source = new MemoryBatchSplits(SIZES);
    for (int workers : new int[] {1, 3}) {
      for (long seed : new long[] {1, 7}) {
        PipelineContext ctx = PipelineContext.defaults().withSeed(seed).withEpoch(seed);
        List<UnaryOperator<Pipeline<Example>>> all = stages(workers);
        for (int s = 0; s < all.size(); s++) {
          for (int batch : new int[] {1, 7, 256}) {
            Flux<Batch> views = all.get(s).apply(Pipeline.from(source)).batch(batch, false, workers).flux(ctx);
            Flux<Batch> rows = all.get(s).apply(Pipeline.from(rowsOf(source))).batch(batch, false, workers).flux(ctx);
            assertEquals(BatchContents.of(rows), BatchContents.of(views),
                "stages " + s + ", batch " + batch + ", workers " + workers + ", seed " + seed);
          }
        }
      }
    }
  }

  @Test
  void theElementStagesReceiveViewsOfTheDecodedBatches() {
    MemoryBatchSplits source = new MemoryBatchSplits(SIZES);
    AtomicLong views = new AtomicLong();
    AtomicLong seen = new AtomicLong();
    List<Example> got = Pipeline.from(source).shuffle().map(e -> {
      seen.incrementAndGet();
      if (e.origin() != null) {
        views.incrementAndGet();
      }
      return e;
    }).flux().collectList().block();
    assertEquals(source.size(), got.size());
    assertEquals(source.size(), seen.get());
    assertEquals(source.size(), views.get(), "every row reaches the map as a view of its decoded batch");
    for (Example e : got.subList(0, 50)) {
      assertEquals(MemoryBatchSplits.row(e.index()), e, "the view holds the row's values");
    }
  }

  @Test
  void examplesWithoutABatchOutliveTheirDecodedBatches() {
    MemoryBatchSplits source = new MemoryBatchSplits(SIZES);
    List<Example> got = Pipeline.from(source).shuffle().filter(e -> e.index() % 2 == 0).flux().collectList().block();
    TestSources.awaitNoOutstanding();
    assertFalse(got.isEmpty());
    for (Example e : got) {
      assertEquals(MemoryBatchSplits.row(e.index()), e);
    }
  }

  @Test
  void cancelMidBatchReleasesEverything() throws InterruptedException {
    MemoryBatchSplits source = new MemoryBatchSplits(SIZES);
    for (UnaryOperator<Pipeline<Example>> head : stages(2)) {
      for (int taken : new int[] {1, 5, 40}) {
        CountDownLatch done = new CountDownLatch(1);
        Flux<Batch> batches = head.apply(Pipeline.from(source)).batch(7, false, 2).prefetch(2).flux()
            .doFinally(s -> done.countDown());
        List<Batch> got = new ArrayList<>();
        StepVerifier.create(batches.doOnNext(got::add), 0)
            .thenRequest(taken)
            .expectNextCount(taken)
            .thenCancel()
            .verify(Duration.ofSeconds(30));
        got.forEach(Batch::close);
        assertTrue(done.await(10, TimeUnit.SECONDS));
        TestSources.awaitNoOutstanding();
      }
    }
  }

  @Test
  void aResumeMidEpochIsExact() {
    MemoryBatchSplits source = new MemoryBatchSplits(SIZES);
    PipelineContext ctx = PipelineContext.defaults().withSeed(5);
    for (UnaryOperator<Pipeline<Example>> head : stages(2)) {
      Pipeline<Batch> p = head.apply(Pipeline.from(source)).batch(16, false, 2);
      List<String> whole = ResumeRuns.whole(p, ctx, 2);
      assertNotNull(whole);
      List<String> rows = ResumeRuns.whole(head.apply(Pipeline.from(rowsOf(source))).batch(16, false, 2), ctx, 2);
      assertEquals(rows, whole);
      long n = whole.size();
      assertEquals(whole, ResumeRuns.cut(p, ctx, 2, new long[] {1, n / 3, n / 2 + 1, n - 1}));
    }
  }
}
