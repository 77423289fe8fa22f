package dev.sluice.operators.internal;

import dev.sluice.core.Options.ChunkPlacement;
import dev.sluice.core.internal.Fatal;
import dev.sluice.core.internal.TrackedScheduler;
import dev.sluice.core.internal.metrics.StageMeter;
import java.util.ArrayDeque;
import java.util.Iterator;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.concurrent.atomic.AtomicLongFieldUpdater;
import java.util.concurrent.atomic.AtomicReferenceFieldUpdater;
import java.util.function.Function;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Scannable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Operators;
import reactor.core.scheduler.Scheduler;
import reactor.util.context.Context;

/**
 * The parallel path of {@code ParallelMap} as one operator: elements are collected into chunks,
 * each chunk is mapped on a worker of {@code scheduler} (at most {@code parallel} at once) or, when
 * the function is cheap next to a scheduler hop or to producing its inputs, right on the thread
 * that completed it; results go downstream in input order ({@code deterministic}) or in the order
 * the chunks finish.
 *
 * <p>One operator rather than a composition of Reactor's ({@code handle}, {@code flatMapSequential},
 * {@code Mono.fromCallable}, {@code concatMapIterable}, ...), because every layer costs something
 * per element: here an element costs one array store and one volatile write on the way in and one
 * array load on the way out (docs/benchmarks.md, element path, has the figures).
 *
 * <p><b>Reactive Streams semantics.</b> Requests up to {@code (parallel + 1) × chunkSize} elements
 * ahead of the downstream (the chunks being mapped or emitted plus the one filling), replenished as
 * results go out; a chunk is handed on when full or when the upstream ends. Results are emitted on
 * demand, on the thread that requested them or that finished a chunk. Upstream errors arrive after
 * every element before them; an error of the function after the results before the failing element
 * (the upstream is then cancelled). Cancel cancels the upstream.
 *
 * <p><b>Discard support.</b> Every element received is emitted or discarded exactly once: the inputs
 * of the filling chunk and of chunks not yet mapped, the results not yet emitted, and the results of a
 * chunk whose worker finishes after the cancel go to {@link Operators#onDiscard}. The filling chunk
 * is shared between {@code onNext} and a cancelling thread by a Dekker handshake (each writes its own
 * volatile, then reads the other's), so an element is stored without a lock.
 *
 * @param <T> input type
 * @param <R> output type
 */
public final class FluxChunkedMap<T, R> extends Flux<R> implements Scannable {
  private final Publisher<? extends T> source;
  private final Function<? super T, ? extends R> fn;
  private final int parallel;
  private final boolean deterministic;
  private final int chunkSize;
  private final boolean adaptive;
  private final boolean mayInline;
  private final Scheduler scheduler;

  /**
   * The map.
   *
   * @param parallel chunks mapped at once, &gt; 1
   * @param deterministic emit in input order
   * @param chunkSize elements per chunk (the first size when {@code adaptive}), &gt; 0
   * @param adaptive let the chunk size adapt to the function's cost
   * @param placement {@link ChunkPlacement#ADAPTIVE}: an adaptive map maps a cheap chunk on the
   *     thread that completed it; {@link ChunkPlacement#WORKERS}: every chunk goes to a worker
   * @param scheduler where chunks are mapped
   */
  public FluxChunkedMap(Publisher<? extends T> source, Function<? super T, ? extends R> fn, int parallel,
      boolean deterministic, int chunkSize, boolean adaptive, ChunkPlacement placement, Scheduler scheduler) {
    this.source = source;
    this.fn = fn;
    this.parallel = parallel;
    this.deterministic = deterministic;
    this.chunkSize = chunkSize;
    this.adaptive = adaptive;
    this.mayInline = placement == ChunkPlacement.ADAPTIVE;
    this.scheduler = TrackedScheduler.of(scheduler);
  }

  /** Whether a chunk may map on the thread that completed it (test hook). */
  boolean mayInline() {
    return mayInline;
  }

  @Override
  public void subscribe(CoreSubscriber<? super R> actual) {
    source.subscribe(new MapSubscriber<T, R>(actual, this));
  }

