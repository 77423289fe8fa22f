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
import dev.sluice.core.Tensor;
import dev.sluice.core.testing.NoLeaks;
import java.time.Duration;
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
 * {@code Pipeline.zip} (tf.data's {@code zip}) of example pipelines: fields merged by position,
 * ending with the shorter; a field name on both sides is an error naming it, resolved by
 * prefixes; exact resume; cancel / error / backpressure with batches after the zip.
 */
@ExtendWith(NoLeaks.class)
class ZipTest {
  static final PipelineContext CTX = PipelineContext.defaults().withSeed(4);

  /** {@code n} examples with field {@code name} = 10 × row + {@code add}. */
  static Pipeline<Example> values(String name, long n, long add) {
    return Pipeline.from(Datasets.range(n)).map(e -> Example.of(e.index(), name, Tensor.scalar(e.index() * 10 + add)));
  }

  @Test
  void fieldsAreMergedByPositionAndThePassEndsWithTheShorter() {
    Pipeline<Example> a = Pipeline.from(Datasets.synthetic(12, 3, 5)).shuffle();
    Pipeline<Example> b = values("y", 9, 1);
    List<Example> left = a.flux(CTX).collectList().block();
    List<Example> zipped = Pipeline.zip(a, b).flux(CTX).collectList().block();
    assertEquals(9, zipped.size());
    for (int k = 0; k < 9; k++) {
      Example z = zipped.get(k);
      assertEquals(List.of("x", "label", "y"), List.copyOf(z.names()));
      assertEquals(left.get(k).index(), z.index());
      assertEquals(left.get(k).tensor("x"), z.tensor("x"));
      assertEquals(k * 10L + 1, z.tensor("y").getLong(0));
    }
    assertEquals(9, Pipeline.zip(a, b).cardinality(CTX));
  }

  @Test
  void aFieldOnBothSidesIsAnErrorNamingItAndPrefixesResolveIt() {
    Pipeline<Example> a = Pipeline.from(Datasets.synthetic(5, 2, 1));
    Pipeline<Example> b = Pipeline.from(Datasets.synthetic(5, 2, 2));
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Pipeline.zip(a, b));
    assertTrue(e.getMessage().contains("field 'x'") && e.getMessage().contains("prefix"), e.getMessage());
    Example first = Pipeline.zip(a, b, "a_", "b_").flux(CTX).blockFirst();
    assertEquals(List.of("a_x", "a_label", "b_x", "b_label"), List.copyOf(first.names()));
    // without declared schemas the first pair fails the pass, naming the field
    StepVerifier.create(Pipeline.zip(values("v", 3, 0), values("v", 3, 1)).flux(CTX))
        .expectErrorSatisfies(x -> assertTrue(x.getMessage().contains("field 'v'"), x.getMessage()))
        .verify(Duration.ofSeconds(10));
  }

  @Property(tries = 30)
  void everyCutResumesExactly(@ForAll @IntRange(min = 0, max = 40) int lengthA,
      @ForAll @IntRange(min = 0, max = 40) int lengthB, @ForAll @IntRange(min = 1, max = 3) int epochs,
      @ForAll @Size(min = 1, max = 3) List<@DoubleRange(min = 0, max = 1) Double> cuts) {
    Pipeline<Example> a = Pipeline.from(Datasets.range(lengthA)).shuffle();
    Pipeline<Example> b = Pipeline.from(Datasets.range(lengthB)).shuffle()
        .map(e -> Example.of(e.index(), "w", e.tensor("value")));
    Pipeline<String> p = Pipeline.zip(a, b).map(e -> e.index() + "/" + e.tensor("w").getLong(0));
    assertResumesExactly(p, CTX, epochs, cuts);
  }

  @Test
  void batchesOfZippedExamplesResumeExactlyWithTheirValues() {
    Pipeline<Batch> p = Pipeline.zip(Pipeline.from(Datasets.synthetic(50, 4, 3)).shuffle(), values("y", 44, 2))
        .batch(6).prefetch(2);
    assertResumesExactly(p, CTX, 2, List.of(0.25, 0.7));
  }

  @Test
  void backpressureCancelAndErrorReleaseEveryBatch() {
    Pipeline<Batch> p = Pipeline.zip(Pipeline.from(Datasets.synthetic(400, 8, 1)), values("y", 400, 0)).batch(4)
        .prefetch(2);
    StepVerifier.create(p.flux(CTX).doOnNext(Batch::close), 0)
        .expectSubscription()
        .thenRequest(2)
        .expectNextCount(2)
        .expectNoEvent(Duration.ofMillis(20))
        .thenRequest(1)
        .expectNextCount(1)
        .thenCancel()
        .verify(Duration.ofSeconds(10));
    TestSources.awaitNoOutstanding();
    Pipeline<Batch> failing = Pipeline.zip(Pipeline.from(TestSources.failingAt(400, 13)), values("y", 400, 0))
        .batch(4);
    StepVerifier.create(failing.flux(CTX).doOnNext(Batch::close))
        .expectNextCount(3)
        .expectError(DatasetException.class)
        .verify(Duration.ofSeconds(10));
    TestSources.awaitNoOutstanding();
    assertEquals(0, MemoryManager.shared().outstandingBytes());
  }

  @Test
  void thePlainFluxFormZipsExamples() {
    Flux<Example> a = Flux.range(0, 3).map(i -> Example.of(i, "a", Tensor.scalar((long) i)));
    Flux<Example> b = Flux.range(0, 5).map(i -> Example.of(i, "a", Tensor.scalar((long) -i)));
    List<Example> out = Mixing.zip(a, b, "l_", "r_").collectList().block();
    assertEquals(3, out.size());
    assertEquals(-2L, out.get(2).tensor("r_a").getLong(0));
  }

  @Test
  void explainShowsBothPlans() {
    String explain = Pipeline.zip(Pipeline.from(Datasets.range(4)), values("y", 4, 0)).explain();
    assertTrue(explain.startsWith("Pipeline over zip(2 pipelines)"), explain);
    assertTrue(explain.contains("source 1: Pipeline over"), explain);
  }
}
