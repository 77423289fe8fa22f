package dev.sluice.operators.internal;

import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
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
 * then flattened ({@code concatMapIterable}).
 *
 * <p>Reactor discards the elements it holds, but not a chunk captured by a worker task cancelled
 * before it ran, nor the rest of an iterator it does not know to be finite. So every chunk is
 * registered per subscription from the moment it is built until its last result is handed
 * downstream, and hands its results out one at a time under a lock; a cancelled or failed
 * subscription discards what each registered chunk still holds (its inputs if it was never mapped,
 * its results not yet handed out if it was), and a worker that finishes mapping after the cancel
 * discards its own results. Every element is thus emitted or discarded exactly once. Chunk objects
 * never reach the user's discard hook: the operator installs a hook that skips them and forwards
 * every other element to the downstream hook.
 */
public final class ChunkedMap {
  /** Handed out by a chunk whose results were discarded between hasNext and next; filtered out. */
  static final Object SKIP = new Object();

  private ChunkedMap() {}

  /** Adaptive chunks grow while mapping one takes less than this. */
  static final long GROW_BELOW_MAP_NANOS = 100_000;
  /** ... and while the source delivers an element at least this often. */
  static final long GROW_BELOW_FILL_NANOS_PER_ELEMENT = 2_000;
  /** Adaptive chunks shrink when the source is slower than this per element. */
  static final long SHRINK_ABOVE_FILL_NANOS_PER_ELEMENT = 20_000;
  /**
   * Adaptive mode maps a chunk on the calling thread when the function's measured cost for the
   * whole chunk is below this (about the cost of a hop to a worker and back on this project's VM).
   */
  static final long INLINE_BELOW_NANOS = 20_000;
  /** {@code -Dsluice.map.inline=false} always hands chunks to the workers (for comparisons). */
  static final boolean INLINE = Boolean.parseBoolean(System.getProperty("sluice.map.inline", "true"));
  /** The largest adaptive chunk. */
  static final int MAX_ADAPTIVE_CHUNK = 4096;

  /**
   * @param chunkSize elements per chunk; with {@code adaptive}, the first chunk's size
   * @param adaptive let the chunk size double (up to {@value #MAX_ADAPTIVE_CHUNK}) while a chunk
   *     maps in under {@value #GROW_BELOW_MAP_NANOS} ns and its elements arrived faster than one per
   *     {@value #GROW_BELOW_FILL_NANOS_PER_ELEMENT} ns, so a cheap function over a fast source pays
   *     one scheduler hop per thousands of elements rather than per 64; halve it back (not below
   *     {@code chunkSize}) when elements arrive slower than one per
   *     {@value #SHRINK_ABOVE_FILL_NANOS_PER_ELEMENT} ns, where the first element of a chunk would
   *     wait long for the last. Chunk boundaries never change the output.
   */
  public static <T, R> Flux<R> apply(Flux<T> source, Function<? super T, ? extends R> fn, int parallel,
      boolean deterministic, int chunkSize, boolean adaptive, Scheduler scheduler) {
    return Flux.deferContextual(view -> {
      Context downstream = Context.of(view);
      Registry registry = new Registry(downstream, chunkSize, adaptive);
      Consumer<Object> hook = o -> {
        if (!(o instanceof Chunk) && o != SKIP) {
          Operators.onDiscard(o, downstream);
        }
      };
      // Chunks are built under the registry's lock (not with buffer(n), whose partial list races
      // with a cancel from another thread), so a cancel discards the partial chunk exactly once.
      Flux<Chunk> chunks = source.<Chunk>handle((t, sink) -> {
        Chunk full = registry.add(t);
        if (full != null) {
          sink.next(full);
        }
      }).concatWith(Mono.fromSupplier(registry::flush));
      Function<Chunk, Mono<Chunk>> work = c -> {
        Mono<Chunk> mapping = Mono.fromCallable(() -> c.map(fn));
        // a chunk that maps faster than a scheduler hop costs is mapped right here, still in order
        return registry.mapsInline(c.inputs.size()) ? mapping : mapping.subscribeOn(scheduler);
      };
      Flux<Chunk> mapped = deterministic
          ? chunks.flatMapSequential(work, parallel, 1)
          : chunks.flatMap(work, parallel, 1);
      // A chunk whose function failed hands out the results before the failing element, then
      // throws from hasNext, so the error arrives where a sequential map would raise it.
      @SuppressWarnings("unchecked")
      Flux<R> out = (Flux<R>) mapped.concatMapIterable(Chunk::claim, 1).filter(o -> o != SKIP);
      return out
          .doFinally(signal -> {
            if (signal != SignalType.ON_COMPLETE) {
              registry.discardAll();
            }
          })
          .contextWrite(c -> Operators.enableOnDiscard(c, hook));
    });
  }

