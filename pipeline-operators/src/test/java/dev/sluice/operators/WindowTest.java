package dev.sluice.operators;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.sluice.core.Batch;
import dev.sluice.core.Datasets;
import dev.sluice.core.Example;
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

@ExtendWith(NoLeaks.class)
class WindowTest {
  /** tf.data's windows of {@code 0 .. n-1}, computed the plain way. */
  static List<List<Integer>> reference(int n, int size, int shift, int stride, boolean drop) {
    List<List<Integer>> out = new ArrayList<>();
    for (int start = 0; start < n; start += shift) {
      List<Integer> w = new ArrayList<>();
      for (int k = 0; k < size && start + k * stride < n; k++) {
        w.add(start + k * stride);
      }
      if (!drop || w.size() == size) {
        out.add(w);
      }
    }
    return out;
  }

  static List<List<Integer>> windows(Pipeline<List<Example>> p) {
    return p.flux().map(w -> w.stream().map(e -> (int) e.index()).toList()).collectList().block();
  }

  @Test
  void windowsAreTfDatasWindows() {
    assertEquals(List.of(List.of(0, 1, 2), List.of(2, 3, 4), List.of(4, 5, 6), List.of(6)),
        windows(Pipeline.from(Datasets.range(7)).window(3, 2, 1, false)));
    assertEquals(List.of(List.of(0, 1, 2), List.of(3, 4, 5), List.of(6)), windows(Pipeline.from(Datasets.range(7)).window(3)));
  }

  @Property(tries = 60, seed = "20261128")
  void everyShapeOfWindowMatchesThePlainModelAndItsCardinality(@ForAll @IntRange(min = 0, max = 30) int n,
      @ForAll @IntRange(min = 1, max = 5) int size, @ForAll @IntRange(min = 1, max = 6) int shift,
      @ForAll @IntRange(min = 1, max = 3) int stride, @ForAll boolean drop) {
    Pipeline<List<Example>> p = Pipeline.from(Datasets.range(n)).window(size, shift, stride, drop);
    List<List<Integer>> want = reference(n, size, shift, stride, drop);
    assertEquals(want, windows(p));
    assertEquals(want.size(), p.cardinality(PipelineContext.defaults()));
    assertEquals(want, Flux.range(0, n).transform(Window.of(size, shift, stride, drop)).collectList().block());
  }

  @Test
  void argumentsAreCheckedAndBatchesAreRefused() {
    assertThatThrownBy(() -> Pipeline.from(Datasets.range(3)).window(2, 0, 1, false))
        .hasMessage("window: shift > 0 required but it was 0");
    assertThatThrownBy(() -> Pipeline.from(Datasets.range(3)).window(0)).hasMessage("window: size > 0 required but it was 0");
    StepVerifier.create(Pipeline.from(Datasets.range(10)).batch(2).window(2).flux())
        .expectErrorSatisfies(e -> assertThat(e).hasMessageContaining("element 0 is a Batch; use unbatch() first"))
        .verify(Duration.ofSeconds(10));
  }

  @Test
  void backpressuredItEmitsOnDemand() {
    StepVerifier.create(Flux.range(0, 7).transform(Window.of(3, 2, 1, false)), 0)
        .expectSubscription()
        .expectNoEvent(Duration.ZERO)
        .thenRequest(1)
        .expectNext(List.of(0, 1, 2))
        .expectNoEvent(Duration.ZERO)
        .thenRequest(5)
        .expectNext(List.of(2, 3, 4), List.of(4, 5, 6), List.of(6))
        .verifyComplete();
  }

  @Test
  void cancelAndErrorDiscardEachHeldElementOnce() {
    StepVerifier.create(Flux.range(0, 100).transform(Window.of(4, 2, 1, false)), 0)
        .thenRequest(1)
        .expectNext(List.of(0, 1, 2, 3))
        .thenCancel()
        .verifyThenAssertThat()
        .hasDiscardedExactly(2, 3); // the open window's, nothing more was requested
    StepVerifier.create(Flux.concat(Flux.range(0, 5), Flux.error(new IllegalStateException("boom")))
            .transform(Window.of(3, 1, 1, false)))
        .expectNext(List.of(0, 1, 2), List.of(1, 2, 3), List.of(2, 3, 4))
        .expectErrorMessage("boom")
        .verifyThenAssertThat()
        .hasDiscardedExactly(3, 4);
  }

  @Property(tries = 12, seed = "20261128")
  void resumingAtAnyPointContinuesExactly(@ForAll @Size(min = 1, max = 3) List<@DoubleRange(min = 0, max = 1) Double> at,
      @ForAll @IntRange(min = 1, max = 3) int shift) {
    Pipeline<List<Example>> p = Pipeline.from(Datasets.range(25)).shuffle().window(3, shift, 2, false);
    ResumeRuns.assertResumesExactly(p, PipelineContext.defaults().withSeed(2), 2, at);
  }

  @Test
  void aResumeWithAShiftReadsNothingBeforeTheNextWindow() {
    TestSources.Counting source = new TestSources.Counting(Datasets.range(40));
    Pipeline<List<Example>> p = Pipeline.from(source).map(e -> Example.of(e.index(), "value", e.tensor("value")))
        .window(4, 4, 1, false);
    var state = p.withState(PipelineContext.defaults()).take(6).blockLast().state();
    long before = source.rows.get();
    List<List<Example>> rest = p.resume(state).collectList().block();
    assertEquals(24, rest.get(0).get(0).index());
    assertEquals(16, source.rows.get() - before, "rows read by the resume");
  }
}
