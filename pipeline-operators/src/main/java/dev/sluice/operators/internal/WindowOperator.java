package dev.sluice.operators.internal;

import dev.sluice.core.Batch;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;
import java.util.function.Function;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Operators;
import reactor.util.context.Context;

/**
 * {@code window(size, shift, stride, dropRemainder)} on the element path: window {@code w} holds
 * the input elements at positions {@code w·shift + k·stride}, {@code k < size}, as a list; a window
 * is emitted when it is full, in order of its start, and after the last element the windows that
 * started and are not full are emitted too (unless {@code dropRemainder}). Windows that overlap
 * share their elements, so elements must own no memory: a {@link Batch} fails the stream.
 *
 * <p>Elements of open windows go to the discard hook (each once) on cancel and error.
 */
public final class WindowOperator {
  private WindowOperator() {}

  /**
   * Checks the arguments of {@code window}, naming the bad one.
   *
   * @throws IllegalArgumentException when {@code size}, {@code shift} or {@code stride} is not positive
   */
  public static void check(int size, int shift, int stride) {
    if (size <= 0) {
      throw new IllegalArgumentException("window: size > 0 required but it was " + size);
    }
    if (shift <= 0) {
      throw new IllegalArgumentException("window: shift > 0 required but it was " + shift);
    }
    if (stride <= 0) {
      throw new IllegalArgumentException("window: stride > 0 required but it was " + stride);
    }
  }

  /**
   * The windowing transformer.
   *
   * @param size elements per window, &gt; 0
   * @param shift input elements between the starts of two windows, &gt; 0
   * @param stride input elements between two elements of a window, &gt; 0
   * @param dropRemainder drop the windows that are not full at the end
   * @return the transformer
   */
  public static <T> Function<Flux<T>, Flux<List<T>>> of(int size, int shift, int stride, boolean dropRemainder) {
    check(size, shift, stride);
    return in -> Flux.deferContextual(view -> {
      Context cv = Context.of(view);
      Open<T> open = new Open<>(size, shift, stride);
      return in.<List<T>>handle((t, sink) -> {
            List<T> full = open.add(t, cv);
            if (full != null) {
              sink.next(full);
            }
          })
          .concatWith(Flux.defer(() -> Flux.fromIterable(open.rest(dropRemainder, cv))))
          .doFinally(signal -> open.discard(cv));
    });
  }

  /** The windows of one subscription that started and are not full; synchronized against a cancel. */
  private static final class Open<T> {
    private final int size;
    private final int shift;
    private final int stride;
    private final ArrayDeque<Started<T>> windows = new ArrayDeque<>();
    private long position;
    private boolean closed;

    Open(int size, int shift, int stride) {
      this.size = size;
      this.shift = shift;
      this.stride = stride;
    }

    /** Adds the element at the next position to the windows it belongs to; returns a window it fills, else null. */
    synchronized List<T> add(T t, Context cv) {
      if (closed) {
        Operators.onDiscard(t, cv);
        return null;
      }
      if (t instanceof Batch) {
        Operators.onDiscard(t, cv);
        throw new IllegalArgumentException("window needs elements that own no memory (windows share them) but "
            + "element " + position + " is a Batch; use unbatch() first, or rebatch(n) to cut batches");
      }
      long p = position++;
      if (p % shift == 0) {
        windows.addLast(new Started<>(p, new ArrayList<>(Math.min(size, 1024))));
      }
      boolean taken = false;
      List<T> full = null;
      for (Started<T> w : windows) {
        long offset = p - w.start();
        if (offset % stride == 0 && w.elements().size() < size) {
          w.elements().add(t);
          taken = true;
        }
      }
      Started<T> first = windows.peekFirst();
      if (first != null && first.elements().size() == size) {
        full = windows.pollFirst().elements();
      }
      if (!taken) {
        Operators.onDiscard(t, cv); // between two strided elements of every open window
      }
      return full;
    }

    /** The windows not full, in order of their start (none with {@code drop}, their elements discarded). */
    synchronized List<List<T>> rest(boolean drop, Context cv) {
      List<List<T>> out = new ArrayList<>(windows.size());
      if (drop) {
        discard(cv);
        closed = false;
        return out;
      }
      for (Started<T> w : windows) {
        out.add(w.elements());
      }
      windows.clear();
      return out;
    }

    /** Discards every element of the open windows once; later elements are discarded on arrival. */
    synchronized void discard(Context cv) {
      closed = true;
      Set<Object> seen = Collections.newSetFromMap(new IdentityHashMap<>());
      for (Started<T> w : windows) {
        for (T t : w.elements()) {
          if (seen.add(t)) {
            Operators.onDiscard(t, cv);
          }
        }
      }
      windows.clear();
    }
  }

  private record Started<T>(long start, List<T> elements) {}
}
