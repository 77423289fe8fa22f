package dev.sluice.operators;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.core.Batch;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.testing.NoLeaks;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;

/**
 * The contract every element-path operator keeps (Reactor's {@code FluxOperatorTest} idea), run
 * over pooled batches so a leak fails the test: normal pass, backpressure one at a time, upstream
 * error, cancel (synchronous and asynchronous), and resubscription with the same context. Operators that
 * turn batches into other elements (bucketing, windows, enumerate) have the same cases in their own tests.
 */
@ExtendWith(NoLeaks.class)
class ElementOperatorContractTest {
  private static final PipelineContext CTX = PipelineContext.defaults().withSeed(8).withEpoch(2);
  private static final int N = 60;

  static Stream<Arguments> operators() {
    return Stream.of(
        Arguments.of("shuffle(16)", (Function<Flux<Batch>, Flux<Batch>>) Shuffle.<Batch>buffer(16)),
        Arguments.of("shuffle(1000)", (Function<Flux<Batch>, Flux<Batch>>) Shuffle.<Batch>buffer(1000)),
        Arguments.of("map(identity, 1)", (Function<Flux<Batch>, Flux<Batch>>) ParallelMap.<Batch, Batch>map(b -> b, 1)),
        Arguments.of("map(identity, 3)", (Function<Flux<Batch>, Flux<Batch>>) (f -> f.transform(
            ParallelMap.<Batch, Batch>map(b -> b, 3, true, 4, Schedulers.parallel())))),
        // Interleave inputs are descriptors (files): here groups of indices whose batches are made on read.
        Arguments.of("interleave(2, 3)", (Function<Flux<Batch>, Flux<Batch>>) (f -> indices(f).buffer(7).transform(
            Interleave.<List<Long>, Batch>of(l -> Flux.fromIterable(l).map(ElementTestSupport::batchOf), 2, 3)))),
        Arguments.of("interleave(3, 2, parallel)", (Function<Flux<Batch>, Flux<Batch>>) (f -> indices(f).buffer(5).transform(
            Interleave.<List<Long>, Batch>of(l -> Flux.fromIterable(l).map(ElementTestSupport::batchOf), 3, 2, 2, true)))),
        // The mixer behind sample, choose and concatenate, over the upstream as its one source.
        Arguments.of("sample of one source", (Function<Flux<Batch>, Flux<Batch>>) (f -> Mixing.<Batch>sample(List.of(f),
            new double[] {1}, 5))),
        Arguments.of("choose(0, 0, ...) of one source", (Function<Flux<Batch>, Flux<Batch>>) (f -> Mixing.<Batch>choose(
            Flux.range(0, Integer.MAX_VALUE).map(i -> 0), List.of(f)))),
        Arguments.of("rebatch(1)", (Function<Flux<Batch>, Flux<Batch>>) Rebatch.of(1)),
        Arguments.of("prefetch(AUTOTUNE)", (Function<Flux<Batch>, Flux<Batch>>) Prefetch.<Batch>of(Prefetch.AUTOTUNE)),
        Arguments.of("groupByWindow(index % 3, 4)", (Function<Flux<Batch>, Flux<Batch>>) GroupByWindow.<Batch, Batch>of(
            b -> b.index(0) % 3, (key, window) -> Flux.fromIterable(window), 4)),
        Arguments.of("scan", (Function<Flux<Batch>, Flux<Batch>>) Scan.<Integer, Batch, Batch>of(0,
            (n, b) -> Scan.Step.of(n + 1, b))),
        Arguments.of("map(identity, 3) + ignoreErrors", (Function<Flux<Batch>, Flux<Batch>>) (f -> f.transform(
            ParallelMap.<Batch, Batch>map(b -> b, 3, true, 4, Schedulers.parallel())).transform(IgnoreErrors.of()))),
        Arguments.of("shuffle(8) + map(3) + repeat(2)", (Function<Flux<Batch>, Flux<Batch>>) (f -> f
            .transform(Shuffle.<Batch>buffer(8)).transform(ParallelMap.<Batch, Batch>map(b -> b, 3))
            .transform(RepeatEpochs.repeat(2)))));
  }

  private static Flux<Long> indices(Flux<Batch> batches) {
    return batches.map(b -> {
      try (b) {
        return b.index(0);
      }
    });
  }

  private static Flux<Batch> apply(Function<Flux<Batch>, Flux<Batch>> op, Flux<Batch> source) {
    return source.transform(op).doOnDiscard(Batch.class, Batch::close).contextWrite(CTX.asReactorContext());
  }

  private static List<Long> drain(Flux<Batch> f) {
    List<Long> out = new ArrayList<>();
    f.doOnNext(b -> {
      try (b) {
        out.add(b.index(0));
      }
    }).blockLast(Duration.ofSeconds(20));
    return out;
  }

  private static void awaitNoLeak() {
    TestSources.awaitNoOutstanding();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("operators")
  void normalBackpressuredAndResubscribed(String name, Function<Flux<Batch>, Flux<Batch>> op) {
    List<Long> first = drain(apply(op, ElementTestSupport.batches(N)));
    assertEquals(name.contains("repeat") ? 2 * N : N, first.size(), name);
    assertEquals(first, drain(apply(op, ElementTestSupport.batches(N))), name + ": same context, same order");
    List<Long> oneByOne = new ArrayList<>();
    StepVerifier.Step<Batch> step = StepVerifier.create(apply(op, ElementTestSupport.batches(N)), 0);
    for (int i = 0; i < first.size(); i++) {
      step = step.thenRequest(1).assertNext(b -> {
        try (b) {
          oneByOne.add(b.index(0));
        }
      });
    }
    step.thenRequest(1).expectComplete().verify(Duration.ofSeconds(20));
    assertEquals(first, oneByOne, name + ": request(1) gives the same order");
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("operators")
  void upstreamErrorReleasesEverything(String name, Function<Flux<Batch>, Flux<Batch>> op) {
    StepVerifier.create(apply(op, ElementTestSupport.batches(N).concatWith(Flux.error(new IllegalStateException("source broke"))))
            .doOnNext(Batch::close))
        .thenConsumeWhile(b -> true)
        .expectErrorMessage("source broke")
        .verify(Duration.ofSeconds(20));
    awaitNoLeak();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("operators")
  void cancelReleasesEverything(String name, Function<Flux<Batch>, Flux<Batch>> op) throws InterruptedException {
    StepVerifier.create(apply(op, ElementTestSupport.batches(N)).doOnNext(Batch::close), 3)
        .expectNextCount(3)
        .thenCancel()
        .verify(Duration.ofSeconds(20));
    awaitNoLeak();
    CountDownLatch done = new CountDownLatch(1);
    StepVerifier.create(apply(op, ElementTestSupport.batches(N).subscribeOn(Schedulers.parallel()))
            .publishOn(Schedulers.single(), 2).doOnNext(Batch::close).doFinally(s -> done.countDown())
            .doOnDiscard(Batch.class, Batch::close), 5)
        .expectNextCount(5)
        .thenCancel()
        .verify(Duration.ofSeconds(20));
    assertTrue(done.await(10, TimeUnit.SECONDS));
    awaitNoLeak();
  }
}
