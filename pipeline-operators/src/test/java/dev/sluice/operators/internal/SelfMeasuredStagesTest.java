package dev.sluice.operators.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.core.Options;
import dev.sluice.core.RandomAccessDataset;
import dev.sluice.core.internal.metrics.PassMetrics;
import dev.sluice.core.internal.metrics.StageMeter;
import dev.sluice.operators.StageReport;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscription;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;

/**
 * The index path's element source and the buffer shuffle measure their own output when their stage
 * is measured: the same elements in the same order, counted, and no subscriber between them and
 * their downstream.
 */
class SelfMeasuredStagesTest {
  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  private final PassMetrics metrics =
      PassMetrics.of(Options.defaults().toBuilder().metrics(registry).name("self").build(), 3);

  private Map<Integer, StageReport.Row> stages() {
    return StageReport.of(registry, "self").rows().stream().collect(Collectors.toMap(StageReport.Row::stage, r -> r));
  }

  /** Subscribes in requests of 7, so that the demand bookkeeping sees several; records what it was handed. */
  private static <T> List<T> drain(Flux<T> flux, AtomicReference<Subscription> handed) {
    List<T> got = new ArrayList<>();
    flux.subscribe(new BaseSubscriber<T>() {
      @Override
      protected void hookOnSubscribe(Subscription s) {
        handed.set(s);
        request(7);
      }

      @Override
      protected void hookOnNext(T v) {
        got.add(v);
        if (got.size() % 7 == 0) {
          request(7);
        }
      }
    });
    return got;
  }

  @Test
  @SuppressWarnings("unchecked")
  void theSourceAndTheBufferShuffleMeasureThemselvesWithoutAProbeInBetween() {
    int n = 5_000;
    IndexSequence order = IndexSequence.identity(n);
    RandomAccessDataset<Long> data = IndexElementsTckTest.identity(n);
    StageMeter sourceMeter = metrics.stage(0, "range read");
    StageMeter shuffleMeter = metrics.stage(1, "shuffle");
    Function<Flux<Object>, Flux<Object>> shuffle = f -> new FluxBufferShuffle<>(f, 64, true, 11, true);

    List<Object> plain = new FluxIndexElements(data, order).transform(shuffle).collectList().block();
    AtomicReference<Subscription> handed = new AtomicReference<>();
    Flux<Object> source = (Flux<Object>) new FluxIndexElements(data, order).measuredBy(sourceMeter);
    Flux<Object> measured = (Flux<Object>) ((FluxBufferShuffle<Object>) shuffle.apply(source)).measuredBy(shuffleMeter);
    List<Object> got = drain(measured, handed);

    assertThat(got).hasSize(n).isEqualTo(plain);
    assertThat(handed.get()).isInstanceOf(FluxBufferShuffle.BufferShuffleSubscriber.class);
    AtomicReference<Subscription> sourceHanded = new AtomicReference<>();
    assertThat(drain(new FluxIndexElements(data, order).measuredBy(sourceMeter), sourceHanded)).hasSize(n);
    assertThat(sourceHanded.get()).isInstanceOf(FluxIndexElements.ElementsSubscription.class);

    Map<Integer, StageReport.Row> rows = stages();
    assertThat(rows.get(0).elements()).isEqualTo(2L * n); // both passes
    assertThat(rows.get(1).elements()).isEqualTo(n);
    assertThat(rows.get(1).bufferCapacity()).isEqualTo(64.0);
    assertThat(rows.get(0).active()).isPositive();
    assertThat(rows.get(1).active()).isPositive();
  }

  @Test
  void aFailingGetEndsThePassWithItsErrorAfterTheElementsBefore() {
    RandomAccessDataset<Long> failsAt3 = new RandomAccessDataset<>() {
      @Override
      public long size() {
        return 10;
      }

      @Override
      public Long get(long index) {
        if (index == 3) {
          throw new IllegalStateException("row 3 is damaged");
        }
        return index;
      }
    };
    List<Object> seen = new ArrayList<>();
    Flux<?> measured = new FluxIndexElements(failsAt3, IndexSequence.identity(10)).measuredBy(metrics.stage(0, "read"));
    assertThatThrownBy(() -> measured.doOnNext(seen::add).blockLast()).hasMessageContaining("row 3 is damaged");
    assertThat(seen).containsExactly(0L, 1L, 2L);
    assertThat(stages().get(0).elements()).isEqualTo(3);
  }
}
