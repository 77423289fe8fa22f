package dev.sluice.operators;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.core.Batch;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.testing.NoLeaks;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.reactivestreams.Subscription;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;
import reactor.test.publisher.TestPublisher;
import reactor.test.util.RaceTestUtils;

@ExtendWith(NoLeaks.class)
class ShuffleTest {
  private static final PipelineContext CTX = PipelineContext.defaults().withSeed(11);

  private static List<Integer> run(int n, int bufferSize, PipelineContext ctx) {
    return Flux.range(0, n).transform(Shuffle.<Integer>buffer(bufferSize))
        .contextWrite(ctx.asReactorContext()).collectList().block();
  }

  private static List<Integer> sorted(List<Integer> l) {
    List<Integer> s = new ArrayList<>(l);
    Collections.sort(s);
    return s;
  }

  @Test
  void emitsAPermutationOfTheInput() {
    List<Integer> out = run(1000, 64, CTX);
    assertEquals(IntStream.range(0, 1000).boxed().toList(), sorted(out));
    assertNotEquals(IntStream.range(0, 1000).boxed().toList(), out);
  }

  @Test
  void bufferOfOneIsTheIdentity() {
    for (long seed = 0; seed < 5; seed++) {
      assertEquals(IntStream.range(0, 200).boxed().toList(), run(200, 1, CTX.withSeed(seed)));
    }
  }

  @Test
  void anElementMovesAtMostBufferSizeEarly() {
    // tf.data semantics: output position i can only hold input elements < i + bufferSize.
    List<Integer> out = run(500, 10, CTX);
    for (int i = 0; i < out.size(); i++) {
      assertTrue(out.get(i) < i + 10, "position " + i + " holds " + out.get(i));
    }
  }

  @Test
  void backpressuredOneAtATimeGivesTheSameOrder() {
    List<Integer> expected = run(50, 8, CTX);
    StepVerifier.Step<Integer> step = StepVerifier.create(
        Flux.range(0, 50).transform(Shuffle.<Integer>buffer(8)).contextWrite(CTX.asReactorContext()), 0);
    for (int v : expected) {
      step = step.thenRequest(1).expectNext(v);
    }
    step.thenRequest(1).verifyComplete();
  }

  @Test
  void cancelDiscardsExactlyWhatIsBuffered() {
    List<Integer> expected = run(30, 8, CTX);
    List<Integer> delivered = new ArrayList<>();
    StepVerifier.create(Flux.range(0, 30).doOnNext(delivered::add).transform(Shuffle.<Integer>buffer(8))
            .contextWrite(CTX.asReactorContext()), 3)
        .expectNextSequence(expected.subList(0, 3))
        .thenCancel()
        .verifyThenAssertThat()
        .hasDiscardedElementsSatisfying(d -> {
          // Everything received from upstream and not emitted was buffered, and is discarded once.
          Set<Integer> held = new HashSet<>(delivered);
          expected.subList(0, 3).forEach(held::remove);
          assertEquals(held, new HashSet<>(d));
          assertEquals(held.size(), d.size());
          assertTrue(d.size() >= 7 && d.size() <= 8, "held " + d.size());
        });
  }

  @Test
  void upstreamErrorDiscardsTheBufferAndPropagates() {
    IllegalStateException boom = new IllegalStateException("boom");
    StepVerifier.create(Flux.range(0, 5).concatWith(Flux.error(boom)).transform(Shuffle.<Integer>buffer(10)))
        .expectErrorSatisfies(e -> assertEquals(boom, e))
        .verifyThenAssertThat()
        .hasDiscardedElementsSatisfying(d -> assertEquals(Set.of(0, 1, 2, 3, 4), new HashSet<>(d)));
  }

  @Test
  void emptyUpstreamCompletes() {
    StepVerifier.create(Flux.<Integer>empty().transform(Shuffle.<Integer>buffer(10))).verifyComplete();
  }

  @Test
  void resubscriptionRepeatsTheOrderAndTheNextEpochChangesIt() {
    Flux<Integer> shuffled = Flux.range(0, 100).transform(Shuffle.<Integer>buffer(100));
    List<Integer> a = shuffled.contextWrite(CTX.asReactorContext()).collectList().block();
    List<Integer> b = shuffled.contextWrite(CTX.asReactorContext()).collectList().block();
    List<Integer> next = shuffled.contextWrite(CTX.nextEpoch().asReactorContext()).collectList().block();
    List<Integer> otherSeed = shuffled.contextWrite(CTX.withSeed(12).asReactorContext()).collectList().block();
    assertEquals(a, b);
    assertNotEquals(a, next);
    assertNotEquals(a, otherSeed);
    assertEquals(sorted(a), sorted(next));
  }

