package dev.sluice.operators;

import static dev.sluice.operators.ResumeRuns.assertResumesExactly;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.core.Batch;
import dev.sluice.core.Datasets;
import dev.sluice.core.Example;
import dev.sluice.core.MemoryManager;
import dev.sluice.core.Options;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.PipelineState;
import dev.sluice.core.Positioned;
import dev.sluice.core.testing.NoLeaks;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.DoubleRange;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import reactor.core.publisher.Flux;
import reactor.test.StepVerifier;

/**
 * {@code Pipeline.sample} (tf.data's {@code sample_from_datasets}): realized proportions, the same
 * sequence for the same (seed, epoch, rank), rebalancing and stopping, cycled sources, sharded
 * sources across ranks, exact resume, metrics per source, and cancel / error / backpressure with
 * off-heap batches.
 */
@ExtendWith(NoLeaks.class)
class SampleTest {
  static final PipelineContext CTX = PipelineContext.defaults().withSeed(11);
  static final double[] WEIGHTS = {0.5, 0.3, 0.2};

  /** Source {@code s}: {@code n} examples whose indices are {@code s * 1_000_000 + row}. */
  static Pipeline<Example> source(int s, long n) {
    return Pipeline.from(Datasets.range(n)).map(e -> e.withIndex(s * 1_000_000L + e.index()));
  }

  static int sourceOf(Example e) {
    return (int) (e.index() / 1_000_000L);
  }

  static List<Long> indices(Flux<Example> flux) {
    return flux.map(Example::index).collectList().block();
  }

  @Test
  void threeSourcesOverOneHundredThousandDrawsHitTheirWeightsWithinOnePercent() {
    List<Pipeline<Example>> sources = List.of(source(0, 100_000), source(1, 100_000), source(2, 100_000));
    Pipeline<Example> mixed = Pipeline.sample(sources, WEIGHTS).take(100_000);
    long[] counts = new long[3];
    mixed.flux(CTX).doOnNext(e -> counts[sourceOf(e)]++).blockLast();
    for (int i = 0; i < 3; i++) {
      double p = counts[i] / 100_000.0;
      assertEquals(WEIGHTS[i], p, 0.01, "source " + i + " realized " + p);
    }
  }

  @Test
  void resumedAtARandomPointOfOneHundredThousandDrawsItContinuesIdenticallyReadingOnlyWhatFollows() {
    List<TestSources.Counting> counted = new ArrayList<>();
    List<Pipeline<Example>> sources = new ArrayList<>();
    for (int s = 0; s < 3; s++) {
      int src = s;
      counted.add(new TestSources.Counting(Datasets.range(100_000)));
      sources.add(Pipeline.from(counted.get(s)).shuffle()
          .map(e -> e.withIndex(src * 1_000_000L + e.index())));
    }
    Pipeline<Example> mixed = Pipeline.sample(sources, WEIGHTS).take(100_000);
    List<Long> whole = indices(mixed.flux(CTX));
    java.util.SplittableRandom random = new java.util.SplittableRandom(17);
    for (int trial = 0; trial < 3; trial++) {
      int cut = 1 + random.nextInt(99_998);
      PipelineState state = mixed.withState(CTX).take(cut).blockLast().state();
      assertEquals(cut, state.position());
      counted.forEach(c -> c.rows.set(0));
      List<Long> rest = indices(mixed.resume(PipelineState.fromJson(state.toJson())));
      assertEquals(whole.subList(cut, whole.size()), rest, "resumed after " + cut);
      // every source resumes from its own position: nothing before the cut is read again, and at
      // most the 2 elements each source keeps queued are read past the end
      long read = counted.stream().mapToLong(c -> c.rows.get()).sum();
      assertTrue(read <= rest.size() + 6L, "rows read " + read + " for " + rest.size() + " after the cut");
    }
  }

  @Test
  void theSameSeedEpochAndRankGiveTheSameSequenceAndAnotherEpochAnother() {
    Pipeline<Example> mixed = Pipeline.sample(List.of(source(0, 300), source(1, 300), source(2, 300)), WEIGHTS);
    List<Long> a = indices(mixed.flux(CTX));
    assertEquals(a, indices(mixed.flux(CTX)));
    assertEquals(900, a.size());
    assertNotEquals(a, indices(mixed.flux(CTX.withEpoch(1))));
    assertNotEquals(a, indices(mixed.flux(CTX.withRank(1, 2))));
    // an explicit seed wins over the context's
    Pipeline<Example> seeded = Pipeline.sample(List.of(source(0, 300), source(1, 300)), new double[] {1, 1}, 3, false);
    assertEquals(indices(seeded.flux(CTX)), indices(seeded.flux(CTX.withSeed(99))));
  }

