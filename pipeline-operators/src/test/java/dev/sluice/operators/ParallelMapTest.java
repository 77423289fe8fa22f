package dev.sluice.operators;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.core.Batch;
import dev.sluice.core.Datasets;
import dev.sluice.core.Example;
import dev.sluice.core.MemoryLimitException;
import dev.sluice.core.MemoryManager;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.Tensor;
import dev.sluice.core.testing.NoLeaks;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import java.util.stream.IntStream;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;

@ExtendWith(NoLeaks.class)
class ParallelMapTest {
  private static final PipelineContext CTX = PipelineContext.defaults().withSeed(5);

  /** Work whose duration varies per element, so parallel workers finish out of order. */
  private static long work(int v) {
    long x = v;
    for (int i = 0; i < (v * 7919) % 2000; i++) {
      x = x * 6364136223846793005L + 1442695040888963407L;
    }
    return x;
  }

  private static List<Long> expected(int n) {
    return IntStream.range(0, n).mapToObj(ParallelMapTest::work).toList();
  }

  @Test
  void deterministicMapKeepsTheOrderForAnyParallelismChunkAndPrefetch() {
    List<Long> expected = expected(3000);
    for (int parallel : new int[] {1, 2, 3, 8, ParallelMap.AUTOTUNE}) {
      for (int chunk : new int[] {1, 7, 64}) {
        for (int prefetch : new int[] {1, 32, 256}) {
          List<Long> out = Flux.range(0, 3000)
              .transform(ParallelMap.<Integer, Long>map(ParallelMapTest::work, parallel, true, chunk, Schedulers.parallel()))
              .publishOn(Schedulers.single(), prefetch)
              .collectList().block(Duration.ofSeconds(30));
          assertEquals(expected, out, "parallel " + parallel + " chunk " + chunk + " prefetch " + prefetch);
        }
      }
    }
  }

  @Test
  void nonDeterministicMapEmitsEveryElementOnce() {
    List<Long> out = new ArrayList<>(Flux.range(0, 3000).transform(ParallelMap.<Integer, Long>map(ParallelMapTest::work, 4, false))
        .collectList().block(Duration.ofSeconds(30)));
    List<Long> expected = new ArrayList<>(expected(3000));
    Collections.sort(out);
    Collections.sort(expected);
    assertEquals(expected, out);
  }

  @Test
  void backpressuredOneAtATime() {
    StepVerifier.Step<Integer> step = StepVerifier.create(
        Flux.range(0, 100).transform(ParallelMap.<Integer, Integer>map(x -> x * 2, 3, true, 8, Schedulers.parallel())), 0);
    for (int i = 0; i < 100; i++) {
      step = step.thenRequest(1).expectNext(2 * i);
    }
    step.thenRequest(1).expectComplete().verify(Duration.ofSeconds(10));
  }

  @Test
  void cancelReleasesEveryBatchInChunksAndInFlight() throws InterruptedException {
    for (int parallel : new int[] {1, 3}) {
      CountDownLatch done = new CountDownLatch(1);
      List<Batch> got = new ArrayList<>();
      StepVerifier.create(ElementTestSupport.batches(500)
              .transform(ParallelMap.<Batch, Batch>map(Function.identity(), parallel, true, 16, Schedulers.parallel()))
              .doFinally(s -> done.countDown())
              .doOnDiscard(Batch.class, Batch::close), 10)
          .recordWith(() -> got)
          .expectNextCount(10)
          .thenCancel()
          .verify(Duration.ofSeconds(10));
      got.forEach(Batch::close);
      assertTrue(done.await(10, TimeUnit.SECONDS));
      TestSources.awaitNoOutstanding();
    }
  }

