package dev.sluice.operators;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.sluice.core.Batch;
import dev.sluice.core.Datasets;
import dev.sluice.core.Example;
import dev.sluice.core.Options;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.testing.NoLeaks;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.stream.LongStream;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.DoubleRange;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import reactor.core.publisher.Flux;
import reactor.test.StepVerifier;

@ExtendWith(NoLeaks.class)
class IgnoreErrorsTest {
  static boolean bad(long i) {
    return i % 7 == 3;
  }

  /** The identity on examples, throwing for the bad ones. */
  static Example parse(Example e) {
    if (bad(e.index())) {
      throw new IllegalArgumentException("cannot parse example " + e.index());
    }
    return e;
  }

  static List<Long> good(long n) {
    return LongStream.range(0, n).filter(i -> !bad(i)).boxed().toList();
  }

  @Test
  void elementsWhoseFunctionThrowsAreDroppedSequentialOrParallel() {
    assertEquals(good(100), Pipeline.from(Datasets.range(100)).map(IgnoreErrorsTest::parse).ignoreErrors().flux()
        .map(Example::index).collectList().block());
    assertEquals(good(5000), Pipeline.from(Datasets.range(5000)).map(IgnoreErrorsTest::parse, 2, true).ignoreErrors()
        .flux().map(Example::index).collectList().block());
    assertEquals(good(50), Pipeline.from(Datasets.range(50)).filter(e -> parse(e) != null).ignoreErrors().flux()
        .map(Example::index).collectList().block());
    assertEquals(good(30), Flux.range(0, 30).map(i -> {
      if (bad(i)) {
        throw new IllegalStateException("bad " + i);
      }
      return (long) i;
    }).transform(IgnoreErrors.of()).collectList().block());
  }

  @Test
  void withoutItTheFirstErrorEndsThePass() {
    StepVerifier.create(Pipeline.from(Datasets.range(100)).map(IgnoreErrorsTest::parse).flux().map(Example::index))
        .expectNext(0L, 1L, 2L)
        .expectErrorMessage("cannot parse example 3")
        .verify(Duration.ofSeconds(10));
  }

  @Test
  void aSourcesDataErrorIsNeverSkipped() {
    StepVerifier.create(Pipeline.from(TestSources.failingAt(40, 20)).batch(4).ignoreErrors().flux())
        .thenConsumeWhile(b -> {
          b.close();
          return true;
        })
        .expectErrorSatisfies(e -> assertThat(e).hasMessageContaining("a broken row"))
        .verify(Duration.ofSeconds(10));
    StepVerifier.create(Pipeline.from(TestSources.failingAt(40, 20)).map(e -> Example.of(e.index(), "value",
            e.tensor("value"))).ignoreErrors().flux())
        .expectNextCount(20)
        .expectErrorSatisfies(e -> assertThat(e).hasMessageContaining("a broken row"))
        .verify(Duration.ofSeconds(10));
  }

  @Test
  void skippedElementsAreCountedAndDroppedBatchesClosed() {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    Pipeline<Batch> p = Pipeline.from(Datasets.range(64)).batch(4).map(b -> {
      if (b.index(0) % 16 == 0) {
        throw new IllegalStateException("bad batch " + b.index(0));
      }
      return b;
    }).ignoreErrors().withOptions(Options.defaults().toBuilder().metrics(registry).name("ignored").build());
    List<Long> firsts = p.flux().map(b -> {
      try (b) {
        return b.index(0);
      }
    }).collectList().block();
    assertEquals(LongStream.range(0, 16).map(i -> 4 * i).filter(i -> i % 16 != 0).boxed().toList(), firsts);
    assertEquals(4.0, registry.get("sluice.pipeline.ignored.errors").tag("pipeline", "ignored").counter().count());
  }

  @Test
  void backpressureAndCancel() {
    List<Long> want = good(20);
    StepVerifier.create(Pipeline.from(Datasets.range(20)).map(IgnoreErrorsTest::parse).ignoreErrors().batch(3).flux(), 0)
        .expectSubscription()
        .expectNoEvent(Duration.ZERO)
        .thenRequest(1)
        .consumeNextWith(b -> {
          try (b) {
            assertEquals(want.subList(0, 3), LongStream.of(b.indices()).boxed().toList());
          }
        })
        .expectNoEvent(Duration.ZERO)
        .thenRequest(1)
        .consumeNextWith(b -> {
          try (b) {
            assertEquals(want.subList(3, 6), LongStream.of(b.indices()).boxed().toList());
          }
        })
        .thenCancel()
        .verify(Duration.ofSeconds(10));
  }

  @Property(tries = 12, seed = "20261128")
  void resumingAtAnyPointContinuesExactly(@ForAll @Size(min = 1, max = 3) List<@DoubleRange(min = 0, max = 1) Double> at) {
    Pipeline<Batch> p = Pipeline.from(Datasets.range(60)).shuffle().map(IgnoreErrorsTest::parse, 2, true).ignoreErrors()
        .batch(4);
    ResumeRuns.assertResumesExactly(p, PipelineContext.defaults().withSeed(7), 2, at);
  }
}
