package dev.sluice.operators;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.sluice.core.Batch;
import dev.sluice.core.Datasets;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.PipelineState;
import dev.sluice.core.testing.NoLeaks;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.LongStream;
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
class RebatchTest {
  /** The batches' sizes and their rows' values, in order; each batch closed. */
  static List<List<Long>> rows(Flux<Batch> batches) {
    return batches.map(b -> {
      try (b) {
        List<Long> values = new ArrayList<>();
        for (int r = 0; r < b.size(); r++) {
          assertEquals(b.index(r), b.column("value").values().getLong(r), "row " + r + " of " + b);
          values.add(b.index(r));
        }
        return values;
      }
    }).collectList().block();
  }

  static List<List<Long>> cut(long n, int size, boolean drop) {
    List<List<Long>> out = new ArrayList<>();
    for (long s = 0; s < n; s += size) {
      List<Long> b = LongStream.range(s, Math.min(n, s + size)).boxed().toList();
      if (!drop || b.size() == size) {
        out.add(b);
      }
    }
    return out;
  }

  @Property(tries = 40, seed = "20261128")
  void theRowsAreRecutIntoBatchesOfTheNewSize(@ForAll @IntRange(min = 0, max = 40) int n,
      @ForAll @IntRange(min = 1, max = 9) int in, @ForAll @IntRange(min = 1, max = 9) int out, @ForAll boolean drop) {
    assertEquals(cut(n, out, drop), rows(Pipeline.from(Datasets.range(n)).batch(in).rebatch(out, drop).flux()));
    assertEquals(cut(n, out, drop), rows(Datasets.range(n).flux().transform(Batching.of(in))
        .transform(Rebatch.of(out, drop))));
  }

  @Test
  void batchesAfterAMapAndArgumentsChecked() {
    Pipeline<Batch> p = Pipeline.from(TestSources.streaming(Datasets.range(20))).map(e -> e).batch(6).filter(b -> true)
        .rebatch(4);
    assertEquals(cut(20, 4, false), rows(p.flux()));
    assertThatThrownBy(() -> Pipeline.from(Datasets.range(3)).batch(2).rebatch(0))
        .hasMessage("rebatch: batchSize > 0 required but it was 0");
  }

  @Test
  void backpressureCancelAndErrorReleaseEveryBatch() {
    StepVerifier.create(ElementTestSupport.batches(20).transform(Rebatch.of(3)), 0)
        .thenRequest(1)
        .consumeNextWith(Batch::close)
        .expectNoEvent(Duration.ZERO)
        .thenRequest(1)
        .consumeNextWith(b -> {
          try (b) {
            assertEquals(List.of(3L, 4L, 5L), LongStream.of(b.indices()).boxed().toList());
          }
        })
        .thenCancel()
        .verify(Duration.ofSeconds(10));
    StepVerifier.create(Pipeline.from(TestSources.failingAt(50, 33)).batch(5).rebatch(7).flux())
        .thenConsumeWhile(b -> {
          b.close();
          return true;
        })
        .expectErrorSatisfies(e -> assertThat(e).hasMessageContaining("a broken row"))
        .verify(Duration.ofSeconds(10));
  }

  @Property(tries = 12, seed = "20261128")
  void resumingAtAnyPointContinuesExactly(@ForAll @Size(min = 1, max = 3) List<@DoubleRange(min = 0, max = 1) Double> at) {
    PipelineContext ctx = PipelineContext.defaults().withSeed(3);
    ResumeRuns.assertResumesExactly(Pipeline.from(Datasets.range(50)).shuffle().batch(7).rebatch(3), ctx, 2, at);
    ResumeRuns.assertResumesExactly(Pipeline.from(Datasets.range(50)).shuffle().batch(7).filter(b -> b.size() > 0)
        .rebatch(4, true), ctx, 2, at);
  }

  @Test
  void aResumeAfterBatchesOfKnownSizeStartsAtTheBatchHoldingTheRow() {
    TestSources.Counting source = new TestSources.Counting(Datasets.range(100));
    Pipeline<Batch> p = Pipeline.from(source).batch(8).rebatch(3);
    PipelineState state = p.withState(PipelineContext.defaults()).take(10)
        .doOnNext(x -> x.element().close()).blockLast().state();
    long before = source.rows.get();
    List<List<Long>> rest = rows(p.resume(state));
    assertEquals(cut(100, 3, false).subList(10, 34), rest);
    assertThat(source.rows.get() - before).as("rows read by the resume").isEqualTo(100 - 24);
  }
}
