package dev.sluice.operators;

import dev.sluice.operators.internal.IgnoreErrorsOperator;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.function.Function;
import reactor.core.publisher.Flux;

/**
 * tf.data's {@code ignore_errors()} as a plain Reactor transformer: Reactor's
 * {@code onErrorContinue}, so that the operators before it that support it ({@code map},
 * {@code filter}, {@code handle}, {@code concatMap}, Sluice's parallel map and element operators)
 * drop an element whose function throws and go on with the next. A source's data error (a
 * {@link dev.sluice.core.DatasetException}: a malformed file, an I/O error, a closed dataset) and
 * fatal errors are never skipped: they end the stream as without it, so a bad file never turns
 * into a silently short epoch. The first skipped element of a subscription is logged, then one in
 * 1,000 (logger {@code dev.sluice.operators.ignoreErrors}); with a registry each is counted
 * ({@code sluice.pipeline.ignored.errors}). A dropped batch is closed.
 *
 * <p><b>Reactive Streams semantics.</b> Passes every signal on; an element dropped upstream is
 * replaced by a request for one more.
 *
 * <p><b>Discard support.</b> Holds nothing.
 *
 * <pre>{@code
 * Flux<Example> parsed = lines.map(Parser::parse).transform(IgnoreErrors.of());
 * }</pre>
 */
public final class IgnoreErrors {
  private IgnoreErrors() {}

  /** Skipped elements are logged, not counted in a registry. */
  public static <T> Function<Flux<T>, Flux<T>> of() {
    return of(null, "flux");
  }

  /**
   * @param registry where skipped elements are counted, or null
   * @param pipeline the {@code pipeline} tag of the counter
   */
  public static <T> Function<Flux<T>, Flux<T>> of(MeterRegistry registry, String pipeline) {
    return IgnoreErrorsOperator.of(registry, pipeline);
  }
}
