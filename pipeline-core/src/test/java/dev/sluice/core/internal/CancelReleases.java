package dev.sluice.core.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.ToIntFunction;
import org.awaitility.Awaitility;
import reactor.core.publisher.Flux;

/** The check that a stage cancelled after {@code take} results released every other result it made once. */
final class CancelReleases {
  private CancelReleases() {}

  /**
   * Takes {@code take} results of {@code flux}, waits for it to end and for every result in
   * {@code made} to be emitted or released (work still running when the stage ended releases its
   * result itself), then asserts that each result not emitted was released exactly once and each
   * emitted one never.
   *
   * @param released how often a result was released
   * @param name a result's name for the failure message
   */
  static <R> void check(Flux<R> flux, int take, Set<R> made, ToIntFunction<R> released, Function<R, String> name)
      throws InterruptedException {
    List<R> emitted = new ArrayList<>();
    CountDownLatch finished = new CountDownLatch(1);
    flux.take(take).doFinally(s -> finished.countDown()).doOnNext(emitted::add).blockLast();
    assertThat(finished.await(5, TimeUnit.SECONDS)).isTrue();
    Awaitility.await().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(2)).until(() ->
        made.stream().allMatch(r -> released.applyAsInt(r) > 0 || emitted.contains(r)));
    for (R r : made) {
      assertThat(released.applyAsInt(r)).as(name.apply(r)).isEqualTo(emitted.contains(r) ? 0 : 1);
    }
    assertThat(emitted).hasSize(take);
  }
}