  @Override
  public Object scanUnsafe(Attr key) {
    if (key == Attr.PARENT) {
      return source;
    }
    if (key == Attr.RUN_STYLE) {
      return Attr.RunStyle.ASYNC;
    }
    return null;
  }

  /** One chunk: its inputs, then its results. State changes under the chunk's lock. */
  static final class Chunk {
    static final int PENDING = 0;
    static final int MAPPING = 1;
    static final int MAPPED = 2;
    static final int DISCARDED = 3;

    final Object[] inputs;
    final int size;
    final long fillNanos;
    /** Guarded by {@code this}; volatile so the drain can poll it without the lock. */
    volatile int state = PENDING;
    Object[] results;
    int resultCount;
    Throwable error;
    /** Next result to emit; drain only. */
    int next;

    Chunk(Object[] inputs, int size, long fillNanos) {
      this.inputs = inputs;
      this.size = size;
      this.fillNanos = fillNanos;
    }
  }

  static final class MapSubscriber<T, R> implements CoreSubscriber<T>, Subscription, Scannable {
    final CoreSubscriber<? super R> actual;
    final Context ctx;
    final Function<? super T, ? extends R> fn;
    final int parallel;
    final boolean deterministic;
    final Scheduler scheduler;
    final Tuner tuner;
    /** The stage's meter when it records the time chunks take, else null. */
    final StageMeter meter;

    Subscription upstream;

    // The filling chunk: written by onNext (and onComplete/onError), read by a cancelling thread.
    Object[] filling;
    volatile int fillCount;
    volatile int fillCapacity;
    long fillStarted;
    /** Guarded by {@code fillLock}: elements of {@code filling} already discarded after a stop. */
    int fillDiscarded;
    final Object fillLock = new Object();

    /** Every chunk not yet fully emitted or discarded, in input order. */
    final ConcurrentLinkedQueue<Chunk> chunks = new ConcurrentLinkedQueue<>();
    /** Chunks waiting for a worker; guarded by {@code dispatchLock}. */
    final ArrayDeque<Chunk> waiting = new ArrayDeque<>();
    int mappingNow;
    final Object dispatchLock = new Object();

    /** Unordered mode: the chunk being emitted (drain only). */
    Chunk current;

    volatile boolean done; // the upstream ended and the filling chunk was handed on
    Throwable upstreamError;
    /** Set by cancel or by a failure of the function: no more chunks, inputs are discarded. */
    volatile boolean stopped;
    volatile boolean cancelled;
    boolean terminated; // drain only

    volatile long requested;
    static final AtomicLongFieldUpdater<MapSubscriber> REQUESTED =
        AtomicLongFieldUpdater.newUpdater(MapSubscriber.class, "requested");
    volatile int wip;
    static final AtomicIntegerFieldUpdater<MapSubscriber> WIP =
        AtomicIntegerFieldUpdater.newUpdater(MapSubscriber.class, "wip");
    volatile Throwable functionError;
    static final AtomicReferenceFieldUpdater<MapSubscriber, Throwable> FUNCTION_ERROR =
        AtomicReferenceFieldUpdater.newUpdater(MapSubscriber.class, Throwable.class, "functionError");

    /** Elements requested from the upstream, and results emitted or discarded by the drain; drain only. */
    long requestedUpstream;
    long released;

    MapSubscriber(CoreSubscriber<? super R> actual, FluxChunkedMap<T, R> parent) {
      this.actual = actual;
      this.ctx = actual.currentContext();
      this.fn = parent.fn;
      this.parallel = parent.parallel;
      this.deterministic = parent.deterministic;
      this.scheduler = parent.scheduler;
      this.tuner = new Tuner(parent.chunkSize, parent.adaptive, parent.mayInline);
      StageMeter m = StageMeter.from(ctx);
      this.meter = m != null && m.recordsWork() ? m : null;
      if (m != null) {
        m.workers(parallel);
      }
    }

    @Override
    public Context currentContext() {
      return ctx;
    }

    @Override
    public void onSubscribe(Subscription s) {
      if (Operators.validate(upstream, s)) {
        upstream = s;
        actual.onSubscribe(this);
        drain(); // requests the first chunks ahead of the downstream, as tf.data prefetches
      }
    }

