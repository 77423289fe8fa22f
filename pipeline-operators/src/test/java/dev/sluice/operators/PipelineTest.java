package dev.sluice.operators;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.core.Batch;
import dev.sluice.core.DatasetFormatException;
import dev.sluice.core.Datasets;
import dev.sluice.core.Example;
import dev.sluice.core.MemoryManager;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.RandomAccessDataset;
import dev.sluice.core.testing.NoLeaks;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import reactor.core.publisher.Flux;
import reactor.test.StepVerifier;

@ExtendWith(NoLeaks.class)
class PipelineTest {
  private static final PipelineContext CTX = PipelineContext.defaults().withSeed(7);

  private static long[] values(Batch b) {
    try (b) {
      return b.column("value").values().toLongArray();
    }
  }

  private static List<Long> indicesOf(Flux<Batch> batches) {
    List<Long> out = new ArrayList<>();
    batches.doOnNext(b -> {
      try (b) {
        long[] v = b.column("value").values().toLongArray();
        assertArrayEquals(b.indices(), v, "gathered rows hold their own indices");
        for (long x : v) {
          out.add(x);
        }
      }
    }).blockLast();
    return out;
  }

  @Test
  void cardinalityIsThePassLengthWhenThePlannerKnowsItAndMinusOneOtherwise() {
    PipelineContext rank1 = PipelineContext.defaults().withSeed(3).withRank(1, 3);
    List<Pipeline<?>> known = List.of(
        Pipeline.from(Datasets.range(1000)).shuffle().shard(3, 1).batch(64).prefetch(2),
        Pipeline.from(Datasets.range(1000)).shuffle().shard(3, 1, EqualLength.DROP).batch(64, true),
        Pipeline.from(Datasets.range(1000)).skip(7).map(e -> e, 3, true).take(500).shuffle(50).batch(9),
        Pipeline.from(new MemoryBatchSplits(30, 0, 45)).shuffle().shard(3, 1).batch(4).skip(1));
    for (Pipeline<?> p : known) {
      long counted = p.flux(rank1).doOnNext(x -> {
        if (x instanceof Batch b) {
          b.close();
        }
      }).count().block();
      assertEquals(counted, p.cardinality(rank1), p::explain);
    }
    assertEquals(-1, Pipeline.from(Datasets.range(10)).filter(e -> true).cardinality(rank1));
    assertEquals(-1, Pipeline.from(TestSources.streaming(Datasets.range(10))).cardinality(rank1));
    assertEquals(-1, Pipeline.from(Datasets.range(3)).interleave(e -> Datasets.range(2), 2, 1, 1, true).cardinality(rank1));
  }

  @Test
  void shuffleIsAPermutationThatDependsOnSeedAndEpoch() {
    Pipeline<Example> p = Pipeline.from(Datasets.range(100)).shuffle();
    List<Long> e0 = p.flux(CTX).map(Example::index).collectList().block();
    List<Long> again = p.flux(CTX).map(Example::index).collectList().block();
    List<Long> e1 = p.flux(CTX.nextEpoch()).map(Example::index).collectList().block();
    List<Long> otherSeed = p.flux(CTX.withSeed(8)).map(Example::index).collectList().block();
    assertEquals(LongStream.range(0, 100).boxed().toList(), e0.stream().sorted().toList());
    assertEquals(e0, again, "same context, same order");
    assertNotEquals(e0, e1, "next epoch, another order");
    assertNotEquals(e0, otherSeed, "another seed, another order");
    assertNotEquals(LongStream.range(0, 100).boxed().toList(), e0, "shuffled");
  }

