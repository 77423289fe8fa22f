package dev.sluice.operators;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.core.Batch;
import dev.sluice.core.Dataset;
import dev.sluice.core.DatasetFormatException;
import dev.sluice.core.Datasets;
import dev.sluice.core.Example;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.testing.NoLeaks;
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
import reactor.test.StepVerifier;

/**
 * The contract every operator keeps (Reactor's FluxOperatorTest idea), run over each operator on
 * the index plan and on the element path: a normal pass, a backpressured pass, cancel after one
 * element, an upstream error, and resubscription with the same context — each leaving zero
 * off-heap bytes outstanding.
 */
@ExtendWith(NoLeaks.class)
class OperatorContractTest {
  private static final PipelineContext CTX = PipelineContext.defaults().withSeed(11).withEpoch(2);

  record Case(String name, Function<Dataset<Example>, Pipeline<?>> build) {
    @Override
    public String toString() {
      return name;
    }
  }

  static Stream<Arguments> operators() {
    List<Case> cases = List.of(
        new Case("shuffle", d -> Pipeline.from(d).shuffle()),
        new Case("shard PAD", d -> Pipeline.from(d).shard(3, 2)),
        new Case("shard DROP", d -> Pipeline.from(d).shard(4, 1, EqualLength.DROP)),
        new Case("shard UNEVEN", d -> Pipeline.from(d).shard(5, 4, EqualLength.UNEVEN)),
        new Case("take", d -> Pipeline.from(d).take(37)),
        new Case("skip", d -> Pipeline.from(d).skip(13)),
        new Case("batch", d -> Pipeline.from(d).batch(8)),
        new Case("batch dropRemainder", d -> Pipeline.from(d).batch(8, true)),
        new Case("batch parallel", d -> Pipeline.from(d).batch(8, false, 3)),
        new Case("prefetch", d -> Pipeline.from(d).prefetch(3)),
        new Case("repeat", d -> Pipeline.from(d).repeat(2)),
        new Case("shuffle shard batch prefetch", d -> Pipeline.from(d).shuffle().shard(2, 1).batch(16, false, 2).prefetch(2)),
        new Case("batch take skip", d -> Pipeline.from(d).batch(5).skip(2).take(4)));
    return cases.stream().flatMap(c -> Stream.of(
        Arguments.of(c, false), // index plan over range(100)
        Arguments.of(c, true))); // element path over a streaming range(100)
  }

  private static Dataset<Example> source(boolean streaming, Dataset<Example> d) {
    return streaming ? TestSources.streaming(d) : d;
  }

  private static boolean shuffleOnStream(Case c, boolean streaming) {
    return streaming && c.name().startsWith("shuffle");
  }

  private static Flux<Long> indices(Pipeline<?> p) {
    return p.flux(CTX).concatMapIterable(o -> {
      if (o instanceof Batch b) {
        try (b) {
          return java.util.Arrays.stream(b.indices()).boxed().toList();
        }
      }
      Example e = (Example) o;
      e.fields(); // read it as a consumer would: a lazy row (Example.lazy) is read on first access
      return List.of(e.index());
    });
  }

  @ParameterizedTest(name = "{0}, streaming={1}")
  @MethodSource("operators")
  void normalBackpressuredAndResubscribed(Case c, boolean streaming) {
    if (shuffleOnStream(c, streaming)) {
      return; // the global shuffle needs random access (checked in PipelineTest)
    }
    Pipeline<?> p = c.build().apply(source(streaming, Datasets.range(100)));
    List<Long> first = indices(p).collectList().block();
    assertEquals(first, indices(p).collectList().block(), "same context, same elements");
    StepVerifier.create(indices(p), 0)
        .thenRequest(1)
        .expectNextCount(Math.min(1, first.size()))
        .thenRequest(Long.MAX_VALUE)
        .expectNextCount(Math.max(0, first.size() - 1))
        .verifyComplete();
  }

  @ParameterizedTest(name = "{0}, streaming={1}")
  @MethodSource("operators")
  void cancelAfterOneReleasesEverything(Case c, boolean streaming) throws InterruptedException {
    if (shuffleOnStream(c, streaming)) {
      return;
    }
    Pipeline<?> p = c.build().apply(source(streaming, Datasets.range(1000)));
    CountDownLatch done = new CountDownLatch(1);
    StepVerifier.create(p.flux(CTX).doFinally(s -> done.countDown()), 1)
        .consumeNextWith(o -> {
          if (o instanceof Batch b) {
            b.close();
          }
        })
        .thenCancel()
        .verify();
    assertTrue(done.await(10, TimeUnit.SECONDS));
    TestSources.awaitNoOutstanding();
  }

  @ParameterizedTest(name = "{0}, streaming={1}")
  @MethodSource("operators")
  void upstreamErrorIsPassedOnAndReleasesEverything(Case c, boolean streaming) {
    if (shuffleOnStream(c, streaming)) {
      return;
    }
    List<Long> complete = indices(c.build().apply(source(streaming, Datasets.range(100)))).collectList().block();
    long bad = complete.get(complete.size() / 2); // an element the pass reads
    Pipeline<?> p = c.build().apply(source(streaming, TestSources.failingAt(100, bad)));
    List<Long> before = new java.util.ArrayList<>();
    StepVerifier.create(indices(p))
        .thenConsumeWhile(x -> before.add(x))
        .expectErrorSatisfies(e -> {
          assertTrue(e instanceof DatasetFormatException, e.toString());
          assertTrue(e.getMessage().contains("row " + bad), e.getMessage());
        })
        .verify();
    assertEquals(complete.subList(0, before.size()), before, "the elements before the error are the pass's");
    TestSources.awaitNoOutstanding();
  }
}