  @Test
  void withoutStopEveryElementOfEverySourceComesOnceInItsOwnOrder() {
    Pipeline<Example> mixed = Pipeline.sample(List.of(source(0, 50), source(1, 500), source(2, 5)), WEIGHTS);
    List<Long> all = indices(mixed.flux(CTX));
    assertEquals(555, all.size());
    for (int s = 0; s < 3; s++) {
      int src = s;
      List<Long> mine = all.stream().filter(i -> i / 1_000_000L == src).toList();
      assertEquals(indices(source(s, List.of(50L, 500L, 5L).get(s)).flux(CTX)), mine);
    }
    assertEquals(555, mixed.cardinality(CTX));
  }

  @Test
  void withStopThePassEndsWhenTheDrawnSourceIsExhausted() {
    Pipeline<Example> mixed = Pipeline.sample(List.of(source(0, 40), source(1, 400)), new double[] {0.5, 0.5}, 5, true);
    List<Long> all = indices(mixed.flux(CTX));
    long first = all.stream().filter(i -> i < 1_000_000L).count();
    assertEquals(40, first, "the pass ends only when source 0, drawn, is found exhausted");
    assertTrue(all.size() < 440);
    assertEquals(all.size(), mixed.cardinality(CTX));
  }

  @Test
  void aCycledSourceRepeatsThroughItsOwnShuffledEpochsWhileTheOtherIsReadOnce() {
    Pipeline<Example> big = source(0, 2_000);
    Pipeline<Example> small = Pipeline.from(Datasets.range(10)).shuffle().map(e -> e.withIndex(1_000_000L + e.index()));
    Pipeline<Example> mixed = Pipeline.sample(List.of(big, small), new double[] {0.5, 0.5},
        MixOptions.defaults().withCycled(1));
    List<Long> all = indices(mixed.flux(CTX));
    List<Long> bigOnes = all.stream().filter(i -> i < 1_000_000L).toList();
    assertEquals(indices(big.flux(CTX)), bigOnes, "the big source is read once, in order");
    List<Long> smallOnes = all.stream().filter(i -> i >= 1_000_000L).toList();
    assertTrue(smallOnes.size() > 1_500, "the small source repeats: " + smallOnes.size());
    Set<List<Long>> orders = new HashSet<>();
    for (int c = 0; c + 10 <= smallOnes.size(); c += 10) {
      List<Long> cycle = smallOnes.subList(c, c + 10);
      assertEquals(10, new HashSet<>(cycle).size(), "cycle " + c / 10 + " is a permutation: " + cycle);
      orders.add(cycle);
    }
    assertTrue(orders.size() > 10, "each cycle has its own shuffle");
    assertEquals(all.size(), mixed.cardinality(CTX));
  }

  @Test
  void fourRanksOverShardedSourcesSeeEachRowOnceInTheWeightsProportions() {
    int world = 4;
    long[] sizes = {200_000, 120_000, 80_000};
    long[] counts = new long[3];
    List<Set<Long>> seen = List.of(new HashSet<>(), new HashSet<>(), new HashSet<>());
    for (int rank = 0; rank < world; rank++) {
      List<Pipeline<Example>> sources = new ArrayList<>();
      for (int s = 0; s < 3; s++) {
        int src = s;
        sources.add(Pipeline.from(Datasets.range(sizes[s])).shuffle().shard(world, rank)
            .map(e -> e.withIndex(src * 1_000_000L + e.index())));
      }
      PipelineContext ctx = CTX.withRank(rank, world);
      Pipeline.sample(sources, WEIGHTS).take(25_000).flux(ctx).doOnNext(e -> {
        int s = sourceOf(e);
        counts[s]++;
        assertTrue(seen.get(s).add(e.index()), () -> "row " + e.index() + " seen twice");
      }).blockLast();
    }
    for (int i = 0; i < 3; i++) {
      assertEquals(WEIGHTS[i], counts[i] / 100_000.0, 0.01, "source " + i);
    }
  }