  @Test
  void cancelDiscardsEveryElementReceivedAndNotEmitted() {
    for (int parallel : new int[] {1, 2, 3}) {
      List<Integer> delivered = Collections.synchronizedList(new ArrayList<>());
      List<Integer> emitted = Collections.synchronizedList(new ArrayList<>());
      List<Integer> discarded = Collections.synchronizedList(new ArrayList<>());
      StepVerifier.create(Flux.range(0, 10).concatWith(Flux.never()).doOnNext(delivered::add)
              .transform(ParallelMap.<Integer, Integer>map(x -> x, parallel, true, 4, Schedulers.immediate()))
              .doOnNext(emitted::add)
              .doOnDiscard(Integer.class, discarded::add), 0)
          .thenRequest(2)
          .expectNext(0, 1)
          .thenAwait(Duration.ofMillis(10))
          .thenCancel()
          .verify(Duration.ofSeconds(5));
      List<Integer> held = new ArrayList<>(delivered);
      held.removeAll(emitted);
      List<Integer> sorted = new ArrayList<>(discarded);
      Collections.sort(sorted);
      assertEquals(held, sorted, "parallel " + parallel);
    }
  }

  @Test
  void cancelRacingWorkersAndUpstreamLeaksNothing() throws InterruptedException {
    for (int round = 0; round < 200; round++) {
      CountDownLatch done = new CountDownLatch(1);
      List<Batch> got = Collections.synchronizedList(new ArrayList<>());
      reactor.core.publisher.BaseSubscriber<Batch> sub = new reactor.core.publisher.BaseSubscriber<>() {
        @Override
        protected void hookOnSubscribe(org.reactivestreams.Subscription s) {
          s.request(10);
        }

        @Override
        protected void hookOnNext(Batch b) {
          got.add(b);
        }
      };
      ElementTestSupport.batches(300).subscribeOn(Schedulers.parallel())
          .transform(ParallelMap.<Batch, Batch>map(Function.identity(), 3, round % 2 == 0, 8, Schedulers.parallel()))
          .doFinally(s -> done.countDown())
          .doOnDiscard(Batch.class, Batch::close)
          .subscribe(sub);
      reactor.test.util.RaceTestUtils.race(sub::cancel, () -> sub.request(5));
      assertTrue(done.await(10, TimeUnit.SECONDS));
      int r = round;
      Awaitility.await().pollDelay(Duration.ZERO).pollInterval(Duration.ofMillis(1)).atMost(Duration.ofSeconds(10)).until(() -> {
        synchronized (got) {
          got.forEach(Batch::close);
        }
        return MemoryManager.shared().outstandingBytes() == 0;
      });
    }
  }

  @Test
  void cancelRacingOnNextEmitsOrDiscardsEveryElementExactlyOnce() throws InterruptedException {
    for (int round = 0; round < 300; round++) {
      boolean adaptive = round % 2 == 0;
      List<Integer> delivered = Collections.synchronizedList(new ArrayList<>());
      List<Integer> accounted = Collections.synchronizedList(new ArrayList<>());
      CountDownLatch done = new CountDownLatch(1);
      reactor.core.publisher.BaseSubscriber<Integer> sub = new reactor.core.publisher.BaseSubscriber<>() {
        @Override
        protected void hookOnSubscribe(org.reactivestreams.Subscription s) {
          s.request(3);
        }

        @Override
        protected void hookOnNext(Integer v) {
          accounted.add(v);
        }
      };
      Function<Flux<Integer>, Flux<Integer>> map = adaptive
          ? ParallelMap.map(x -> x, 2, round % 4 == 0)
          : ParallelMap.map(x -> x, 2, round % 4 == 1, 5, Schedulers.parallel());
      Flux.range(0, 100_000).subscribeOn(Schedulers.parallel()).doOnNext(delivered::add)
          .transform(map)
          .doFinally(s -> done.countDown())
          .doOnDiscard(Integer.class, accounted::add)
          .subscribe(sub);
      reactor.test.util.RaceTestUtils.race(sub::cancel, () -> sub.request(7));
      assertTrue(done.await(10, TimeUnit.SECONDS));
      Awaitility.await().pollDelay(Duration.ZERO).pollInterval(Duration.ofMillis(1)).atMost(Duration.ofSeconds(10))
          .until(() -> accounted.size() >= delivered.size());
      List<Integer> a;
      List<Integer> d;
      synchronized (accounted) {
        a = new ArrayList<>(accounted);
      }
      synchronized (delivered) {
        d = new ArrayList<>(delivered);
      }
      Collections.sort(a);
      Collections.sort(d);
      assertEquals(d, a, "round " + round + ": every element delivered is emitted or discarded, once");
    }
  }

