package dev.sluice.operators.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Function;
import java.util.function.LongToIntFunction;
import java.util.function.ToLongFunction;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Operators;
import reactor.util.context.Context;

/**
 * The one keyed grouper of the element path ({@code bucketBySequenceLength}, {@code groupByWindow}):
 * each element goes to the open window of its key; a window is emitted, in arrival order, when it
 * holds its key's window size; after the last element the windows left open are emitted in
 * ascending key order (or discarded with {@code dropRemainder}). The output depends only on the
 * input's order, so a pass replays the same windows.
 *
 * <p>Holds at most the sum over open keys of their window size minus one elements. Elements of open
 * windows go to the discard hook on cancel and error.
 */
public final class KeyedWindowOperator {
  private KeyedWindowOperator() {}

  /**
   * A window of consecutive elements of one key.
   *
   * @param key the key the elements share
   * @param elements the elements, in arrival order
   * @param <T> the element type
   */
  public record Window<T>(long key, List<T> elements) {}

  /**
   * The grouping transformer.
   *
   * @param keyFn the key of an element
   * @param windowSize the window size of a key, &gt; 0
   * @param dropRemainder discard the windows left open at the end instead of emitting them
   * @return the transformer
   */
  public static <T> Function<Flux<T>, Flux<Window<T>>> of(ToLongFunction<? super T> keyFn, LongToIntFunction windowSize,
      boolean dropRemainder) {
    return in -> Flux.deferContextual(view -> {
      Context cv = Context.of(view);
      Groups<T> groups = new Groups<>(keyFn, windowSize);
      return in.<Window<T>>handle((t, sink) -> {
            Window<T> full = groups.add(t, cv);
            if (full != null) {
              sink.next(full);
            }
          })
          .concatWith(Flux.defer(() -> Flux.fromIterable(groups.rest(dropRemainder, cv))))
          .doFinally(signal -> groups.discard(cv));
    });
  }

  /** The open windows of one subscription; synchronized, since a cancel may come from another thread. */
  private static final class Groups<T> {
    private final ToLongFunction<? super T> keyFn;
    private final LongToIntFunction windowSize;
    private final Map<Long, List<T>> open = new TreeMap<>();
    private boolean closed;

    Groups(ToLongFunction<? super T> keyFn, LongToIntFunction windowSize) {
      this.keyFn = keyFn;
      this.windowSize = windowSize;
    }

    /** Adds {@code t} to its key's window; returns the window when this fills it, else null. */
    synchronized Window<T> add(T t, Context cv) {
      if (closed) {
        Operators.onDiscard(t, cv);
        return null;
      }
      long key = keyFn.applyAsLong(t);
      int size = windowSize.applyAsInt(key);
      List<T> window = open.computeIfAbsent(key, k -> new ArrayList<>(Math.min(size, 1024)));
      window.add(t);
      if (window.size() < size) {
        return null;
      }
      open.remove(key);
      return new Window<>(key, window);
    }

    /** The windows still open, in ascending key order (none with {@code drop}, their elements discarded). */
    synchronized List<Window<T>> rest(boolean drop, Context cv) {
      List<Window<T>> out = new ArrayList<>(open.size());
      for (Map.Entry<Long, List<T>> e : open.entrySet()) {
        if (drop) {
          Operators.onDiscardMultiple(e.getValue(), cv);
        } else {
          out.add(new Window<>(e.getKey(), e.getValue()));
        }
      }
      open.clear();
      return out;
    }

    /** Discards the elements of every open window; later elements are discarded on arrival. */
    synchronized void discard(Context cv) {
      closed = true;
      for (List<T> window : open.values()) {
        Operators.onDiscardMultiple(window, cv);
      }
      open.clear();
    }
  }
}
