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
 * {@code Pipeline.concatenate} (tf.data's {@code concatenate}): the first pipeline's elements then
 * the second's; schemas must match where both declare one; exact resume; cancel / error /
 * backpressure.
 */
@ExtendWith(NoLeaks.class)
class ConcatenateTest {
  static final PipelineContext CTX = PipelineContext.defaults().withSeed(8);

  static List<Long> indices(Flux<Example> flux) {
    return flux.map(Example::index).collectList().block();
  }

  @Test
  void theElementsOfTheFirstThenOfTheSecond() {
    Pipeline<Example> a = Pipeline.from(Datasets.range(20)).shuffle();
    Pipeline<Example> b = SampleTest.source(1, 7);
    List<Long> expected = new ArrayList<>(indices(a.flux(CTX)));
    expected.addAll(indices(b.flux(CTX)));
    assertEquals(expected, indices(a.concatenate(b).flux(CTX)));
    assertEquals(expected, indices(Pipeline.concatenate(a, b).flux(CTX)));
    assertEquals(27, a.concatenate(b).cardinality(CTX));
    List<Long> values = a.concatenate(Pipeline.from(Datasets.range(3))).flux(CTX)
        .map(e -> e.tensor("value").getLong(0)).collectList().block();
    assertEquals(23, values.size());
    assertEquals(List.of(0L, 1L, 2L), values.subList(20, 23));
  }

  @Test
  void differentSchemasAreRefusedNamingTheFieldAndBothTypes() {
    Pipeline<Example> a = Pipeline.from(Datasets.synthetic(10, 4, 1));
    Pipeline<Example> b = Pipeline.from(Datasets.synthetic(10, 6, 1));
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> a.concatenate(b));
    assertTrue(e.getMessage().contains("field 'x' is float32[4] in the first and float32[6] in the second"),
        e.getMessage());
    IllegalArgumentException missing = assertThrows(IllegalArgumentException.class,
        () -> a.concatenate(Pipeline.from(Datasets.range(3))));
    assertTrue(missing.getMessage().contains("'x'"), missing.getMessage());
  }

  @Property(tries = 30)
  void everyCutResumesExactly(@ForAll @IntRange(min = 0, max = 40) int lengthA,
      @ForAll @IntRange(min = 0, max = 40) int lengthB, @ForAll boolean streamingA,
      @ForAll @IntRange(min = 1, max = 3) int epochs,
      @ForAll @Size(min = 1, max = 3) List<@DoubleRange(min = 0, max = 1) Double> cuts) {
    Pipeline<Example> a = streamingA ? Pipeline.from(TestSources.streaming(Datasets.range(lengthA)))
        : Pipeline.from(Datasets.range(lengthA)).shuffle();
    Pipeline<Example> b = Pipeline.from(Datasets.range(lengthB)).shuffle().map(e -> e.withIndex(1_000 + e.index()));
    assertResumesExactly(a.concatenate(b), CTX, epochs, cuts);
  }

  @Test
  void batchesAcrossTheBoundaryResumeExactly() {
    Pipeline<Batch> p = Pipeline.from(Datasets.range(33)).shuffle().concatenate(SampleTest.source(1, 29))
        .batch(5).prefetch(2);
    assertResumesExactly(p, CTX, 2, List.of(0.2, 0.5, 0.8));
  }

  @Test
  void backpressureCancelAndErrorReleaseEveryBatch() {
    Pipeline<Batch> a = Pipeline.from(Datasets.synthetic(20, 8, 1)).batch(4);
    Pipeline<Batch> b = Pipeline.from(Datasets.synthetic(400, 8, 2)).shuffle().batch(4);
    StepVerifier.create(a.concatenate(b).flux(CTX).doOnNext(Batch::close), 0)
        .expectSubscription()
        .thenRequest(4)
        .expectNextCount(4)
        .expectNoEvent(Duration.ofMillis(20))
        .thenRequest(3)
        .expectNextCount(3)
        .thenCancel()
        .verify(Duration.ofSeconds(10));
    TestSources.awaitNoOutstanding();
    Pipeline<Batch> failing = Pipeline.from(TestSources.failingAt(400, 9)).batch(4);
    StepVerifier.create(a.concatenate(failing).flux(CTX).doOnNext(Batch::close))
        .expectNextCount(7) // a's 5 batches, then failing's 2 before the broken row
        .expectError(DatasetException.class)
        .verify(Duration.ofSeconds(10));
    TestSources.awaitNoOutstanding();
    assertEquals(0, MemoryManager.shared().outstandingBytes());
  }

  @Test
  void explainShowsBothPlans() {
    String explain = Pipeline.from(Datasets.range(10)).shuffle().concatenate(Pipeline.from(Datasets.range(3))).explain();
    assertTrue(explain.startsWith("Pipeline over concatenate(2 pipelines)"), explain);
    assertTrue(explain.contains("source 0: Pipeline over") && explain.contains("global permutation"), explain);
  }
}