  @Test
  void ownSeedOverridesTheContextAndReshuffleFalseKeepsTheOrder() {
    Flux<Integer> own = Flux.range(0, 100).transform(Shuffle.<Integer>buffer(100, 5L, false));
    List<Integer> e0 = own.contextWrite(CTX.asReactorContext()).collectList().block();
    List<Integer> e3 = own.contextWrite(CTX.withEpoch(3).withSeed(99).asReactorContext()).collectList().block();
    assertEquals(e0, e3);
    Flux<Integer> reshuffled = Flux.range(0, 100).transform(Shuffle.<Integer>buffer(100, 5L));
    List<Integer> r0 = reshuffled.contextWrite(CTX.asReactorContext()).collectList().block();
    assertEquals(r0, reshuffled.contextWrite(CTX.withSeed(99).asReactorContext()).collectList().block());
    assertNotEquals(r0, reshuffled.contextWrite(CTX.withEpoch(1).asReactorContext()).collectList().block());
  }

  @Test
  void withoutAContextTheSeedIsZeroAndTheEpochIsZero() {
    assertEquals(run(50, 20, PipelineContext.defaults()),
        Flux.range(0, 50).transform(Shuffle.<Integer>buffer(20)).collectList().block());
  }

  /**
   * With bufferSize ≥ n every one of the n! orders is equally likely. 24 permutations of 4 elements,
   * 4,800 independent seeds: Pearson's chi-square (23 degrees of freedom) must stay below 49.73,
   * the critical value at significance level α = 0.001.
   */
  @Test
  void aBufferAtLeastTheInputIsAUniformPermutation() {
    int trials = 4800;
    Map<List<Integer>, Integer> counts = new HashMap<>();
    for (int seed = 0; seed < trials; seed++) {
      List<Integer> p = Flux.range(0, 4).transform(Shuffle.<Integer>buffer(4 + seed % 3, seed)).collectList().block();
      counts.merge(p, 1, Integer::sum);
    }
    assertEquals(24, counts.size());
    double expected = trials / 24.0;
    double chi2 = counts.values().stream().mapToDouble(c -> (c - expected) * (c - expected) / expected).sum();
    assertTrue(chi2 < 49.73, "chi-square " + chi2);
  }

  /**
   * Position of each element: 8 × 8 table, 8,000 seeds. A sum of permutation matrices has fixed row
   * and column sums, so Pearson's statistic scaled by (n-1)/n is chi-square with 49 df; it must stay
   * below 85.35 (α = 0.001).
   */
  @Test
  void everyElementIsEquallyLikelyAtEveryPosition() {
    int n = 8;
    int trials = 8000;
    long[][] table = new long[n][n];
    for (int seed = 0; seed < trials; seed++) {
      List<Integer> p = Flux.range(0, n).transform(Shuffle.<Integer>buffer(n)).contextWrite(CTX.withSeed(seed).asReactorContext())
          .collectList().block();
      for (int pos = 0; pos < n; pos++) {
        table[p.get(pos)][pos]++;
      }
    }
    double chi2 = PermutationStats.scaledChiSquare(table, trials);
    assertTrue(chi2 < 85.35, "scaled chi-square " + chi2);
  }

  @Test
  void neverHoldsMoreThanBufferSizeCountingUpstreamDemand() {
    SplittableRandom requests = new SplittableRandom(3);
    for (int bufferSize : new int[] {1, 3, 17, 100, 5000}) {
      ElementTestSupport.Counting<Integer> counting = new ElementTestSupport.Counting<>();
      AtomicLong emitted = new AtomicLong();
      AtomicLong worst = new AtomicLong();
      List<Integer> out = new ArrayList<>();
      Flux<Integer> f = counting.wrap(Flux.range(0, 20_000)).transform(Shuffle.<Integer>buffer(bufferSize))
          .doOnNext(x -> {
            emitted.incrementAndGet();
            worst.accumulateAndGet(counting.requested.get() - emitted.get(), Math::max);
          });
      f.subscribe(new BaseSubscriber<>() {
        @Override
        protected void hookOnSubscribe(Subscription s) {
          s.request(1);
        }

        @Override
        protected void hookOnNext(Integer v) {
          out.add(v);
          if (requests.nextInt(5) == 0) {
            request(1 + requests.nextInt(7));
          } else if (out.size() % 1 == 0 && requests.nextBoolean()) {
            request(1);
          } else {
            request(1);
          }
        }
      });
      assertEquals(20_000, out.size());
      assertTrue(worst.get() <= bufferSize, "requested - emitted = " + worst.get() + " > bufferSize " + bufferSize);
      assertEquals(20_000, counting.delivered.get());
    }
  }