  @Test
  void batchNormalPass() {
    Pipeline<Batch> p = Pipeline.from(Datasets.range(10)).batch(4);
    StepVerifier.create(p.flux(CTX).map(PipelineTest::values))
        .assertNext(v -> assertArrayEquals(new long[] {0, 1, 2, 3}, v))
        .assertNext(v -> assertArrayEquals(new long[] {4, 5, 6, 7}, v))
        .assertNext(v -> assertArrayEquals(new long[] {8, 9}, v))
        .verifyComplete();
    StepVerifier.create(Pipeline.from(Datasets.range(10)).batch(4, true).flux(CTX).map(PipelineTest::values))
        .expectNextCount(2)
        .verifyComplete();
  }

  @Test
  void batchBackpressuredOneAtATime() {
    TestSources.Counting source = new TestSources.Counting(Datasets.range(20));
    Pipeline<Batch> p = Pipeline.from(source).shuffle().batch(5);
    List<Long> expected = indicesOf(p.flux(CTX));
    source.rows.set(0);
    List<Long> seen = new ArrayList<>();
    StepVerifier.create(p.flux(CTX), 0)
        .expectSubscription()
        .then(() -> assertEquals(0, source.rows.get(), "nothing read without demand"))
        .thenRequest(1)
        .assertNext(b -> seen.addAll(box(values(b))))
        .then(() -> assertEquals(5, source.rows.get(), "one request, one batch gathered"))
        .thenRequest(1)
        .assertNext(b -> seen.addAll(box(values(b))))
        .thenRequest(1)
        .assertNext(b -> seen.addAll(box(values(b))))
        .thenRequest(1)
        .assertNext(b -> seen.addAll(box(values(b))))
        .thenRequest(1)
        .verifyComplete();
    assertEquals(expected, seen);
  }

  @Test
  void cancelClosesDiscardedBatches() {
    List<Batch> delivered = new CopyOnWriteArrayList<>();
    Pipeline<Batch> p = Pipeline.from(Datasets.range(1000)).shuffle().batch(10).prefetch(4);
    StepVerifier.create(p.flux(CTX), 1)
        .consumeNextWith(delivered::add)
        .thenCancel()
        .verify();
    delivered.forEach(Batch::close);
    TestSources.awaitNoOutstanding();
  }

  @Test
  void cancelOfParallelGatherClosesEverything() {
    for (int round = 0; round < 20; round++) {
      Pipeline<Batch> p = Pipeline.from(Datasets.synthetic(2000, 16, 1)).shuffle().batch(16, false, 3).prefetch(2);
      StepVerifier.create(p.flux(CTX.withEpoch(round)), 2)
          .consumeNextWith(Batch::close)
          .consumeNextWith(Batch::close)
          .thenCancel()
          .verify();
      TestSources.awaitNoOutstanding();
    }
  }

  @Test
  void takeOnTheSubscriberSideClosesTheRest() {
    Pipeline<Batch> p = Pipeline.from(Datasets.range(100)).batch(3);
    StepVerifier.create(p.flux(CTX).take(2).map(PipelineTest::values))
        .expectNextCount(2)
        .verifyComplete();
  }

  @Test
  void upstreamErrorIsSignalledAndNothingLeaks() {
    RandomAccessDataset<Example> broken = TestSources.failingAt(50, 23);
    StepVerifier.create(Pipeline.from(broken).batch(10).flux(CTX).map(PipelineTest::values))
        .expectNextCount(2)
        .expectErrorSatisfies(e -> {
          assertTrue(e instanceof DatasetFormatException, e.toString());
          assertTrue(e.getMessage().contains("test.npy") && e.getMessage().contains("23"), e.getMessage());
        })
        .verify();
    for (int round = 0; round < 30; round++) {
      // parallel gathers: the error ends the pass at once; batches gathered after it are closed
      StepVerifier.create(Pipeline.from(broken).batch(5, false, 3).prefetch(2).flux(CTX).map(PipelineTest::values))
          .thenConsumeWhile(v -> v[0] < 20)
          .expectError(DatasetFormatException.class)
          .verify();
      TestSources.awaitNoOutstanding();
    }
  }