  @Test
  void theWholeEpochOfFourRanksCoversEverySourceRowExactlyOnce() {
    int world = 4;
    long[] sizes = {400, 240, 160};
    List<Set<Long>> seen = List.of(new HashSet<>(), new HashSet<>(), new HashSet<>());
    for (int rank = 0; rank < world; rank++) {
      List<Pipeline<Example>> sources = new ArrayList<>();
      for (int s = 0; s < 3; s++) {
        int src = s;
        sources.add(Pipeline.from(Datasets.range(sizes[s])).shuffle().shard(world, rank, EqualLength.UNEVEN)
            .map(e -> e.withIndex(src * 1_000_000L + e.index())));
      }
      Pipeline.sample(sources, WEIGHTS).flux(CTX.withRank(rank, world).withEpoch(2)).doOnNext(e ->
          assertTrue(seen.get(sourceOf(e)).add(e.index()), () -> "row " + e.index() + " seen twice")).blockLast();
    }
    for (int s = 0; s < 3; s++) {
      assertEquals(sizes[s], seen.get(s).size());
    }
  }

  @Test
  void aShardAfterSampleIsRefusedNamingTheFix() {
    Pipeline<Example> mixed = Pipeline.sample(List.of(source(0, 10), source(1, 10)), new double[] {1, 1});
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> mixed.shard(2, 0));
    assertTrue(e.getMessage().contains("shard each source"), e.getMessage());
  }

  @Test
  void badWeightsAreRefusedNamingTheValue() {
    List<Pipeline<Example>> two = List.of(source(0, 10), source(1, 10));
    assertTrue(assertThrows(IllegalArgumentException.class, () -> Pipeline.sample(two, new double[] {1}))
        .getMessage().contains("2 sources but 1 weights"));
    assertTrue(assertThrows(IllegalArgumentException.class, () -> Pipeline.sample(two, new double[] {1, -0.5}))
        .getMessage().contains("weights[1]"));
    assertTrue(assertThrows(IllegalArgumentException.class, () -> Pipeline.sample(two, new double[] {0, 0}))
        .getMessage().contains("not all be 0"));
    assertTrue(assertThrows(IllegalArgumentException.class,
        () -> Pipeline.sample(two, new double[] {1, 1}, MixOptions.defaults().withCycled(2))).getMessage()
        .contains("cycled source 2"));
  }

  @Test
  void resumedAtRandomPointsTheContinuationIsIdentical() {
    Pipeline<Batch> p = Pipeline.sample(List.of(
            Pipeline.from(Datasets.range(300)).shuffle().map(e -> e.withIndex(e.index())),
            Pipeline.from(Datasets.range(90)).shuffle().map(e -> e.withIndex(1_000 + e.index())),
            Pipeline.from(Datasets.range(40)).map(e -> e.withIndex(2_000 + e.index()))), WEIGHTS)
        .batch(7).prefetch(2);
    assertResumesExactly(p, CTX, 3, List.of(0.13, 0.5, 0.77, 0.91));
  }

  @Property(tries = 40)
  void everyCutResumesExactly(@ForAll @Size(min = 1, max = 4) List<@IntRange(min = 0, max = 40) Integer> lengths,
      @ForAll @Size(min = 4, max = 4) List<@DoubleRange(min = 0, max = 1) Double> weights, @ForAll boolean stop,
      @ForAll boolean cycleLast, @ForAll @IntRange(min = 1, max = 2) int epochs, @ForAll long seed,
      @ForAll @Size(min = 1, max = 3) List<@DoubleRange(min = 0, max = 1) Double> cuts) {
    List<Pipeline<Example>> sources = new ArrayList<>();
    double[] w = new double[lengths.size()];
    for (int s = 0; s < lengths.size(); s++) {
      int src = s;
      sources.add(Pipeline.from(Datasets.range(lengths.get(s))).shuffle().map(e -> e.withIndex(src * 1_000L + e.index())));
      w[s] = weights.get(s) + 0.01;
    }
    MixOptions options = MixOptions.defaults().withStopOnEmptyDataset(stop);
    if (cycleLast && lengths.size() > 1) {
      options = options.withCycled(lengths.size() - 1);
    }
    Pipeline<Example> p = Pipeline.sample(sources, w, options);
    if (p.cardinality(CTX.withSeed(seed)) < 0) {
      p = p.take(500); // every source read once is empty and the cycled one never ends
    }
    assertResumesExactly(p, CTX.withSeed(seed), epochs, cuts);
  }

  @Test
  void aSourceOfUnknownLengthIsReplayedExactly() {
    Pipeline<Example> streaming = Pipeline.from(TestSources.streaming(Datasets.range(60)))
        .map(e -> e.withIndex(5_000 + e.index()));
    Pipeline<Example> p = Pipeline.sample(List.of(source(0, 100), streaming), new double[] {0.3, 0.7});
    assertEquals(-1, p.cardinality(CTX));
    assertResumesExactly(p, CTX, 2, List.of(0.2, 0.6));
  }

  @Test
  void aMixOverASourceThatCannotBeResumedRefusesToResumeNamingIt() {
    Pipeline<Example> unordered = Pipeline.from(Datasets.range(50)).map(e -> e, 2, false);
    Pipeline<Example> p = Pipeline.sample(List.of(source(0, 50), unordered), new double[] {1, 1});
    UnsupportedOperationException e = assertThrows(UnsupportedOperationException.class, () -> p.withState(CTX));
    assertTrue(e.getMessage().contains("source 1 of sample(") && e.getMessage().contains("deterministic"),
        e.getMessage());
  }

  @Test
  void aStateIsRefusedOnAMixOfOtherSources() {
    Pipeline<Example> p = Pipeline.sample(List.of(source(0, 50), source(1, 50)), new double[] {1, 1});
    PipelineState state = p.withState(CTX).take(10).blockLast().state();
    Pipeline<Example> other = Pipeline.sample(List.of(source(0, 50), source(1, 51)), new double[] {1, 1});
    assertThrows(dev.sluice.core.CheckpointException.class, () -> other.resume(state).blockLast());
  }

  @Test
  void explainShowsTheMixAndEachSourcesOwnPlan() {
    Pipeline<Batch> p = Pipeline.sample(List.of(Pipeline.from(Datasets.range(100)).shuffle().batch(4),
        Pipeline.from(Datasets.range(10)).batch(4)), new double[] {1, 1}).prefetch(2);
    String explain = p.explain();
    assertTrue(explain.startsWith("Pipeline over sample("), explain);
    assertTrue(explain.contains("source 0: Pipeline over"), explain);
    assertTrue(explain.contains("source 1: Pipeline over"), explain);
    assertTrue(explain.contains("index"), explain);
    assertTrue(explain.contains("prefetch(2)"), explain);
  }

  @Test
  void theMixCountsTheElementsItTookFromEachSource() {
    MeterRegistry registry = new SimpleMeterRegistry();
    Pipeline<Example> first = source(0, 5_000);
    first = first.withOptions(first.options().toBuilder().metrics(registry).name("mix").build());
    Pipeline<Example> mixed = Pipeline.sample(List.of(first, source(1, 5_000), source(2, 5_000)), WEIGHTS).take(6_000);
    long[] counts = new long[3];
    mixed.flux(CTX).doOnNext(e -> counts[sourceOf(e)]++).blockLast();
    for (int i = 0; i < 3; i++) {
      Counter c = registry.find("sluice.stage.mix.elements").tags("pipeline", "mix", "source", Integer.toString(i),
          "operator", "sample").counter();
      assertTrue(c != null, "counter of source " + i + " in " + registry.getMeters());
      assertEquals(counts[i], (long) c.count(), "source " + i);
    }
    StageReport report = StageReport.of(registry, "mix");
    assertTrue(report.table().contains("mix.elements[0] " + counts[0]), report.table());
  }

  /** Batches of 4 of source {@code s}: off-heap memory the mix must release. */
  static Pipeline<Batch> batches(int s, long n) {
    return Pipeline.from(Datasets.synthetic(n, 8, s)).shuffle().batch(4);
  }

  @Test
  void backpressuredTheMixEmitsOnlyWhatIsRequested() {
    Pipeline<Batch> p = Pipeline.sample(List.of(batches(0, 64), batches(1, 64)), new double[] {1, 1});
    StepVerifier.create(p.flux(CTX).doOnNext(Batch::close), 0)
        .expectSubscription()
        .expectNoEvent(Duration.ofMillis(20))
        .thenRequest(3)
        .expectNextCount(3)
        .expectNoEvent(Duration.ofMillis(20))
        .thenRequest(Long.MAX_VALUE)
        .expectNextCount(29)
        .verifyComplete();
  }

  @Test
  void cancelReleasesEveryQueuedBatch() {
    Pipeline<Batch> p = Pipeline.sample(List.of(batches(0, 400), batches(1, 400), batches(2, 400)), WEIGHTS)
        .prefetch(3);
    StepVerifier.create(p.flux(CTX).doOnNext(Batch::close), 0)
        .thenRequest(5)
        .expectNextCount(5)
        .thenCancel()
        .verify(Duration.ofSeconds(10));
    TestSources.awaitNoOutstanding();
    assertEquals(0, MemoryManager.shared().outstandingBytes());
  }

  @Test
  void cancelRacingSourcesThatProduceOnOtherThreadsReleasesEverything() {
    for (int run = 0; run < 100; run++) {
      Pipeline<Batch> p = Pipeline.sample(List.of(batches(0, 200).prefetch(3), batches(1, 200).prefetch(3),
          batches(2, 200).map(b -> b, 2)), WEIGHTS);
      StepVerifier.create(p.flux(CTX.withEpoch(run)).doOnNext(Batch::close), 0)
          .thenRequest(1 + run % 4)
          .expectNextCount(1 + run % 4)
          .thenCancel()
          .verify(Duration.ofSeconds(10));
      TestSources.awaitNoOutstanding();
    }
    assertEquals(0, MemoryManager.shared().outstandingBytes());
  }

  @Test
  void anEarlyEndReleasesWhatTheOtherSourcesHadQueued() {
    Pipeline<Batch> p = Pipeline.sample(List.of(batches(0, 40), batches(1, 4_000), batches(2, 4_000)), WEIGHTS,
        MixOptions.defaults().withStopOnEmptyDataset(true));
    long n = p.flux(CTX).doOnNext(Batch::close).count().block();
    assertTrue(n >= 10 && n < 2_010, "ends when the drawn first source is exhausted: " + n);
    TestSources.awaitNoOutstanding();
    assertEquals(0, MemoryManager.shared().outstandingBytes());
  }

  @Test
  void anEndRacingSourcesThatProduceOnOtherThreadsReleasesWhatTheyDeliverLate() {
    for (int run = 0; run < 100; run++) {
      // source 0 ends after 1..3 batches while the others keep producing on their own threads
      Pipeline<Batch> p = Pipeline.sample(List.of(batches(0, 4 + 4 * (run % 3)), batches(1, 4_000).prefetch(8),
          batches(2, 4_000).map(b -> b, 3)), new double[] {0.6, 0.2, 0.2}, run, true);
      p.flux(CTX).doOnNext(Batch::close).blockLast(Duration.ofSeconds(10));
      TestSources.awaitNoOutstanding();
    }
    assertEquals(0, MemoryManager.shared().outstandingBytes());
  }

  @Test
  void anErrorOfOneSourceEndsThePassAndReleasesTheOthers() {
    Pipeline<Batch> failing = Pipeline.from(TestSources.failingAt(400, 37)).batch(4);
    Pipeline<Batch> p = Pipeline.sample(List.of(batches(0, 400), failing), new double[] {1, 1});
    StepVerifier.create(p.flux(CTX))
        .thenConsumeWhile(b -> {
          b.close();
          return true;
        })
        .expectErrorSatisfies(e -> assertTrue(String.valueOf(e.getMessage()).contains("37"), e.toString()))
        .verify(Duration.ofSeconds(10));
    TestSources.awaitNoOutstanding();
    assertEquals(0, MemoryManager.shared().outstandingBytes());
  }

  @Test
  void thePlainFluxFormDrawsTheSameWayForTheSameSeed() {
    List<Flux<Integer>> sources = List.of(Flux.range(0, 1_000), Flux.range(10_000, 1_000));
    List<Integer> a = Mixing.sample(sources, new double[] {0.8, 0.2}, 4).collectList().block();
    assertEquals(a, Mixing.sample(sources, new double[] {0.8, 0.2}, 4).collectList().block());
    assertEquals(2_000, a.size());
    long firstHalf = a.subList(0, 500).stream().filter(i -> i < 10_000).count();
    assertTrue(firstHalf > 340 && firstHalf < 460, "about 80% from source 0: " + firstHalf);
  }

  @Test
  void aPositionedMixCarriesItsStateAfterEachElement() {
    Pipeline<Example> p = Pipeline.sample(List.of(source(0, 5), source(1, 5)), new double[] {1, 1});
    List<Positioned<Example>> all = p.withState(CTX).collectList().block();
    assertEquals(10, all.size());
    assertEquals(10, all.get(9).state().position());
  }
}