    @Override
    public void onNext(T t) {
      if (done) {
        Operators.onNextDropped(t, ctx);
        return;
      }
      if (stopped) {
        Operators.onDiscard(t, ctx); // after a stop the filling chunk may be full and is never handed on
        return;
      }
      Object[] f = filling;
      int n = fillCount;
      if (f == null) {
        f = new Object[tuner.chunkSize()];
        filling = f;
        fillCapacity = f.length;
        fillStarted = tuner.adaptive ? System.nanoTime() : 0L;
      }
      f[n] = t;
      fillCount = n + 1; // volatile: publishes the element before stopped is read (Dekker with cancel)
      if (stopped) {
        discardFilling();
        return;
      }
      if (n + 1 == f.length) {
        handOn();
      }
    }

    /** Hands the filling chunk on (full, or the last one at the end); nothing after a stop. */
    void handOn() {
      Chunk c;
      synchronized (fillLock) {
        int n = fillCount;
        if (stopped || n == 0) {
          return;
        }
        c = new Chunk(filling, n, tuner.adaptive ? System.nanoTime() - fillStarted : 0L);
        filling = null;
        fillCount = 0;
        fillDiscarded = 0;
        chunks.offer(c);
      }
      if (tuner.mapsInline(c.size)) {
        map(c, true);
        drain();
      } else {
        dispatch(c);
      }
    }

    /** Starts {@code c} on a worker, or queues it while {@code parallel} chunks are being mapped. */
    void dispatch(Chunk c) {
      synchronized (dispatchLock) {
        if (mappingNow >= parallel) {
          waiting.offer(c);
          return;
        }
        mappingNow++;
      }
      submit(c);
    }

    void submit(Chunk c) {
      try {
        scheduler.schedule(() -> {
          map(c, false);
          Chunk next;
          synchronized (dispatchLock) {
            next = waiting.poll();
            if (next == null) {
              mappingNow--;
            }
          }
          drain();
          if (next != null) {
            submit(next);
          }
        });
      } catch (RejectedExecutionException e) {
        fail(Operators.onRejectedExecution(e, ctx));
      }
    }

    /** Maps {@code c} unless it was discarded first; publishes its results, or discards them after a stop. */
    @SuppressWarnings("unchecked")
    void map(Chunk c, boolean inline) {
      synchronized (c) {
        if (c.state != Chunk.PENDING) {
          return;
        }
        c.state = Chunk.MAPPING;
      }
      long start = tuner.adaptive || meter != null ? System.nanoTime() : 0L;
      Object[] in = c.inputs;
      Object[] out = in; // results replace inputs in place: no second array per chunk
      int i = 0;
      Throwable failure = null;
      try {
        for (; i < c.size; i++) {
          Object r = fn.apply((T) in[i]);
          if (r == null) {
            throw new NullPointerException("The mapper returned a null value."); // as Flux.map says it
          }
          out[i] = r;
        }
      } catch (RuntimeException | Error e) {
        failure = Fatal.signalable(e, "map"); // a JVM error too: Reactor would rethrow it on this worker
        in[i] = null; // element i went to fn
        for (int j = i + 1; j < c.size; j++) {
          Operators.onDiscard(in[j], ctx);
          in[j] = null;
        }
      }
      if (tuner.adaptive || meter != null) {
        long took = System.nanoTime() - start;
        if (tuner.adaptive) {
          tuner.observe(c.size, c.fillNanos, took, inline);
        }
        if (meter != null) {
          meter.workerTime(took);
        }
      }
      boolean discardNow;
      synchronized (c) {
        discardNow = c.state == Chunk.DISCARDED; // stopped while mapping: the stopper left them to us
        if (!discardNow) {
          c.results = out;
          c.resultCount = i;
          c.error = failure;
          c.state = Chunk.MAPPED;
        }
      }
      if (discardNow) {
        for (int j = 0; j < i; j++) {
          Operators.onDiscard(out[j], ctx);
          out[j] = null;
        }
      }
    }

