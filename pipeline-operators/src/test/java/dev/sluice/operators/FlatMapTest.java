package dev.sluice.operators;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.sluice.core.Batch;
import dev.sluice.core.Dataset;
import dev.sluice.core.Datasets;
import dev.sluice.core.Example;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.testing.NoLeaks;
import java.time.Duration;
import java.util.List;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.DoubleRange;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import reactor.core.publisher.Flux;
import reactor.test.StepVerifier;

@ExtendWith(NoLeaks.class)
class FlatMapTest {
  /** Element i becomes {@code i % 4} elements: 100 i, 100 i + 1, ... */
  static Dataset<Example> children(Example e) {
    long i = e.index();
    return ctx -> Flux.range(0, (int) (i % 4)).map(k -> Example.of(100 * i + k, "value", dev.sluice.core.Tensor.scalar(
        100 * i + k)));
  }

  static List<Long> reference(int n) {
    return Flux.range(0, n).concatMap(i -> Flux.range(0, i % 4).map(k -> 100L * i + k)).collectList().block();
  }

  @Test
  void eachElementsDatasetIsEmittedWholeInOrder() {
    List<Long> got = Pipeline.from(Datasets.range(13)).flatMap(FlatMapTest::children).flux().map(Example::index)
        .collectList().block();
    assertEquals(reference(13), got);
    List<Long> pipelines = Pipeline.from(Datasets.range(5)).flatMap(e -> Pipeline.from(Datasets.range(e.index())))
        .flux().map(Example::index).collectList().block();
    assertEquals(Flux.range(0, 5).concatMap(i -> Flux.range(0, i).map(Long::valueOf)).collectList().block(), pipelines);
  }

  @Test
  void backpressuredItEmitsOnDemand() {
    List<Long> want = reference(9);
    StepVerifier.Step<Long> step = StepVerifier.create(Pipeline.from(Datasets.range(9)).flatMap(FlatMapTest::children)
        .flux().map(Example::index), 0).expectSubscription();
    for (long v : want) {
      step = step.expectNoEvent(Duration.ZERO).thenRequest(1).expectNext(v);
    }
    step.thenRequest(1).verifyComplete();
  }

  @Test
  void cancellingClosesTheBatchesOfTheOpenDataset() {
    Pipeline<Batch> p = Pipeline.from(Datasets.range(6)).flatMap(e -> Pipeline.from(Datasets.range(10 + e.index()))
        .batch(3).prefetch(2));
    StepVerifier.Step<Batch> step = StepVerifier.create(p.flux(), 0).thenRequest(5);
    for (int i = 0; i < 5; i++) {
      step = step.consumeNextWith(Batch::close);
    }
    step.thenCancel().verify(Duration.ofSeconds(10));
    TestSources.awaitNoOutstanding();
  }

  @Test
  void anErrorOfTheFunctionArrivesAfterTheElementsBeforeIt() {
    StepVerifier.create(Pipeline.from(Datasets.range(9)).flatMap(e -> {
          if (e.index() == 6) {
            throw new IllegalStateException("no dataset for 6");
          }
          return children(e);
        }).flux().map(Example::index))
        .expectNextSequence(reference(6))
        .expectErrorMessage("no dataset for 6")
        .verify(Duration.ofSeconds(10));
  }

  @Test
  void everyPassOpensTheDatasetsForItsOwnContext() {
    Pipeline<Example> p = Pipeline.from(Datasets.range(3))
        .flatMap(e -> Pipeline.from(Datasets.range(8)).shuffle());
    List<String> epochs = ResumeRuns.whole(p, PipelineContext.defaults().withSeed(3), 2);
    assertThat(epochs).hasSize(48);
    assertThat(epochs.subList(0, 8)).isNotEqualTo(epochs.subList(24, 32).stream().map(s -> "0" + s.substring(1))
        .toList());
  }

  @Property(tries = 10, seed = "20261128")
  void resumesExactlyWhenTheDatasetsLengthsAreKnown(
      @ForAll @Size(min = 1, max = 3) List<@DoubleRange(min = 0, max = 1) Double> at) {
    Pipeline<Example> p = Pipeline.from(Datasets.range(12)).shuffle()
        .flatMap(e -> Pipeline.from(Datasets.range(e.index() % 5)).map(x -> x.withIndex(100 * e.index() + x.index())));
    ResumeRuns.assertResumesExactly(p, PipelineContext.defaults().withSeed(9), 2, at);
  }

  @Property(tries = 10, seed = "20261128")
  void resumesExactlyByReplayOverStreams(@ForAll @Size(min = 1, max = 3) List<@DoubleRange(min = 0, max = 1) Double> at) {
    Pipeline<Example> p = Pipeline.from(TestSources.streaming(Datasets.range(12))).flatMap(FlatMapTest::children);
    ResumeRuns.assertResumesExactly(p, PipelineContext.defaults().withSeed(9), 2, at);
  }
}