  @Test
  void resubscriptionSameContextSameOrderNextEpochDifferent() {
    Pipeline<Batch> p = Pipeline.from(Datasets.range(50)).shuffle().shard(2, 1).batch(4).prefetch(2);
    Flux<Batch> pass = p.flux(CTX);
    List<Long> first = indicesOf(pass);
    List<Long> second = indicesOf(pass);
    List<Long> next = indicesOf(p.flux(CTX.nextEpoch()));
    assertEquals(first, second);
    assertNotEquals(first, next);
    assertEquals(25, first.size());
  }

  @Test
  void epochsReshuffleEachEpoch() {
    Pipeline<Example> p = Pipeline.from(Datasets.range(30)).shuffle();
    List<Long> all = p.epochs(CTX.withEpoch(2), 3).map(Example::index).collectList().block();
    assertEquals(90, all.size());
    for (int e = 0; e < 3; e++) {
      List<Long> expected = p.flux(CTX.withEpoch(2 + e)).map(Example::index).collectList().block();
      assertEquals(expected, all.subList(30 * e, 30 * (e + 1)), "epoch " + (2 + e));
    }
    assertNotEquals(all.subList(0, 30), all.subList(30, 60));
  }

  @Test
  void repeatAdvancesTheEpoch() {
    Pipeline<Example> p = Pipeline.from(Datasets.range(12)).shuffle();
    List<Long> repeated = p.repeat(2).flux(CTX).map(Example::index).collectList().block();
    List<Long> both = p.epochs(CTX, 2).map(Example::index).collectList().block();
    assertEquals(both, repeated);
    List<Long> batched = indicesOf(p.repeat(2).batch(5).flux(CTX));
    assertEquals(both, batched, "batches after repeat span the epoch boundary");
    assertEquals(7, Pipeline.from(Datasets.range(3)).repeat().take(7).flux().count().block());
  }

  @Test
  void takeAndSkipOnThePlanReadOnlyWhatTheyEmit() {
    TestSources.Counting source = new TestSources.Counting(Datasets.range(1000));
    List<Long> full = Pipeline.from(Datasets.range(1000)).shuffle().flux(CTX).map(Example::index).collectList().block();
    List<Long> lazy = Pipeline.from(source).shuffle().skip(100).take(20).flux(CTX).map(Example::index).collectList().block();
    assertEquals(full.subList(100, 120), lazy);
    assertEquals(0, source.rows.get(), "rows are read when their fields are first needed (Example.lazy)");
    List<Long> cut = Pipeline.from(source).shuffle().skip(100).take(20).flux(CTX)
        .map(e -> e.fields().isEmpty() ? -1 : e.index()).collectList().block();
    assertEquals(full.subList(100, 120), cut);
    assertEquals(20, source.rows.get(), "read nothing it did not emit");
    source.rows.set(0);
    List<Long> batches = indicesOf(Pipeline.from(source).shuffle().batch(10).skip(3).take(2).flux(CTX));
    assertEquals(full.subList(30, 50), batches);
    assertEquals(20, source.rows.get());
  }

  @Test
  void shardAfterShuffleIsMovedAfterIt() {
    Pipeline<Example> a = Pipeline.from(Datasets.range(40)).shuffle().shard(4, 2);
    Pipeline<Example> b = Pipeline.from(Datasets.range(40)).shard(4, 2).shuffle();
    assertEquals(a.flux(CTX).map(Example::index).collectList().block(), b.flux(CTX).map(Example::index).collectList().block());
  }

  @Test
  void elementPathMatchesTheIndexPlan() {
    RandomAccessDataset<Example> data = Datasets.range(23);
    for (EqualLength policy : EqualLength.values()) {
      for (int k : new int[] {1, 3, 5, 30}) {
        for (int r = 0; r < k; r += Math.max(1, k / 3)) {
          List<Long> planned = indicesOf(Pipeline.from(data).skip(1).shard(k, r, policy).take(15).batch(4).flux(CTX));
          List<Long> streamed = indicesOf(Pipeline.from(TestSources.streaming(data)).skip(1).shard(k, r, policy).take(15).batch(4).flux(CTX));
          assertEquals(planned, streamed, policy + " k=" + k + " r=" + r);
        }
      }
    }
  }