    @Override
    public void onError(Throwable t) {
      if (done) {
        Operators.onErrorDropped(t, ctx);
        return;
      }
      upstreamError = t;
      handOn();
      done = true;
      drain();
    }

    @Override
    public void onComplete() {
      if (done) {
        return;
      }
      handOn();
      done = true;
      drain();
    }

    @Override
    public void request(long n) {
      if (Operators.validate(n)) {
        Operators.addCap(REQUESTED, this, n);
        drain();
      }
    }

    @Override
    public void cancel() {
      if (cancelled) {
        return;
      }
      cancelled = true;
      stop();
      drain();
    }

    /** No more chunks: cancels the upstream and discards the filling chunk (Dekker with onNext). */
    void stop() {
      stopped = true; // volatile write, then fillCount is read: pairs with onNext's write-then-read
      upstream.cancel();
      discardFilling();
    }

    /** Discards the elements of the filling chunk that nobody discarded yet. */
    void discardFilling() {
      synchronized (fillLock) {
        int n = fillCount; // volatile read first: it makes onNext's plain write of filling visible
        Object[] f = filling;
        if (f == null) {
          return;
        }
        for (int j = fillDiscarded; j < n; j++) {
          Operators.onDiscard(f[j], ctx);
          f[j] = null;
        }
        fillDiscarded = n;
      }
    }

    /** A failure of the function or of the scheduler: stop, and let the drain report it. */
    void fail(Throwable e) {
      if (FUNCTION_ERROR.compareAndSet(this, null, e)) {
        stop();
      } else {
        Operators.onErrorDropped(e, ctx);
      }
      drain();
    }

    /** Discards what a chunk still holds: inputs never mapped, or results not emitted. */
    void discard(Chunk c) {
      Object[] drop = null;
      int from = 0;
      int to = 0;
      synchronized (c) {
        if (c.state == Chunk.PENDING) {
          drop = c.inputs;
          to = c.size;
        } else if (c.state == Chunk.MAPPED) {
          drop = c.results;
          from = c.next;
          to = c.resultCount;
          c.next = to;
        }
        c.state = Chunk.DISCARDED;
      }
      if (drop != null) {
        for (int j = from; j < to; j++) {
          Operators.onDiscard(drop[j], ctx);
          drop[j] = null;
        }
      }
    }

    void discardChunks() {
      Chunk c;
      while ((c = chunks.poll()) != null) {
        discard(c);
      }
      current = null;
      synchronized (dispatchLock) {
        waiting.clear(); // their inputs went with the chunks above
      }
    }

    /** The next chunk to emit from: the oldest (deterministic) or any mapped one; null if none is ready. */
    Chunk readyChunk() {
      if (deterministic) {
        Chunk head = chunks.peek();
        return head != null && head.state == Chunk.MAPPED ? head : null;
      }
      if (current != null) {
        return current;
      }
      for (Iterator<Chunk> it = chunks.iterator(); it.hasNext(); ) {
        Chunk c = it.next();
        if (c.state == Chunk.MAPPED) {
          current = c;
          return c;
        }
      }
      return null;
    }

    /** Done with {@code c}: out of the queue. */
    void retire(Chunk c) {
      if (deterministic) {
        chunks.poll();
      } else {
        chunks.remove(c);
        current = null;
      }
    }

    void drain() {
      if (WIP.getAndIncrement(this) != 0) {
        return;
      }
      int missed = 1;
      final CoreSubscriber<? super R> a = actual;
      for (;;) {
        if (terminated) {
          discardChunks();
        } else if (cancelled) {
          terminated = true;
          discardChunks();
        } else {
          long r = requested;
          long e = 0L;
          for (;;) {
            Chunk c = readyChunk();
            if (c == null) {
              break;
            }
            if (c.next < c.resultCount) {
              if (e == r) {
                break;
              }
              @SuppressWarnings("unchecked")
              R v = (R) c.results[c.next];
              c.results[c.next++] = null;
              a.onNext(v);
              e++;
              if (cancelled) {
                break;
              }
              continue;
            }
            if (c.error != null) {
              Throwable failure = c.error;
              c.error = null;
              fail(failure); // stops; this drain reports it below
              break;
            }
            retire(c); // even without demand, so that completion is not held back
            released += c.size;
          }
          if (e != 0L && r != Long.MAX_VALUE) {
            REQUESTED.addAndGet(this, -e);
          }
          if (!cancelled) {
            Throwable fe = functionError;
            if (fe != null) {
              terminated = true;
              discardChunks();
              a.onError(fe);
            } else if (done && chunks.isEmpty()) {
              terminated = true;
              Throwable ue = upstreamError;
              if (ue != null) {
                a.onError(ue);
              } else {
                a.onComplete();
              }
            } else if (!done && !stopped) {
              requestUpstream();
            }
          }
        }
        missed = WIP.addAndGet(this, -missed);
        if (missed == 0) {
          break;
        }
      }
    }

