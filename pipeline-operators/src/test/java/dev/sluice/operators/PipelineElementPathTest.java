package dev.sluice.operators;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.core.Batch;
import dev.sluice.core.Datasets;
import dev.sluice.core.Example;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.testing.NoLeaks;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import reactor.test.StepVerifier;

@ExtendWith(NoLeaks.class)
class PipelineElementPathTest {
  private static final PipelineContext CTX = PipelineContext.defaults().withSeed(21);

  private static List<Long> indices(Pipeline<Example> p, PipelineContext ctx) {
    return p.flux(ctx).map(Example::index).collectList().block(Duration.ofSeconds(30));
  }

  private static List<Long> sorted(List<Long> l) {
    List<Long> s = new ArrayList<>(l);
    Collections.sort(s);
    return s;
  }

  @Test
  void bufferShuffleOnARandomAccessSourceReshufflesPerEpoch() {
    Pipeline<Example> p = Pipeline.from(Datasets.range(200)).shuffle(50);
    List<Long> e0 = indices(p, CTX);
    assertEquals(LongStream.range(0, 200).boxed().toList(), sorted(e0));
    assertEquals(e0, indices(p, CTX));
    assertNotEquals(e0, indices(p, CTX.nextEpoch()));
    List<Long> two = p.epochs(CTX, 2).map(Example::index).collectList().block();
    assertEquals(e0, two.subList(0, 200));
    assertEquals(indices(p, CTX.nextEpoch()), two.subList(200, 400));
    // Its own seed wins over the context's; reshuffle=false keeps the order across epochs.
    Pipeline<Example> own = Pipeline.from(Datasets.range(200)).shuffle(50, 9, false);
    assertEquals(indices(own, CTX), indices(own, CTX.withSeed(1).withEpoch(5)));
  }

  @Test
  void parallelMapKeepsTheOrderAndRepeatAdvancesTheEpoch() {
    Pipeline<Example> base = Pipeline.from(Datasets.range(300)).shuffle(64);
    List<Long> seq = base.map(e -> e.index()).flux(CTX).collectList().block();
    for (int parallel : new int[] {2, 4}) {
      assertEquals(seq, base.map(Example::index, parallel).flux(CTX).collectList().block(Duration.ofSeconds(30)));
    }
    List<Long> repeated = base.repeat(2).map(Example::index, 2, true).flux(CTX).collectList().block(Duration.ofSeconds(30));
    assertEquals(seq, repeated.subList(0, 300));
    assertEquals(indices(base, CTX.nextEpoch()), repeated.subList(300, 600));
  }

  @Test
  void mapWithContextGivesPerSampleRandomnessIndependentOfParallelism() {
    Pipeline<Integer> a = Pipeline.from(Datasets.range(100))
        .mapWithContext((Example e, PipelineContext ctx) -> SampleRandom.of(ctx, e.index()).nextInt(1000), 1, true);
    Pipeline<Integer> b = Pipeline.from(Datasets.range(100))
        .mapWithContext((Example e, PipelineContext ctx) -> SampleRandom.of(ctx, e.index()).nextInt(1000), 4, true);
    assertEquals(a.flux(CTX).collectList().block(), b.flux(CTX).collectList().block(Duration.ofSeconds(10)));
    assertNotEquals(a.flux(CTX).collectList().block(), a.flux(CTX.nextEpoch()).collectList().block());
  }

  @Test
  void filterThenElementBatch() {
    List<Batch> batches = Pipeline.from(Datasets.range(100)).filter(e -> e.index() % 3 == 0).shuffle(10).batch(8)
        .flux(CTX).collectList().block();
    List<Long> seen = new ArrayList<>();
    for (Batch b : batches) {
      try (b) {
        for (int i = 0; i < b.size(); i++) {
          assertEquals(b.index(i), b.column("value").values().getLong(i));
          seen.add(b.index(i));
        }
      }
    }
    assertEquals(LongStream.range(0, 100).filter(i -> i % 3 == 0).boxed().toList(), sorted(seen));
  }

