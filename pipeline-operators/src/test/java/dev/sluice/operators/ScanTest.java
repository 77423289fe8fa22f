package dev.sluice.operators;

import static org.assertj.core.api.Assertions.assertThat;
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
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import reactor.core.publisher.Flux;
import reactor.test.StepVerifier;

@ExtendWith(NoLeaks.class)
class ScanTest {
  /** The running sum of the values, emitted as "index:sum". */
  static Scan.Step<Long, String> sum(Long state, Example e) {
    long next = state + e.tensor("value").getLong(0);
    return Scan.Step.of(next, e.index() + ":" + next);
  }

  static List<String> reference(List<Example> in) {
    List<String> out = new ArrayList<>();
    long s = 0;
    for (Example e : in) {
      s += e.tensor("value").getLong(0);
      out.add(e.index() + ":" + s);
    }
    return out;
  }

  @Test
  void theStateIsCarriedAndEveryPassStartsFromTheInitialState() {
    Pipeline<String> p = Pipeline.from(Datasets.range(20)).shuffle().scan(0L, ScanTest::sum);
    PipelineContext ctx = PipelineContext.defaults().withSeed(4);
    List<Example> order = Pipeline.from(Datasets.range(20)).shuffle().flux(ctx).collectList().block();
    assertEquals(reference(order), p.flux(ctx).collectList().block());
    assertEquals(p.flux(ctx).collectList().block(), p.flux(ctx).collectList().block());
    List<Example> next = Pipeline.from(Datasets.range(20)).shuffle().flux(ctx.withEpoch(1)).collectList().block();
    List<String> epochs = p.epochs(ctx, 2).collectList().block();
    assertEquals(reference(next), epochs.subList(20, 40), "the second epoch starts from the initial state again");
    assertThat(p.explain()).contains("scan");
  }

  @Test
  void theTransformerScansAPlainFlux() {
    List<Example> in = Datasets.range(7).flux().collectList().block();
    assertEquals(reference(in), Flux.fromIterable(in).transform(Scan.<Long, Example, String>of(0L, ScanTest::sum))
        .collectList().block());
  }

  @Test
  void backpressuredItEmitsOnDemand() {
    List<String> want = reference(Datasets.range(5).flux().collectList().block());
    StepVerifier.create(Pipeline.from(Datasets.range(5)).scan(0L, ScanTest::sum).flux(), 0)
        .expectSubscription()
        .expectNoEvent(Duration.ZERO)
        .thenRequest(2)
        .expectNext(want.get(0), want.get(1))
        .expectNoEvent(Duration.ZERO)
        .thenRequest(10)
        .expectNext(want.get(2), want.get(3), want.get(4))
        .verifyComplete();
  }

  @Test
  void anErrorOfTheFunctionEndsThePassAndBatchesAreClosedOnCancel() {
    StepVerifier.create(Pipeline.from(Datasets.range(5)).scan(0L, (Long s, Example e) -> {
          if (e.index() == 3) {
            throw new IllegalArgumentException("bad element 3");
          }
          return Scan.Step.of(s + 1, s);
        }).flux())
        .expectNext(0L, 1L, 2L)
        .expectErrorMessage("bad element 3")
        .verify(Duration.ofSeconds(10));
    // a scan whose outputs are batches: the prefetched ones are closed on cancel
    Pipeline<Batch> batches = Pipeline.from(Datasets.range(40)).batch(4)
        .scan(0, (Integer n, Batch b) -> Scan.Step.of(n + 1, b)).prefetch(3);
    StepVerifier.create(batches.flux(), 0).thenRequest(2)
        .consumeNextWith(Batch::close).consumeNextWith(Batch::close)
        .thenCancel().verify(Duration.ofSeconds(10));
    TestSources.awaitNoOutstanding();
  }

  @Property(tries = 12, seed = "20261128")
  void resumingAtAnyPointContinuesExactly(@ForAll @Size(min = 1, max = 3) List<@DoubleRange(min = 0, max = 1) Double> at) {
    Pipeline<String> p = Pipeline.from(Datasets.range(30)).shuffle().scan(0L, ScanTest::sum);
    ResumeRuns.assertResumesExactly(p, PipelineContext.defaults().withSeed(8), 2, at);
  }
}