    /**
     * Keeps {@code (parallel + 1) × chunkSize} elements plus the filling chunk's capacity requested
     * and not yet released (the capacity, not the current chunk size: a chunk started before the
     * size shrank must still fill).
     */
    void requestUpstream() {
      long budget = (long) (parallel + 1) * tuner.chunkSize() + Math.max(fillCapacity, tuner.chunkSize());
      long want = budget - (requestedUpstream - released);
      // top up in halves of a chunk (or all of it at first), not per element
      if (want > 0 && (requestedUpstream == 0 || want >= Math.max(1, tuner.chunkSize() / 2))) {
        requestedUpstream += want;
        upstream.request(want);
      }
    }

    @Override
    public Object scanUnsafe(Attr key) {
      if (key == Attr.PARENT) {
        return upstream;
      }
      if (key == Attr.ACTUAL) {
        return actual;
      }
      if (key == Attr.CANCELLED) {
        return cancelled;
      }
      if (key == Attr.TERMINATED) {
        return done && chunks.isEmpty();
      }
      if (key == Attr.REQUESTED_FROM_DOWNSTREAM) {
        return requested;
      }
      if (key == Attr.RUN_STYLE) {
        return Attr.RunStyle.ASYNC;
      }
      return null;
    }
  }

  /**
   * Chunk size and inline decisions of one subscription (adaptive mode): chunks double (up to
   * {@value #MAX_ADAPTIVE_CHUNK} when mapped on workers, to {@code MAX_INLINE_CHUNK} when mapped
   * inline) while one maps in under {@value #GROW_BELOW_MAP_NANOS} ns and its
   * inputs arrived faster than one per {@value #GROW_BELOW_FILL_NANOS_PER_ELEMENT} ns, and halve
   * (not below the initial size) when inputs arrive slower than one per
   * {@value #SHRINK_ABOVE_FILL_NANOS_PER_ELEMENT} ns. Chunk boundaries never change the output.
   */
  static final class Tuner {
    static final long GROW_BELOW_MAP_NANOS = 100_000;
    static final long GROW_BELOW_FILL_NANOS_PER_ELEMENT = 2_000;
    static final long SHRINK_ABOVE_FILL_NANOS_PER_ELEMENT = 20_000;
    /** A chunk maps on the calling thread when its expected cost is below this (the order of a hop to a worker and back) ... */
    static final long INLINE_BELOW_NANOS = 20_000;
    /**
     * ... or below this multiple of what its inputs took to arrive: a function up to twice as dear as
     * producing its input gains at most 3× from running beside the producer on idle cores, and pays
     * hops and a thread migration for it; the margin also keeps a chunk that met a compilation or a
     * GC pause, or the interpreter on a cold JVM (both sides slow and alike), from sending a cheap
     * function, and with it the rest of the pass, to the workers.
     */
    static final int INLINE_BELOW_FILL_MULTIPLE = 2;
    /**
     * The first chunks of a pass map inline, to measure the function: the first measurement of a
     * cold JVM includes one-time costs (linkage, the interpreter) that would send a cheap function
     * to the workers, and with it the rest of the pass; the estimate is the lowest of them.
     */
    static final int INLINE_FIRST_CHUNKS = 3;
    static final int MAX_ADAPTIVE_CHUNK = 4096;
    /**
     * The largest adaptive chunk that is mapped inline: inline chunks save no hop by being large,
     * and large ones cost locality (the elements in flight no longer fit the cache; the element-path
     * figures in docs/benchmarks.md show the difference).
     */
    static final int MAX_INLINE_CHUNK = 256;