  @Test
  void splitSourceShardsBeforeShufflingWhateverTheWrittenOrder() {
    MemorySplits source = new MemorySplits(true, 30, 30, 30, 30, 30);
    Pipeline<Example> shuffleThenShard = Pipeline.from(source).shuffle().shard(3, 1);
    Pipeline<Example> shardThenShuffle = Pipeline.from(source).shard(3, 1).shuffle();
    List<Long> a = indices(shuffleThenShard, CTX);
    assertEquals(a, indices(shardThenShuffle, CTX));
    assertEquals(50, a.size());
    // Rank 1 reads only its contiguous range [50, 100) of the shuffled split sequence: 3 of 5 splits.
    source.reads.clear();
    indices(shuffleThenShard, CTX);
    assertEquals(3, source.reads.size(), "reads " + source.reads);
    // Every rank together: every row exactly once (UNEVEN), a new order next epoch.
    List<Long> all = new ArrayList<>();
    for (int r = 0; r < 3; r++) {
      all.addAll(indices(Pipeline.from(source).shuffle().shard(3, r, EqualLength.UNEVEN), CTX));
    }
    assertEquals(LongStream.range(0, 150).boxed().toList(), sorted(all));
    assertNotEquals(a, indices(shuffleThenShard, CTX.nextEpoch()));
    // A buffer shuffle written before the shard also runs after it.
    assertEquals(indices(Pipeline.from(source).shard(3, 1).shuffle(20), CTX),
        indices(Pipeline.from(source).shuffle(20).shard(3, 1), CTX));
  }

  @Test
  void cancelledElementPathReleasesEveryBatch() throws InterruptedException {
    CountDownLatch done = new CountDownLatch(1);
    List<Batch> got = new ArrayList<>();
    StepVerifier.create(Pipeline.from(Datasets.range(5000)).shuffle(100).map(e -> e, 2).batch(16).shuffle(8).prefetch(4)
            .flux(CTX).doFinally(s -> done.countDown()), 3)
        .recordWith(() -> got)
        .expectNextCount(3)
        .thenCancel()
        .verify(Duration.ofSeconds(10));
    got.forEach(Batch::close);
    assertTrue(done.await(10, TimeUnit.SECONDS));
    TestSources.awaitNoOutstanding();
  }

  @Test
  void cancelledParallelCollationReleasesEveryBatch() throws InterruptedException {
    for (int round = 0; round < 20; round++) {
      CountDownLatch done = new CountDownLatch(1);
      List<Batch> got = new ArrayList<>();
      StepVerifier.create(Pipeline.from(Datasets.range(3000)).shuffle(50).batch(8, false, 3).prefetch(2)
              .flux(CTX.withEpoch(round)).doFinally(s -> done.countDown()), 2)
          .recordWith(() -> got)
          .expectNextCount(2)
          .thenCancel()
          .verify(Duration.ofSeconds(10));
      got.forEach(Batch::close);
      assertTrue(done.await(10, TimeUnit.SECONDS));
      TestSources.awaitNoOutstanding();
    }
  }

  @Test
  void interleaveReadsSeveralDatasetsInTfDataOrder() {
    // Three "files": dataset i holds indices 100 i .. 100 i + 3 + i.
    dev.sluice.core.Dataset<Integer> files = ctx -> reactor.core.publisher.Flux.range(0, 3);
    Pipeline<Long> p = Pipeline.from(files).interleave(
        i -> Pipeline.from(Datasets.range(3 + i)).map(e -> 100L * i + e.index()), 2, 2);
    assertEquals(List.of(0L, 1L, 100L, 101L, 2L, 102L, 103L, 200L, 201L, 202L, 203L, 204L),
        p.flux(CTX).collectList().block());
    Pipeline<Long> parallel = Pipeline.from(files).interleave(
        i -> Pipeline.from(Datasets.range(3 + i)).map(e -> 100L * i + e.index()), 2, 2, 3, true);
    assertEquals(p.flux(CTX).collectList().block(), parallel.flux(CTX).collectList().block(Duration.ofSeconds(10)));
  }

  @Test
  void failedElementPathReleasesEveryBatch() {
    StepVerifier.create(Pipeline.from(Datasets.range(500)).batch(10).shuffle(8)
            .map(b -> {
              if (b.index(0) == 250) {
                b.close();
                throw new IllegalStateException("step failed");
              }
              return b;
            }, 2)
            .flux(CTX).doOnNext(Batch::close))
        .thenConsumeWhile(b -> true)
        .verifyErrorMessage("step failed");
    TestSources.awaitNoOutstanding();
  }

  @Test
  void batchingElementsThatAreNotExamplesFailsWithAClearMessage() {
    for (int parallel : new int[] {1, 2}) {
      Pipeline<Batch> p = Pipeline.from(Datasets.range(10)).map(e -> "row " + e.index()).batch(4, false, parallel);
      StepVerifier.create(p.flux(PipelineContext.defaults()))
          .expectErrorSatisfies(e -> assertTrue(e.getMessage().contains("batch needs a dataset of Example")
              && e.getMessage().contains("java.lang.String"), e.toString()))
          .verify(Duration.ofSeconds(10));
    }
  }
}
