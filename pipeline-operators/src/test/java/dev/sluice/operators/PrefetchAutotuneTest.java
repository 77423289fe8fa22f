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
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.DoubleRange;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.reactivestreams.Subscription;
import reactor.core.Scannable;
import reactor.core.publisher.Flux;
import reactor.test.StepVerifier;

@ExtendWith(NoLeaks.class)
class PrefetchAutotuneTest {
  @Test
  void theElementsAndTheirOrderAreThoseOfAFixedBuffer() {
    Pipeline<Example> base = Pipeline.from(Datasets.range(500)).shuffle().map(e -> e, 2, true);
    PipelineContext ctx = PipelineContext.defaults().withSeed(4);
    List<Long> fixed = base.prefetch(4).flux(ctx).map(Example::index).collectList().block();
    assertEquals(fixed, base.prefetch(Prefetch.AUTOTUNE).flux(ctx).map(Example::index).collectList().block());
    assertThat(base.prefetch(Prefetch.AUTOTUNE).explain()).contains("prefetch(AUTOTUNE)");
    assertThatThrownBy(() -> base.prefetch(-2)).hasMessage("bufferSize > 0 (or AUTOTUNE = -1) required but it was -2");
  }

  @Test
  void itAsksTwoAheadAtFirstAndGrowsWhileTheProducerFallsBehind() {
    ElementTestSupport.Counting<Long> counting = new ElementTestSupport.Counting<>();
    AtomicReference<Subscription> prefetch = new AtomicReference<>();
    Flux<Long> slow = counting.wrap(Flux.range(0, 400).map(i -> {
      TestSources.spin(100_000); // a producer slower than the consumer
      return (long) i;
    }));
    StepVerifier.create(slow.transform(Prefetch.of(Prefetch.AUTOTUNE)).doOnSubscribe(prefetch::set), 0)
        .expectSubscription()
        .then(() -> org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(10))
            .until(() -> counting.requested.get() > 0))
        .then(() -> assertEquals(2, counting.requested.get(), "asked ahead before any demand"))
        .thenRequest(Long.MAX_VALUE)
        .expectNextCount(400)
        .verifyComplete();
    // the subscription handed on is the discard hook's; its parent is the prefetch's subscriber
    Scannable subscriber = Scannable.from(Scannable.from(prefetch.get()).scan(Scannable.Attr.PARENT));
    int grown = subscriber.scanOrDefault(Scannable.Attr.PREFETCH, 0);
    assertThat(grown).as("elements asked ahead at the end").isGreaterThan(2).isLessThanOrEqualTo(Prefetch.AUTOTUNE_MAX);
  }

  @Test
  void cancelReleasesTheQueuedBatches() {
    StepVerifier.create(Pipeline.from(Datasets.range(400)).batch(4).prefetch(Prefetch.AUTOTUNE).flux(), 0)
        .thenRequest(3)
        .consumeNextWith(Batch::close)
        .consumeNextWith(Batch::close)
        .consumeNextWith(Batch::close)
        .thenCancel()
        .verify(Duration.ofSeconds(10));
    TestSources.awaitNoOutstanding();
  }

  @Property(tries = 8, seed = "20261128")
  void resumingAtAnyPointContinuesExactly(@ForAll @Size(min = 1, max = 3) List<@DoubleRange(min = 0, max = 1) Double> at) {
    ResumeRuns.assertResumesExactly(Pipeline.from(Datasets.range(40)).shuffle().batch(3).prefetch(Prefetch.AUTOTUNE),
        PipelineContext.defaults().withSeed(1), 2, at);
  }
}