  /**
   * One chunk of elements and, once mapped, its results: handed downstream as a plain list when
   * every element mapped (Reactor then owns them, and discards the rest of a list it is iterating
   * on cancel), else one at a time, up to the failure.
   */
  static final class Chunk implements Iterable<Object>, Iterator<Object> {
    static final int PENDING = 0;
    static final int MAPPING = 1;
    static final int MAPPED = 2;
    static final int DISCARDED = 3;

    final List<?> inputs;
    final Registry registry;
    /** Guarded by {@code this}. */
    int state = PENDING;
    Object[] results;
    int next;
    boolean reserved;
    Object reservedValue;
    Throwable error;
    boolean errorThrown;

    Chunk(List<?> inputs, Registry registry, long startedNanos) {
      this.inputs = inputs;
      this.registry = registry;
      this.startedNanos = startedNanos;
      this.filledNanos = registry.adaptive ? System.nanoTime() : 0L;
    }

    static final int CLAIMED = 4;

    /** When the first input was added, and when the chunk was complete (adaptive chunking). */
    final long startedNanos;
    final long filledNanos;

    @SuppressWarnings("unchecked")
    <T, R> Chunk map(Function<? super T, ? extends R> fn) {
      synchronized (this) {
        if (state != PENDING) {
          return this; // discarded before the worker ran
        }
        state = MAPPING;
      }
      long mapStart = registry.adaptive ? System.nanoTime() : 0L;
      try {
        return mapInputs(fn);
      } finally {
        if (registry.adaptive) {
          registry.observe(inputs.size(), filledNanos - startedNanos, System.nanoTime() - mapStart);
        }
      }
    }

    /**
     * The results for the downstream to iterate: all of them as a list (this chunk is then done
     * and unregistered), or, when the function failed, this chunk itself, which hands the results
     * before the failure out one at a time and then throws.
     */
    Iterable<Object> claim() {
      synchronized (this) {
        if (state == MAPPED && error == null) {
          Object[] out = results; // without a failure every input has its result: out is full
          results = null;
          state = CLAIMED;
          registry.remove(this);
          // a list over the array: an array spliterator, no per-element modCount checks in Reactor's flatten
          return java.util.Arrays.asList(out);
        }
        if (state == DISCARDED) {
          registry.remove(this);
          return List.of();
        }
      }
      return this;
    }

    @SuppressWarnings("unchecked")
    private <T, R> Chunk mapInputs(Function<? super T, ? extends R> fn) {
      Object[] out = new Object[inputs.size()];
      int i = 0;
      Throwable failure = null;
      try {
        for (; i < out.length; i++) {
          out[i] = fn.apply((T) inputs.get(i));
        }
      } catch (RuntimeException | Error e) {
        // Element i went to fn; the results before it are handed out, the inputs after it are ours.
        Exceptions.throwIfFatal(e);
        failure = e;
        for (int j = i + 1; j < inputs.size(); j++) {
          Operators.onDiscard(inputs.get(j), registry.downstream);
        }
      }
      int n = i;
      boolean discardNow;
      synchronized (this) {
        discardNow = state == DISCARDED; // cancelled while mapping: the canceller left them to us
        if (!discardNow) {
          results = out;
          error = failure;
          state = MAPPED;
          next = 0;
          resultCount = n;
        }
      }
      if (discardNow) {
        for (int j = 0; j < n; j++) {
          Operators.onDiscard(out[j], registry.downstream);
        }
      }
      return this;
    }

    int resultCount;

    /** Discards what the chunk still holds: inputs never mapped, or results not handed out. */
    void discard() {
      List<Object> drop = new ArrayList<>();
      synchronized (this) {
        if (state == PENDING) {
          drop.addAll(inputs);
        } else if (state == MAPPED) {
          for (int j = next; j < resultCount; j++) {
            drop.add(results[j]);
            results[j] = null;
          }
          if (reserved) {
            drop.add(reservedValue);
            reservedValue = SKIP;
          }
          next = resultCount;
        }
        state = DISCARDED;
      }
      for (Object o : drop) {
        Operators.onDiscard(o, registry.downstream);
      }
    }

