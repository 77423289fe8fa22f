package dev.sluice.operators.internal;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Function;
import reactor.core.Exceptions;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Operators;
import reactor.core.publisher.SignalType;
import reactor.core.scheduler.Scheduler;
import reactor.util.context.Context;

/**
 * The parallel path of {@code ParallelMap}: chunks of elements, each chunk mapped on a worker
 * ({@code flatMapSequential} or {@code flatMap} over {@code Mono.fromCallable(...).subscribeOn}),
 * then flattened.
 *
 * <p>Reactor discards elements it holds, but not a chunk captured by a worker task that was
 * cancelled before it ran. So every chunk is registered per subscription from the moment it is
 * built until its results are handed downstream; a cancelled or failed subscription discards what
 * each registered chunk still holds (its inputs if it was never mapped, its results if it was), and
 * a worker that finishes mapping after the cancel discards its own results. Chunk objects never
 * reach the user's discard hook: the operator installs a hook that unwraps nothing and forwards
 * every other element to the downstream hook.
 */
public final class ChunkedMap {
  private ChunkedMap() {}

  public static <T, R> Flux<R> apply(Flux<T> source, Function<? super T, ? extends R> fn, int parallel,
      boolean deterministic, int chunkSize, Scheduler scheduler) {
    return Flux.deferContextual(view -> {
      Context downstream = Context.of(view);
      Registry registry = new Registry(downstream);
      Consumer<Object> hook = o -> {
        if (!(o instanceof Chunk)) {
          Operators.onDiscard(o, downstream);
        }
      };
      // Chunks are built under the registry's lock (not with buffer(n), whose partial list races
      // with a cancel from another thread), so a cancel discards the partial chunk exactly once.
      Flux<Chunk> chunks = source.<Chunk>handle((t, sink) -> {
        Chunk full = registry.add(t, chunkSize);
        if (full != null) {
          sink.next(full);
        }
      }).concatWith(Mono.fromSupplier(registry::flush));
      Function<Chunk, Mono<Chunk>> work = c -> Mono.fromCallable(() -> c.map(fn)).subscribeOn(scheduler);
      Flux<Chunk> mapped = deterministic
          ? chunks.flatMapSequential(work, parallel, 1)
          : chunks.flatMap(work, parallel, 1);
      // A chunk whose function failed emits the results before the failing element, then the
      // error, so the error arrives where a sequential map would raise it.
      @SuppressWarnings("unchecked")
      Flux<R> out = mapped.concatMap(c -> {
        Flux<R> results = Flux.fromIterable((List<R>) registry.take(c));
        return c.error == null ? results : results.concatWith(Flux.error(c.error));
      }, 1);
      return out
          .doFinally(signal -> {
            if (signal != SignalType.ON_COMPLETE) {
              registry.discardAll();
            }
          })
          .contextWrite(c -> Operators.enableOnDiscard(c, hook));
    });
  }

  /** One chunk of elements and, once mapped, its results. */
  static final class Chunk {
    static final int PENDING = 0;
    static final int MAPPING = 1;
    static final int MAPPED = 2;
    static final int TAKEN = 3;
    static final int DISCARDED = 4;

    final List<?> inputs;
    final Context ctx;
    final AtomicInteger state = new AtomicInteger(PENDING);
    Object[] results;
    Throwable error;

    Chunk(List<?> inputs, Context ctx) {
      this.inputs = inputs;
      this.ctx = ctx;
    }

    @SuppressWarnings("unchecked")
    <T, R> Chunk map(Function<? super T, ? extends R> fn) {
      if (!state.compareAndSet(PENDING, MAPPING)) {
        return this; // discarded before the worker ran
      }
      Object[] out = new Object[inputs.size()];
      int i = 0;
      try {
        for (; i < out.length; i++) {
          out[i] = fn.apply((T) inputs.get(i));
        }
      } catch (RuntimeException | Error e) {
        // Element i went to fn; the results before it are emitted, the inputs after it are ours.
        Exceptions.throwIfFatal(e);
        for (int j = i + 1; j < inputs.size(); j++) {
          Operators.onDiscard(inputs.get(j), ctx);
        }
        error = e;
        out = Arrays.copyOf(out, i);
      }
      results = out;
      if (!state.compareAndSet(MAPPING, MAPPED)) {
        discardArray(out, out.length, ctx); // cancelled while mapping: the canceller left them to us
      }
      return this;
    }

    /** Discards what the chunk holds unless its results were taken. */
    void discard() {
      for (;;) {
        int s = state.get();
        if (s == PENDING) {
          if (state.compareAndSet(PENDING, DISCARDED)) {
            for (Object o : inputs) {
              Operators.onDiscard(o, ctx);
            }
            return;
          }
        } else if (s == MAPPING) {
          if (state.compareAndSet(MAPPING, DISCARDED)) {
            return; // the worker discards its results when it finishes
          }
        } else if (s == MAPPED) {
          if (state.compareAndSet(MAPPED, DISCARDED)) {
            discardArray(results, results.length, ctx);
            return;
          }
        } else {
          return;
        }
      }
    }

    List<?> take() {
      if (state.compareAndSet(MAPPED, TAKEN)) {
        return Arrays.asList(results);
      }
      return Collections.emptyList();
    }

    static void discardArray(Object[] a, int n, Context ctx) {
      for (int i = 0; i < n; i++) {
        Operators.onDiscard(a[i], ctx);
        a[i] = null;
      }
    }
  }

  /** The chunks of one subscription that are built and not yet handed downstream. */
  static final class Registry {
    final Context downstream;
    final Set<Chunk> live = Collections.newSetFromMap(new IdentityHashMap<>());
    List<Object> partial;
    boolean closed;

    Registry(Context downstream) {
      this.downstream = downstream;
    }

    /** Adds {@code t} to the partial chunk; returns the chunk when it is full. */
    Chunk add(Object t, int chunkSize) {
      synchronized (this) {
        if (!closed) {
          if (partial == null) {
            partial = new ArrayList<>(chunkSize);
          }
          partial.add(t);
          if (partial.size() < chunkSize) {
            return null;
          }
          Chunk c = new Chunk(partial, downstream);
          partial = null;
          live.add(c);
          return c;
        }
      }
      Operators.onDiscard(t, downstream);
      return null;
    }

    /** The partial chunk at completion, or null. */
    Chunk flush() {
      synchronized (this) {
        if (closed || partial == null) {
          return null;
        }
        Chunk c = new Chunk(partial, downstream);
        partial = null;
        live.add(c);
        return c;
      }
    }

    List<?> take(Chunk c) {
      synchronized (this) {
        live.remove(c);
      }
      return c.take();
    }

    void discardAll() {
      List<Chunk> all;
      List<Object> rest;
      synchronized (this) {
        closed = true;
        all = new ArrayList<>(live);
        live.clear();
        rest = partial;
        partial = null;
      }
      if (rest != null) {
        for (Object o : rest) {
          Operators.onDiscard(o, downstream);
        }
      }
      for (Chunk c : all) {
        c.discard();
      }
    }
  }
}
