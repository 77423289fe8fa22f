package dev.sluice.operators;

import java.util.Objects;
import java.util.function.BiFunction;
import java.util.function.Function;
import reactor.core.publisher.Flux;

/**
 * tf.data's {@code scan(initial_state, scan_func)} as a plain Reactor transformer: a state carried
 * from element to element; for each element {@code fn(state, element)} gives the next state and
 * the element to emit ({@link Step}). Each subscription starts again from {@code initial}, so the
 * state should be an immutable value that {@code fn} replaces rather than changes.
 *
 * <p><b>Reactive Streams semantics.</b> One output per input, in order, on the input's thread and
 * demand; an exception of {@code fn} ends the stream with that error; completes and cancels with
 * the input.
 *
 * <p><b>Discard support.</b> Holds nothing but the state.
 *
 * <pre>{@code
 * // running sum of "value", emitted beside each example's index
 * examples.transform(Scan.of(0L, (Long sum, Example e) -> {
 *   long next = sum + e.tensor("value").getLong(0);
 *   return Scan.Step.of(next, e.index() + ":" + next);
 * }));
 * }</pre>
 */
public final class Scan {
  private Scan() {}

  /**
   * What one call of the scan function gives: the next state and the element to emit.
   *
   * @param state the state the next element is scanned with
   * @param output the element emitted, non-null
   * @param <S> the state type
   * @param <R> the output type
   */
  public record Step<S, R>(S state, R output) {
    /** Checks that the output is present (Reactive Streams carries no null). */
    public Step {
      Objects.requireNonNull(output, "output");
    }

    /** The step to {@code state} emitting {@code output}. */
    public static <S, R> Step<S, R> of(S state, R output) {
      return new Step<>(state, output);
    }
  }

  /**
   * @param initial the state the first element is scanned with
   * @param fn (state, element) to the next state and the element to emit
   */
  public static <S, T, R> Function<Flux<T>, Flux<R>> of(S initial,
      BiFunction<? super S, ? super T, ? extends Step<? extends S, ? extends R>> fn) {
    Objects.requireNonNull(fn, "fn");
    return flux -> Flux.defer(() -> {
      Object[] state = {initial};
      return flux.map(t -> {
        @SuppressWarnings("unchecked")
        Step<? extends S, ? extends R> step = fn.apply((S) state[0], t);
        Objects.requireNonNull(step, "the scan function returned null");
        state[0] = step.state();
        return (R) step.output();
      });
    });
  }
}
