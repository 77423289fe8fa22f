package dev.sluice.operators;

import java.util.function.Function;
import reactor.core.publisher.Flux;

/**
 * tf.data's {@code enumerate(start)} as a plain Reactor transformer: each element paired with its
 * position ({@link Enumerated}), counted from {@code start} per subscription (Reactor's
 * {@code Flux.index}).
 *
 * <p><b>Reactive Streams semantics.</b> One output per input, on the input's thread and demand;
 * completes, errors and cancels with the input.
 *
 * <p><b>Discard support.</b> Holds nothing.
 *
 * <pre>{@code
 * batches.transform(Enumerate.of()).subscribe(e -> { try (Batch b = e.element()) { step(e.index(), b); } });
 * }</pre>
 */
public final class Enumerate {
  private Enumerate() {}

  /** Positions from 0. */
  public static <T> Function<Flux<T>, Flux<Enumerated<T>>> of() {
    return of(0);
  }

  /**
   * @param start the position of the first element (tf.data default 0)
   */
  public static <T> Function<Flux<T>, Flux<Enumerated<T>>> of(long start) {
    return flux -> flux.index((i, t) -> new Enumerated<>(start + i, t));
  }
}
