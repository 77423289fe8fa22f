package dev.sluice.operators.internal;

import dev.sluice.core.Options;
import dev.sluice.core.PipelineContext;
import java.util.List;
import java.util.function.BiFunction;
import java.util.function.ToLongFunction;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;

/**
 * {@code groupByWindow(keyFn, reduceFn, windowSize)} on the element path: {@link KeyedWindowOperator}
 * windows of {@code windowSize} elements per key, each reduced in turn to the elements of the
 * publisher {@code reduce} makes of it (for the pass's context). Replayed on resume.
 *
 * @param keyFn the key of an element
 * @param reduce (key, window, context) to the elements to emit
 * @param windowSize elements per window
 */
public record GroupByWindowStage(ToLongFunction<Object> keyFn, Reduce reduce, int windowSize) implements FluxStage {
  /** A window's key, its elements and the pass's context to the elements to emit. */
  @FunctionalInterface
  public interface Reduce {
    /**
     * The elements {@code window} becomes.
     *
     * @param key the window's key
     * @param window its elements, in arrival order
     * @param context the pass's context
     * @return the elements to emit
     */
    Publisher<?> apply(long key, List<Object> window, PipelineContext context);
  }

  @Override
  @SuppressWarnings("unchecked")
  public Flux<?> apply(Flux<?> in, PipelineContext context, Options options) {
    return ((Flux<Object>) in).transform(of(keyFn, (k, w) -> reduce.apply(k, w, context), windowSize));
  }

  /**
   * The grouping transformer: windows of {@code windowSize} per key (the rest flushed in ascending
   * key order at the end), each turned by {@code reduceFn} into the elements emitted, one window
   * after the other.
   *
   * @param keyFn the key of an element
   * @param reduceFn (key, window) to the elements to emit
   * @param windowSize elements per window, &gt; 0
   * @return the transformer
   */
  public static <T, R> java.util.function.Function<Flux<T>, Flux<R>> of(ToLongFunction<? super T> keyFn,
      BiFunction<Long, List<T>, ? extends Publisher<? extends R>> reduceFn, int windowSize) {
    check(windowSize);
    return in -> in.transform(KeyedWindowOperator.<T>of(keyFn, k -> windowSize, false))
        .concatMap(w -> reduceFn.apply(w.key(), w.elements()), 0);
  }

  /**
   * Checks the window size.
   *
   * @throws IllegalArgumentException when it is not positive
   */
  public static void check(int windowSize) {
    if (windowSize <= 0) {
      throw new IllegalArgumentException("groupByWindow: windowSize > 0 required but it was " + windowSize);
    }
  }

  @Override
  public String describe() {
    return "groupByWindow(" + windowSize + ")";
  }
}