    final boolean adaptive;
    /** False when every chunk goes to the workers ({@link ChunkPlacement#WORKERS}). */
    final boolean mayInline;
    final int initialChunkSize;
    volatile int chunkSize;
    /**
     * The function's time per element: the lowest recent measurement, allowed to rise by at most an
     * eighth per chunk, so that one slow chunk (a GC pause, a chunk whose inputs were cold in another
     * core's cache) does not move the next chunks to the workers; -1 until measured.
     */
    volatile long mapNanosPerElement = -1;
    /** Moving average of the time between inputs; -1 until measured. */
    volatile long fillNanosPerElement = -1;
    /** Chunks measured so far. */
    volatile int observed;

    Tuner(int chunkSize, boolean adaptive, boolean mayInline) {
      this.initialChunkSize = chunkSize;
      this.chunkSize = chunkSize;
      this.adaptive = adaptive;
      this.mayInline = mayInline;
    }

    int chunkSize() {
      return chunkSize;
    }

    /** A chunk of {@code size} inputs filled in {@code fillNanos} and mapped in {@code mapNanos}. */
    synchronized void observe(int size, long fillNanos, long mapNanos, boolean inline) {
      observed++;
      long perElement = mapNanos / Math.max(1, size);
      long estimate = mapNanosPerElement;
      mapNanosPerElement = estimate < 0 || perElement <= estimate ? perElement
          : Math.min(perElement, estimate + estimate / 8 + 1);
      long fillPerElement = fillNanos / Math.max(1, size);
      fillNanosPerElement = fillNanosPerElement < 0 ? fillPerElement : (3 * fillNanosPerElement + fillPerElement) / 4;
      if (size != chunkSize) {
        return; // a last partial chunk, or one from before the previous change
      }
      int limit = inline ? Math.max(initialChunkSize, MAX_INLINE_CHUNK) : MAX_ADAPTIVE_CHUNK;
      if (mapNanos < GROW_BELOW_MAP_NANOS && fillPerElement < GROW_BELOW_FILL_NANOS_PER_ELEMENT
          && chunkSize < limit) {
        chunkSize = Math.min(limit, chunkSize * 2);
      } else if ((fillPerElement > SHRINK_ABOVE_FILL_NANOS_PER_ELEMENT || chunkSize > limit)
          && chunkSize > initialChunkSize) {
        chunkSize = Math.max(initialChunkSize, chunkSize / 2);
      }
    }

    /**
     * True when a chunk of {@code size} elements is expected to map in less than
     * {@value #INLINE_BELOW_NANOS} ns or in less than {@value #INLINE_BELOW_FILL_MULTIPLE}× the
     * time its inputs took to arrive: then it maps on the thread that completed it (adaptive mode
     * only, and only when chunks may map inline at all). The first {@value #INLINE_FIRST_CHUNKS} chunks of a subscription map inline too, to
     * measure the function; every chunk measures it and the upstream again.
     *
     * <p>Why the comparison with the inputs' arrival: with the fixed budget alone, a cheap function
     * in large chunks sits on the budget's edge and some of its chunks go to the workers. That costs
     * more than the hop: a chunk mapped on a worker
     * moves the rest of the pipeline to that worker (results are emitted, and the upstream asked
     * for more, on the thread that finished the chunk), so a {@code prefetch} producer downstream
     * has to be woken for every replenishment, and a chunk measured on a worker looks slower (its
     * inputs are in the other core's cache), which would send the next ones there too.
     */
    boolean mapsInline(int size) {
      if (!adaptive || !mayInline) {
        return false;
      }
      long perElement = mapNanosPerElement;
      if (observed < INLINE_FIRST_CHUNKS) {
        return true;
      }
      long budget = Math.max(INLINE_BELOW_NANOS, fillNanosPerElement * size * INLINE_BELOW_FILL_MULTIPLE);
      return perElement * size < budget;
    }
  }
}
