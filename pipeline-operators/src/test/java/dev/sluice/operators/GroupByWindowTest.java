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
import java.util.TreeMap;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.DoubleRange;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import reactor.core.publisher.Flux;
import reactor.test.StepVerifier;

@ExtendWith(NoLeaks.class)
class GroupByWindowTest {
  static long key(Example e) {
    return (e.index() * 5) % 3;
  }

  /** What grouping by {@link #key} into windows of {@code size}, reduced to "key:indices", emits. */
  static List<String> reference(List<Example> in, int size) {
    List<String> out = new ArrayList<>();
    TreeMap<Long, List<Long>> open = new TreeMap<>();
    for (Example e : in) {
      List<Long> w = open.computeIfAbsent(key(e), k -> new ArrayList<>());
      w.add(e.index());
      if (w.size() == size) {
        out.add(key(e) + ":" + open.remove(key(e)));
      }
    }
    open.forEach((k, w) -> out.add(k + ":" + w));
    return out;
  }

  static Pipeline<String> grouped(Pipeline<Example> p, int size) {
    return p.groupByWindow(GroupByWindowTest::key,
        (key, window) -> ctx -> Flux.just(key + ":" + window.stream().map(Example::index).toList()), size);
  }

  @Test
  void fullWindowsAreReducedInArrivalOrderAndTheRestInKeyOrder() {
    PipelineContext ctx = PipelineContext.defaults().withSeed(1);
    List<Example> order = Pipeline.from(Datasets.range(23)).shuffle().flux(ctx).collectList().block();
    assertEquals(reference(order, 4), grouped(Pipeline.from(Datasets.range(23)).shuffle(), 4).flux(ctx).collectList()
        .block());
    List<Example> plain = Datasets.range(23).flux().collectList().block();
    assertEquals(reference(plain, 3), Flux.fromIterable(plain).transform(GroupByWindow.<Example, String>of(
        GroupByWindowTest::key, (k, w) -> Flux.just(k + ":" + w.stream().map(Example::index).toList()), 3))
        .collectList().block());
    assertThatThrownBy(() -> grouped(Pipeline.from(Datasets.range(3)), 0))
        .hasMessage("groupByWindow: windowSize > 0 required but it was 0");
  }

  @Test
  void aWindowReducedToABatch() {
    List<Batch> batches = Pipeline.from(Datasets.range(20))
        .groupByWindow(GroupByWindowTest::key, (key, window) -> Pipeline.from(ctx -> Flux.fromIterable(window))
            .batch(window.size()), 4)
        .flux().collectList().block();
    long rows = 0;
    for (Batch b : batches) {
      try (b) {
        for (int r = 0; r < b.size(); r++) {
          assertEquals((b.index(0) * 5) % 3, (b.index(r) * 5) % 3, "one key per batch");
        }
        rows += b.size();
      }
    }
    assertEquals(20, rows);
  }

  @Test
  void backpressureCancelAndErrors() {
    List<Example> plain = Datasets.range(12).flux().collectList().block();
    List<String> want = reference(plain, 2);
    StepVerifier.create(grouped(Pipeline.from(Datasets.range(12)), 2).flux(), 0)
        .expectSubscription()
        .expectNoEvent(Duration.ZERO)
        .thenRequest(1)
        .expectNext(want.get(0))
        .expectNoEvent(Duration.ZERO)
        .thenRequest(100)
        .expectNextSequence(want.subList(1, want.size()))
        .verifyComplete();
    StepVerifier.create(Flux.range(0, 50).transform(GroupByWindow.<Integer, Integer>of(i -> i % 5,
            (k, w) -> Flux.fromIterable(w), 3)), 0)
        .thenRequest(1)
        .expectNextCount(1)
        .thenCancel()
        .verifyThenAssertThat()
        .hasDiscardedElementsSatisfying(d -> {
          // the open windows' elements and the rest of the window being reduced, each once; not the emitted 0
          assertThat(d).doesNotHaveDuplicates().doesNotContain(0).containsAll(List.of(1, 2, 3, 4, 6, 7, 8, 9));
        });
    StepVerifier.create(Pipeline.from(Datasets.range(12)).groupByWindow(e -> {
          if (e.index() == 7) {
            throw new IllegalStateException("no key for 7");
          }
          return key(e);
        }, (key, window) -> ctx -> Flux.fromIterable(window), 2).flux())
        .thenConsumeWhile(x -> true)
        .expectErrorMessage("no key for 7")
        .verify(Duration.ofSeconds(10));
  }

  @Property(tries = 12, seed = "20261128")
  void resumingAtAnyPointContinuesExactly(@ForAll @Size(min = 1, max = 3) List<@DoubleRange(min = 0, max = 1) Double> at) {
    ResumeRuns.assertResumesExactly(grouped(Pipeline.from(Datasets.range(30)).shuffle(), 4),
        PipelineContext.defaults().withSeed(12), 2, at);
  }
}