  @Test
  void elementPathBatchesAreClosedOnCancel() {
    Pipeline<Batch> p = Pipeline.from(TestSources.streaming(Datasets.synthetic(500, 8, 3))).batch(7).prefetch(3);
    StepVerifier.create(p.flux(CTX), 1)
        .consumeNextWith(b -> {
          try (b) {
            assertEquals(7, b.size());
            assertEquals(8, b.column("x").values().shape().dim(1));
          }
        })
        .thenCancel()
        .verify();
    TestSources.awaitNoOutstanding();
  }

  @Test
  void globalShuffleNeedsARandomAccessSource() {
    UnsupportedOperationException e = assertThrows(UnsupportedOperationException.class,
        () -> Pipeline.from(TestSources.streaming(Datasets.range(3))).shuffle());
    assertTrue(e.getMessage().contains("shuffle(bufferSize)"), e.getMessage());
    assertThrows(UnsupportedOperationException.class, () -> Pipeline.from(Datasets.range(3)).batch(2).shuffle());
  }

  @Test
  void assemblyTimeChecksNameTheParameter() {
    Pipeline<Example> p = Pipeline.from(Datasets.range(3));
    assertEquals("batchSize > 0 required but it was 0", assertThrows(IllegalArgumentException.class, () -> p.batch(0)).getMessage());
    assertEquals("index in [0, 4) required but it was 4", assertThrows(IllegalArgumentException.class, () -> p.shard(4, 4)).getMessage());
    assertEquals("numShards > 0 required but it was 0", assertThrows(IllegalArgumentException.class, () -> p.shard(0, 0)).getMessage());
    assertEquals("bufferSize > 0 (or AUTOTUNE = -1) required but it was 0", assertThrows(IllegalArgumentException.class, () -> p.prefetch(0)).getMessage());
    assertThrows(IllegalArgumentException.class, () -> p.take(-1));
    assertThrows(IllegalArgumentException.class, () -> p.batch(2, false, 0));
  }

  @Test
  void withOptionsGivesNestedPipelinesTheirMemoryManager() {
    MemoryManager own = new MemoryManager();
    Pipeline<Batch> p = Pipeline.from(Pipeline.from(Datasets.range(10)).shuffle())
        .batch(4)
        .withOptions(dev.sluice.core.Options.builder().memory(own).build());
    List<Batch> held = p.flux(CTX).collectList().block();
    assertTrue(own.outstandingBytes() > 0, "batches come from the pipeline's memory manager");
    held.forEach(Batch::close);
    NoLeaks.assertNoOutstanding(own);
    List<Long> direct = Pipeline.from(Datasets.range(10)).shuffle().flux(CTX).map(Example::index).collectList().block();
    assertEquals(direct, indicesOf(Pipeline.from(Pipeline.from(Datasets.range(10)).shuffle()).batch(4).flux(CTX)));
  }

  @Test
  void emptyAndTinySources() {
    StepVerifier.create(Pipeline.from(Datasets.range(0)).shuffle().shard(3, 2).batch(4).flux(CTX)).verifyComplete();
    assertEquals(List.of(0L), indicesOf(Pipeline.from(Datasets.range(1)).shuffle().shard(3, 2).batch(4).flux(CTX)));
    assertEquals(List.of(), indicesOf(Pipeline.from(Datasets.range(1)).shuffle().shard(3, 2, EqualLength.DROP).batch(4).flux(CTX)));
    assertFalse(Pipeline.from(Datasets.range(2)).toString().isEmpty());
  }

  private static List<Long> box(long[] v) {
    return Arrays.stream(v).boxed().toList();
  }
}