  @Test
  void anExpensiveFunctionIsMappedOnTheWorkers() {
    List<String> threads = Flux.range(0, 400)
        .transform(ParallelMap.<Integer, String>map(x -> {
          long deadline = System.nanoTime() + 50_000; // 50 µs of work per element
          long acc = x;
          while (System.nanoTime() < deadline) {
            acc = acc * 6364136223846793005L + 1;
          }
          return Thread.currentThread().getName() + (acc == 42 ? "!" : "");
        }, 2, true))
        .collectList().block(Duration.ofSeconds(30));
    assertEquals(400, threads.size());
    assertTrue(threads.stream().anyMatch(t -> t.startsWith("parallel-")), "no element was mapped on a worker");
  }

  @Test
  void aNullResultIsAnErrorAfterTheResultsBeforeIt() {
    for (Function<Flux<Integer>, Flux<Integer>> map : List.<Function<Flux<Integer>, Flux<Integer>>>of(
        ParallelMap.map(x -> x == 5 ? null : x, 2, true),
        ParallelMap.map(x -> x == 5 ? null : x, 2, true, 3, Schedulers.parallel()))) {
      StepVerifier.create(Flux.range(0, 10).transform(map))
          .expectNext(0, 1, 2, 3, 4)
          .expectErrorSatisfies(e -> assertTrue(e instanceof NullPointerException
              && e.getMessage().contains("null value"), e.toString()))
          .verify(Duration.ofSeconds(10));
    }
  }

  @Test
  void functionErrorPropagatesAndReleasesBatches() {
    StepVerifier.create(ElementTestSupport.batches(200)
            .transform(ParallelMap.<Batch, Batch>map(b -> {
              if (b.index(0) == 77) {
                b.close();
                throw new IllegalArgumentException("bad sample 77");
              }
              return b;
            }, 4, true, 8, Schedulers.parallel()))
            .doOnNext(Batch::close)
            .doOnDiscard(Batch.class, Batch::close))
        .expectNextCount(77)
        .expectErrorMessage("bad sample 77")
        .verify(Duration.ofSeconds(10));
    TestSources.awaitNoOutstanding();
  }

  @Test
  void upstreamErrorPropagatesAfterTheMappedElements() {
    // as with a sequential map: the elements before the error are mapped and emitted, then the error
    for (int chunk : new int[] {1, 2, 64}) {
      StepVerifier.create(Flux.range(0, 5).concatWith(Flux.error(new IllegalStateException("upstream")))
              .transform(ParallelMap.<Integer, Integer>map(x -> x + 1, 2, true, chunk, Schedulers.parallel())))
          .expectNext(1, 2, 3, 4, 5)
          .expectErrorMessage("upstream")
          .verifyThenAssertThat()
          .hasNotDiscardedElements();
    }
    StepVerifier.create(Flux.range(0, 5).concatWith(Flux.error(new IllegalStateException("upstream")))
            .transform(ParallelMap.<Integer, Integer>map(x -> x + 1, 2)))
        .expectNext(1, 2, 3, 4, 5)
        .expectErrorMessage("upstream")
        .verify(Duration.ofSeconds(10));
  }

  @Test
  void augmentationDependsOnSeedEpochAndIndexNotOnParallelism() {
    Function<Integer, Flux<Long>> noise = parallel -> Flux.fromIterable(
            IntStream.range(0, 500).mapToObj(i -> Example.of(i, "value", Tensor.scalar((long) i))).toList())
        .transform(ParallelMap.<Long>augment((e, rnd) -> e.index() * 1000 + rnd.nextInt(1000), parallel, true));
    List<Long> seq = noise.apply(1).contextWrite(CTX.asReactorContext()).collectList().block();
    for (int parallel : new int[] {2, 4}) {
      assertEquals(seq, noise.apply(parallel).contextWrite(CTX.asReactorContext()).collectList().block(Duration.ofSeconds(10)));
    }
    List<Long> nextEpoch = noise.apply(2).contextWrite(CTX.nextEpoch().asReactorContext()).collectList().block(Duration.ofSeconds(10));
    assertNotEquals(seq, nextEpoch);
    // The generator of a sample is SampleRandom.of(ctx, index).
    assertEquals(17 * 1000 + SampleRandom.of(CTX, 17).nextInt(1000), seq.get(17));
  }

