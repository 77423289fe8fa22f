package dev.sluice.operators;

import dev.sluice.operators.internal.GroupByWindowStage;
import java.util.List;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.function.ToLongFunction;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;

/**
 * tf.data's {@code group_by_window(key_func, reduce_func, window_size)} as a plain Reactor
 * transformer: elements are grouped by {@code keyFn} into windows of {@code windowSize}; a window
 * is reduced when full, in arrival order, and the windows left at the end are reduced in ascending
 * key order (tf.data's order). {@code reduceFn(key, window)} gives the elements to emit; windows are
 * reduced one after the other, their elements emitted in order.
 *
 * <p><b>Reactive Streams semantics.</b> Requests input as the reduced elements are requested;
 * holds at most {@code windowSize - 1} elements per open key; an error of {@code keyFn} or
 * {@code reduceFn} ends the stream.
 *
 * <p><b>Discard support.</b> Elements of open windows go to the discard hook on cancel and error.
 *
 * <pre>{@code
 * Flux<Batch> byLabel = examples.transform(GroupByWindow.of(e -> e.tensor("label").getLong(0),
 *     (key, window) -> Flux.fromIterable(window).transform(Batching.of(window.size())), 32));
 * }</pre>
 */
public final class GroupByWindow {
  private GroupByWindow() {}

  /**
   * @param keyFn the key of an element
   * @param reduceFn (key, window) to the elements to emit
   * @param windowSize elements per window, &gt; 0
   */
  public static <T, R> Function<Flux<T>, Flux<R>> of(ToLongFunction<? super T> keyFn,
      BiFunction<Long, List<T>, ? extends Publisher<? extends R>> reduceFn, int windowSize) {
    return GroupByWindowStage.of(keyFn, reduceFn, windowSize);
  }
}
