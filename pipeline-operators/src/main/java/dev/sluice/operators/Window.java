package dev.sluice.operators;

import dev.sluice.operators.internal.WindowOperator;
import java.util.List;
import java.util.function.Function;
import reactor.core.publisher.Flux;

/**
 * tf.data's {@code window(size, shift, stride, drop_remainder)} as a plain Reactor transformer:
 * windows of consecutive elements, each a {@code List}. Window {@code w} holds the elements at
 * positions {@code w·shift + k·stride} for {@code k < size}; a window is emitted when full, in order
 * of its start, and after the last element the windows that started are emitted even if not full
 * (tf.data's order), unless {@code dropRemainder}. With {@code shift < size} windows overlap and
 * share elements, so the elements must own no memory: a {@link dev.sluice.core.Batch} element fails
 * the stream ({@code unbatch} first, or re-cut batches with {@link Rebatch}). A window of examples
 * becomes a batch with {@code Flux.fromIterable(window).transform(Batching.of(window.size()))}.
 *
 * <p><b>Reactive Streams semantics.</b> Requests input as windows are requested; emits a window
 * when its last element arrives; holds the open windows' elements (at most
 * {@code ((size - 1)·stride + 1)} of them); completes after the last partial windows.
 *
 * <p><b>Discard support.</b> Elements of open windows go to the discard hook on cancel and error,
 * each once, as do elements between two strided ones that no window takes.
 *
 * <pre>{@code
 * Flux<List<Example>> frames = examples.transform(Window.of(4, 2, 1, true));
 * }</pre>
 */
public final class Window {
  private Window() {}

  /**
   * @param size elements per window, &gt; 0
   * @param shift input elements between the starts of two windows, &gt; 0 (tf.data default: size)
   * @param stride input elements between two elements of a window, &gt; 0 (tf.data default 1)
   * @param dropRemainder drop the windows that are not full at the end (tf.data default false)
   */
  public static <T> Function<Flux<T>, Flux<List<T>>> of(int size, int shift, int stride, boolean dropRemainder) {
    return WindowOperator.of(size, shift, stride, dropRemainder);
  }
}
