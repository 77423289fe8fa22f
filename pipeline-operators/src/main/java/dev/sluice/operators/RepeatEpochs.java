package dev.sluice.operators;

import dev.sluice.core.PipelineContext;
import java.util.function.Function;
import reactor.core.publisher.Flux;

/**
 * tf.data's {@code repeat(count)} as a plain Reactor transformer: runs the upstream pass again and
 * again, and each pass sees the next epoch. The first pass runs with the {@link PipelineContext} in
 * the Reactor context (the defaults when absent); pass {@code i} runs with epoch
 * {@code context.epoch() + i}, so shuffles and per-sample randomness upstream change every pass
 * while the whole run stays a function of the context.
 *
 * <p><b>Reactive Streams semantics.</b> Subscribes to upstream once per pass, one pass after the
 * other; completes after the last pass; errors and cancels as upstream does.
 */
public final class RepeatEpochs {
  private RepeatEpochs() {}

  /**
   * @param count passes, ≥ 0
   */
  public static <T> Function<Flux<T>, Flux<T>> repeat(long count) {
    if (count < 0) {
      throw new IllegalArgumentException("count >= 0 required but it was " + count);
    }
    return f -> Flux.deferContextual(view -> {
      PipelineContext base = PipelineContext.from(view);
      return Flux.<Long, long[]>generate(() -> new long[1], (state, sink) -> {
        if (state[0] < count) {
          sink.next(state[0]++);
        } else {
          sink.complete();
        }
        return state;
      }).concatMap(i -> f.contextWrite(c -> c.put(PipelineContext.KEY, base.withEpoch(base.epoch() + i))), 0);
    });
  }

  /** Repeats forever (tf.data's {@code repeat()}); each pass sees the next epoch. */
  public static <T> Function<Flux<T>, Flux<T>> repeat() {
    return repeat(Long.MAX_VALUE);
  }
}