  @Test
  void orderDoesNotDependOnThreadsOrRequestPattern() {
    List<Integer> expected = run(3000, 200, CTX);
    for (int prefetch : new int[] {1, 7, 256}) {
      List<Integer> async = Flux.range(0, 3000).publishOn(Schedulers.parallel(), prefetch)
          .transform(Shuffle.<Integer>buffer(200))
          .publishOn(Schedulers.boundedElastic(), 3)
          .contextWrite(CTX.asReactorContext())
          .collectList().block(Duration.ofSeconds(30));
      assertEquals(expected, async);
    }
  }

  @Test
  void cancelledPipelineOfBatchesReleasesEveryBatch() throws InterruptedException {
    CountDownLatch done = new CountDownLatch(1);
    List<Batch> got = new ArrayList<>();
    Flux<Batch> f = ElementTestSupport.batches(100)
        .subscribeOn(Schedulers.parallel())
        .transform(Shuffle.<Batch>buffer(16, 3L))
        .publishOn(Schedulers.single(), 2)
        .doFinally(s -> done.countDown())
        .doOnDiscard(Batch.class, Batch::close);
    StepVerifier.create(f, 5)
        .recordWith(() -> got)
        .expectNextCount(5)
        .thenCancel()
        .verify(Duration.ofSeconds(10));
    got.forEach(Batch::close);
    assertTrue(done.await(10, TimeUnit.SECONDS));
    // The discard hooks run on the worker; wait until the memory is back.
    TestSources.awaitNoOutstanding();
  }

  @Test
  void failedPipelineOfBatchesReleasesEveryBatch() {
    StepVerifier.create(ElementTestSupport.batches(40).concatWith(Flux.error(new IllegalStateException("x")))
            .transform(Shuffle.<Batch>buffer(64))
            .doOnDiscard(Batch.class, Batch::close))
        .verifyError(IllegalStateException.class);
  }

  @Test
  void completedPipelineOfBatchesHandsOverEveryBatch() {
    StepVerifier.create(ElementTestSupport.batches(40).transform(Shuffle.<Batch>buffer(7)).doOnNext(Batch::close))
        .expectNextCount(40)
        .verifyComplete();
  }

  @Test
  void cancelRacingOnNextLosesNoElement() {
    for (int round = 0; round < 2000; round++) {
      TestPublisher<Integer> source = TestPublisher.create();
      ConcurrentLinkedQueue<Integer> discarded = new ConcurrentLinkedQueue<>();
      List<Integer> emitted = new ArrayList<>();
      BaseSubscriber<Integer> sub = new BaseSubscriber<>() {
        @Override
        protected void hookOnSubscribe(Subscription s) {
          s.request(Long.MAX_VALUE);
        }

        @Override
        protected void hookOnNext(Integer v) {
          emitted.add(v);
        }
      };
      source.flux().transform(Shuffle.<Integer>buffer(4, round)).doOnDiscard(Integer.class, discarded::add).subscribe(sub);
      source.next(0, 1, 2, 3, 4);
      int r = round;
      RaceTestUtils.race(() -> source.next(5, 6), sub::cancel);
      Set<Integer> seen = new HashSet<>(emitted);
      seen.addAll(discarded);
      assertEquals(seen.size(), emitted.size() + discarded.size(), "round " + r);
      assertTrue(seen.containsAll(List.of(0, 1, 2, 3, 4)), "round " + r);
      // Whatever was delivered upstream is either emitted or discarded, never both, never lost.
      Set<Integer> delivered = new HashSet<>(List.of(0, 1, 2, 3, 4));
      if (seen.contains(5) || seen.contains(6)) {
        delivered.addAll(seen);
      }
      assertEquals(delivered, seen);
    }
  }

  @Test
  void cancelRacingDrainReleasesEveryBatch() {
    for (int round = 0; round < 500; round++) {
      List<Batch> got = new ArrayList<>();
      BaseSubscriber<Batch> sub = new BaseSubscriber<>() {
        @Override
        protected void hookOnSubscribe(Subscription s) {
          // no demand yet: the buffer fills
        }

        @Override
        protected void hookOnNext(Batch b) {
          synchronized (got) {
            got.add(b);
          }
        }
      };
      ElementTestSupport.batches(12).transform(Shuffle.<Batch>buffer(8, round))
          .doOnDiscard(Batch.class, Batch::close).subscribe(sub);
      RaceTestUtils.race(() -> sub.request(12), sub::cancel);
      synchronized (got) {
        got.forEach(Batch::close);
      }
      assertEquals(0, dev.sluice.core.MemoryManager.shared().outstandingBytes(), "round " + round);
    }
  }

  @Test
  void rejectsANonPositiveBufferSize() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Shuffle.buffer(0));
    assertEquals("bufferSize > 0 required but it was 0", e.getMessage());
  }

  static Set<Integer> set(List<Integer> l) {
    return l.stream().collect(Collectors.toSet());
  }
}