    @Override
    public Iterator<Object> iterator() {
      return this;
    }

    @Override
    public boolean hasNext() {
      synchronized (this) {
        if (reserved) {
          return true;
        }
        if (state == MAPPED && next < resultCount) {
          reservedValue = results[next];
          results[next++] = null;
          reserved = true;
          return true;
        }
      }
      registry.remove(this);
      Throwable e;
      synchronized (this) {
        e = state == MAPPED && !errorThrown ? error : null;
        errorThrown |= e != null;
      }
      if (e != null) {
        throw Exceptions.propagate(e);
      }
      return false;
    }

    @Override
    public Object next() {
      if (!hasNext()) {
        throw new java.util.NoSuchElementException();
      }
      synchronized (this) {
        Object v = reservedValue;
        reserved = false;
        reservedValue = null;
        return v; // SKIP when the chunk was discarded after hasNext
      }
    }
  }

  /** The chunks of one subscription that are built and not yet fully handed downstream. */
  static final class Registry {
    final Context downstream;
    final Set<Chunk> live = Collections.newSetFromMap(new IdentityHashMap<>());
    final int initialChunkSize;
    final boolean adaptive;
    /** Guarded by {@code this}. */
    int chunkSize;
    /** Moving average of the function's time per element (adaptive mode); -1 until a chunk was mapped. */
    volatile long mapNanosPerElement = -1;
    List<Object> partial;
    long partialStarted;
    boolean closed;

    Registry(Context downstream, int chunkSize, boolean adaptive) {
      this.downstream = downstream;
      this.initialChunkSize = chunkSize;
      this.chunkSize = chunkSize;
      this.adaptive = adaptive;
    }

    /** Adds {@code t} to the partial chunk; returns the chunk when it is full. */
    Chunk add(Object t) {
      synchronized (this) {
        if (!closed) {
          if (partial == null) {
            partial = new ArrayList<>(chunkSize);
            partialStarted = adaptive ? System.nanoTime() : 0L;
          }
          partial.add(t);
          if (partial.size() < chunkSize) {
            return null;
          }
          Chunk c = new Chunk(partial, this, partialStarted);
          partial = null;
          live.add(c);
          return c;
        }
      }
      Operators.onDiscard(t, downstream);
      return null;
    }

    /** A chunk of {@code size} elements filled in {@code fillNanos} and mapped in {@code mapNanos}. */
    void observe(int size, long fillNanos, long mapNanos) {
      synchronized (this) {
        long perElement = mapNanos / Math.max(1, size);
        mapNanosPerElement = mapNanosPerElement < 0 ? perElement : (3 * mapNanosPerElement + perElement) / 4;
        if (size != chunkSize) {
          return; // a last partial chunk, or one from before the previous change
        }
        long fillPerElement = fillNanos / size;
        if (mapNanos < GROW_BELOW_MAP_NANOS && fillPerElement < GROW_BELOW_FILL_NANOS_PER_ELEMENT
            && chunkSize < MAX_ADAPTIVE_CHUNK) {
          chunkSize = Math.min(MAX_ADAPTIVE_CHUNK, chunkSize * 2);
        } else if (fillPerElement > SHRINK_ABOVE_FILL_NANOS_PER_ELEMENT && chunkSize > initialChunkSize) {
          chunkSize = Math.max(initialChunkSize, chunkSize / 2);
        }
      }
    }

    /**
     * True when a chunk of {@code size} elements is expected to map in less than
     * {@value #INLINE_BELOW_NANOS} ns, about what handing it to a worker and back costs on a
     * virtual machine: then it is mapped on the calling thread (adaptive mode only; the first chunk
     * always goes to a worker, and every chunk measures the function again).
     */
    boolean mapsInline(int size) {
      long perElement = mapNanosPerElement;
      return adaptive && INLINE && perElement >= 0 && perElement * size < INLINE_BELOW_NANOS;
    }

    /** The partial chunk at completion, or null. */
    Chunk flush() {
      synchronized (this) {
        if (closed || partial == null) {
          return null;
        }
        Chunk c = new Chunk(partial, this, partialStarted);
        partial = null;
        live.add(c);
        return c;
      }
    }

    void remove(Chunk c) {
      synchronized (this) {
        live.remove(c);
      }
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