  @Test
  void mapWithContextSeesThePipelineContext() {
    StepVerifier.create(Flux.just(1, 2)
            .transform(ParallelMap.<Integer, Long>mapWithContext((x, ctx) -> ctx.epoch() * 10 + x, 2, true))
            .contextWrite(CTX.withEpoch(3).asReactorContext()))
        .expectNext(31L, 32L)
        .verifyComplete();
  }

  @Test
  void repeatAdvancesTheEpochEachPass() {
    Flux<Long> epochs = Flux.deferContextual(v -> Flux.just(PipelineContext.from(v).epoch()));
    StepVerifier.create(epochs.transform(RepeatEpochs.repeat(3)).contextWrite(CTX.withEpoch(4).asReactorContext()))
        .expectNext(4L, 5L, 6L)
        .verifyComplete();
    List<Integer> twoEpochs = Datasets.range(20).flux().map(e -> (int) e.index())
        .transform(Shuffle.<Integer>buffer(20)).transform(RepeatEpochs.repeat(2))
        .contextWrite(CTX.asReactorContext()).collectList().block();
    List<Integer> first = twoEpochs.subList(0, 20);
    List<Integer> second = twoEpochs.subList(20, 40);
    assertNotEquals(first, second);
    assertEquals(first, Datasets.range(20).flux().map(e -> (int) e.index()).transform(Shuffle.<Integer>buffer(20))
        .contextWrite(CTX.asReactorContext()).collectList().block());
  }

  @Test
  void rejectsBadArguments() {
    assertEquals("numParallelCalls > 0 (or AUTOTUNE = -1) required but it was 0",
        assertThrows(IllegalArgumentException.class, () -> ParallelMap.map(x -> x, 0)).getMessage());
    assertEquals("chunkSize > 0 required but it was 0",
        assertThrows(IllegalArgumentException.class,
            () -> ParallelMap.map(x -> x, 2, true, 0, Schedulers.parallel())).getMessage());
  }

  @Test
  void aCancelEndsAWorkerWaitForMemoryWithoutAnInterrupt() throws InterruptedException {
    MemoryManager memory = new MemoryManager();
    memory.setLimit(1 << 20);
    memory.setMaxWait(Duration.ofMinutes(10)); // a wait would outlast the test
    var held = memory.pool("consumer").allocate(1 << 20); // what the consumer holds fills the limit
    for (boolean deterministic : new boolean[] {true, false}) {
      AtomicReference<Thread> worker = new AtomicReference<>();
      AtomicReference<Throwable> failure = new AtomicReference<>();
      AtomicBoolean interrupted = new AtomicBoolean();
      CountDownLatch done = new CountDownLatch(1);
      Function<Integer, Integer> allocate = v -> {
        worker.set(Thread.currentThread());
        try {
          memory.pool("map").allocate(4096).close();
        } catch (RuntimeException e) {
          failure.set(e);
        } finally {
          interrupted.set(Thread.currentThread().isInterrupted());
          done.countDown();
        }
        return v;
      };
      reactor.core.Disposable subscription = Flux.just(1)
          .transform(ParallelMap.map(allocate, 2, deterministic, 1, Schedulers.boundedElastic()))
          .subscribe();
      Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> waitsForMemory(worker.get()));
      subscription.dispose();
      assertTrue(done.await(1, TimeUnit.MINUTES), "the wait ended");
      assertThat(failure.get()).as("deterministic " + deterministic).isInstanceOf(MemoryLimitException.class)
          .hasMessageContaining("the pass was cancelled while it waited for memory");
      assertThat(interrupted).as("interrupted").isFalse();
    }
    held.close();
    memory.checkNoOutstanding();
  }

  private static boolean waitsForMemory(Thread t) {
    return t != null && Arrays.stream(t.getStackTrace()).anyMatch(
        f -> f.getClassName().equals(MemoryManager.class.getName()) && f.getMethodName().equals("await"));
  }
}
