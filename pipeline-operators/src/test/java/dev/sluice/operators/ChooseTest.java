package dev.sluice.operators;

import static dev.sluice.operators.ResumeRuns.assertResumesExactly;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.core.Batch;
import dev.sluice.core.DatasetException;
import dev.sluice.core.Datasets;
import dev.sluice.core.Example;
import dev.sluice.core.MemoryManager;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.testing.NoLeaks;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
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
 * {@code Pipeline.choose} (tf.data's {@code choose_from_datasets}): the selector's values pick the
 * source of each element; a value out of range is an error naming it; the pass ends with the
 * selector or at an exhausted chosen source; exact resume; cancel / error / backpressure.
 */
@ExtendWith(NoLeaks.class)
class ChooseTest {
  static final PipelineContext CTX = PipelineContext.defaults().withSeed(3);

  static Pipeline<Integer> selector(int... values) {
    return Pipeline.from(Datasets.range(values.length)).map(e -> values[(int) e.index()]);
  }

  static Pipeline<Example> source(int s, long n) {
    return SampleTest.source(s, n);
  }

  static List<Long> indices(Flux<Example> flux) {
    return flux.map(Example::index).collectList().block();
  }

  @Test
  void theSelectorPicksTheSourceOfEachElementInOrder() {
    Pipeline<Example> p = Pipeline.choose(selector(0, 1, 1, 2, 0, 2, 1), List.of(source(0, 5), source(1, 5), source(2, 5)));
    assertEquals(List.of(0L, 1_000_000L, 1_000_001L, 2_000_000L, 1L, 2_000_001L, 1_000_002L), indices(p.flux(CTX)));
  }

  @Test
  void thePassEndsWhenAChosenSourceIsExhausted() {
    Pipeline<Example> p = Pipeline.choose(selector(0, 0, 1, 0, 1), List.of(source(0, 2), source(1, 5)));
    assertEquals(List.of(0L, 1L, 1_000_000L), indices(p.flux(CTX)));
  }

  @Test
  void aValueOutOfRangeFailsThePassNamingItAndItsPosition() {
    Pipeline<Example> p = Pipeline.choose(selector(0, 1, 3, 0), List.of(source(0, 5), source(1, 5)));
    StepVerifier.create(p.flux(CTX))
        .expectNextCount(2)
        .expectErrorSatisfies(e -> {
          assertTrue(e instanceof DatasetException, e.toString());
          assertTrue(e.getMessage().contains("element 2") && e.getMessage().contains("value 3")
              && e.getMessage().contains("[0, 2)"), e.getMessage());
        })
        .verify(Duration.ofSeconds(10));
    Flux<Integer> negative = Mixing.choose(Flux.just(0, -1), List.of(Flux.range(0, 3)));
    StepVerifier.create(negative).expectNext(0).expectError(DatasetException.class).verify(Duration.ofSeconds(10));
  }

  @Test
  void sourcesWithDifferentSchemasAreRefusedNamingTheField() {
    Pipeline<Example> floats = Pipeline.from(Datasets.synthetic(10, 4, 1));
    Pipeline<Example> wider = Pipeline.from(Datasets.synthetic(10, 5, 1));
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> Pipeline.choose(selector(0, 1), List.of(floats, wider)));
    assertTrue(e.getMessage().contains("'x'") && e.getMessage().contains("[4]") && e.getMessage().contains("[5]"),
        e.getMessage());
  }

  @Property(tries = 30)
  void everyCutResumesExactly(@ForAll @Size(min = 0, max = 60) List<@IntRange(min = 0, max = 2) Integer> choices,
      @ForAll @IntRange(min = 0, max = 30) int shortest, @ForAll @IntRange(min = 1, max = 2) int epochs,
      @ForAll @Size(min = 1, max = 3) List<@DoubleRange(min = 0, max = 1) Double> cuts) {
    int[] values = choices.stream().mapToInt(Integer::intValue).toArray();
    Pipeline<Example> p = Pipeline.choose(selector(values), List.of(
        Pipeline.from(Datasets.range(40)).shuffle().map(e -> e.withIndex(e.index())),
        source(1, shortest), source(2, 40)));
    assertResumesExactly(p, CTX, epochs, cuts);
  }

  @Test
  void batchesResumeExactlyAndNoneIsLeft() {
    int[] values = new int[120];
    for (int i = 0; i < values.length; i++) {
      values[i] = (i * 7) % 3;
    }
    Pipeline<Batch> p = Pipeline.choose(selector(values), List.of(source(0, 50), source(1, 50), source(2, 50)))
        .batch(6).prefetch(2);
    assertResumesExactly(p, CTX, 2, List.of(0.3, 0.65));
  }

  @Test
  void backpressureCancelAndErrorReleaseEveryBatch() {
    int[] values = new int[200];
    for (int i = 0; i < values.length; i++) {
      values[i] = i % 2;
    }
    Pipeline<Batch> a = Pipeline.from(Datasets.synthetic(400, 8, 1)).batch(4);
    Pipeline<Batch> b = Pipeline.from(Datasets.synthetic(400, 8, 2)).shuffle().batch(4);
    Pipeline<Batch> p = Pipeline.choose(selector(values), List.of(a, b));
    StepVerifier.create(p.flux(CTX).doOnNext(Batch::close), 0)
        .expectSubscription()
        .thenRequest(2)
        .expectNextCount(2)
        .expectNoEvent(Duration.ofMillis(20))
        .thenRequest(3)
        .expectNextCount(3)
        .thenCancel()
        .verify(Duration.ofSeconds(10));
    TestSources.awaitNoOutstanding();
    Pipeline<Batch> failing = Pipeline.from(TestSources.failingAt(400, 21)).batch(4);
    StepVerifier.create(Pipeline.choose(selector(values), List.of(a, failing)).flux(CTX).doOnNext(Batch::close))
        .expectNextCount(11) // a0, f0, .., a4, f4, a5, then failing's batch of rows 20..23, whatever was read ahead
        .expectError(DatasetException.class)
        .verify(Duration.ofSeconds(10));
    TestSources.awaitNoOutstanding();
    assertEquals(0, MemoryManager.shared().outstandingBytes());
  }

  @Test
  void explainShowsTheSelectorAndEachSource() {
    String explain = Pipeline.choose(selector(0, 1), List.of(source(0, 5), source(1, 5))).explain();
    assertTrue(explain.startsWith("Pipeline over choose("), explain);
    assertTrue(explain.contains("selector: Pipeline over") && explain.contains("source 1: Pipeline over"), explain);
  }

  @Test
  void theSelectorsValuesAreReadAgainOnResumeButNoSourceElement() {
    List<Long> whole = indices(Pipeline.choose(selector(1, 0, 1, 1, 0, 0, 1), List.of(source(0, 9), source(1, 9)))
        .flux(CTX));
    List<Long> got = new ArrayList<>();
    Pipeline<Example> p = Pipeline.choose(selector(1, 0, 1, 1, 0, 0, 1), List.of(source(0, 9), source(1, 9)));
    var state = p.withState(CTX).take(4).doOnNext(x -> got.add(x.element().index())).blockLast().state();
    got.addAll(indices(p.resume(state)));
    assertEquals(whole, got);
  }
}
