package dev.sluice.operators;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.sluice.core.Batch;
import dev.sluice.core.Datasets;
import dev.sluice.core.Example;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.PipelineIterator;
import dev.sluice.core.PipelineState;
import dev.sluice.core.testing.NoLeaks;
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
class EnumerateTest {
  static final PipelineContext CTX = PipelineContext.defaults().withSeed(6);

  @Test
  void pairsEachElementWithItsPositionFromStartInEveryPass() {
    List<Example> order = Pipeline.from(Datasets.range(15)).shuffle().flux(CTX).collectList().block();
    List<Enumerated<Example>> got = Pipeline.from(Datasets.range(15)).shuffle().enumerate(10).flux(CTX).collectList()
        .block();
    assertEquals(LongStream.range(10, 25).boxed().toList(), got.stream().map(Enumerated::index).toList());
    assertEquals(order, got.stream().map(Enumerated::element).toList());
    List<Enumerated<Example>> epochs = Pipeline.from(Datasets.range(15)).shuffle().enumerate().epochs(CTX, 2)
        .collectList().block();
    assertEquals(0, epochs.get(15).index(), "each epoch counts from start again");
    assertEquals(List.of(new Enumerated<>(0L, "a"), new Enumerated<>(1L, "b")),
        Flux.just("a", "b").transform(Enumerate.of()).collectList().block());
  }

  @Test
  void backpressuredItEmitsOnDemand() {
    StepVerifier.create(Pipeline.from(Datasets.range(4)).enumerate().flux().map(Enumerated::index), 0)
        .expectSubscription()
        .expectNoEvent(Duration.ZERO)
        .thenRequest(1)
        .expectNext(0L)
        .expectNoEvent(Duration.ZERO)
        .thenRequest(3)
        .expectNext(1L, 2L, 3L)
        .verifyComplete();
  }

  @Test
  void droppedPairsHoldingBatchesAreClosedOnCancelAndError() {
    Pipeline<Enumerated<Batch>> p = Pipeline.from(Datasets.range(64)).batch(4).enumerate().prefetch(4);
    StepVerifier.create(p.flux(), 0).thenRequest(1)
        .consumeNextWith(e -> e.element().close())
        .thenCancel().verify(Duration.ofSeconds(10));
    TestSources.awaitNoOutstanding();
    StepVerifier.create(Pipeline.from(TestSources.failingAt(64, 30)).batch(4).enumerate().prefetch(4).flux())
        .thenConsumeWhile(e -> {
          e.element().close();
          return true;
        })
        .expectErrorSatisfies(e -> assertThat(e).hasMessageContaining("a broken row"))
        .verify(Duration.ofSeconds(10));
    TestSources.awaitNoOutstanding();
  }

  @Test
  void aResumeReadsNothingAgainAndCountsOnFromTheState() {
    TestSources.Counting source = new TestSources.Counting(Datasets.range(100));
    Pipeline<Enumerated<Example>> p = Pipeline.from(source).shuffle()
        .map(e -> Example.of(e.index(), "value", e.tensor("value"))).enumerate(); // reads each row
    PipelineState state;
    try (PipelineIterator<Enumerated<Example>> it = p.iterate(CTX)) {
      for (int i = 0; i < 40; i++) {
        it.next();
      }
      state = it.state();
    }
    long before = source.rows.get();
    List<Enumerated<Example>> rest = p.resume(state).collectList().block();
    assertEquals(60, rest.size());
    assertEquals(40, rest.get(0).index());
    assertThat(source.rows.get() - before).as("rows read by the resume").isEqualTo(60);
  }

  @Property(tries = 12, seed = "20261128")
  void resumingAtAnyPointContinuesExactly(@ForAll @Size(min = 1, max = 3) List<@DoubleRange(min = 0, max = 1) Double> at) {
    Pipeline<Enumerated<Example>> p = Pipeline.from(Datasets.range(30)).shuffle().filter(e -> e.index() % 3 != 0)
        .enumerate(5);
    ResumeRuns.assertResumesExactly(p, CTX, 2, at);
    ResumeRuns.assertResumesExactly(Pipeline.from(Datasets.range(30)).shuffle().enumerate(), CTX, 2, at);
  }
}
