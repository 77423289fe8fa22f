package dev.sluice.operators.internal;

import dev.sluice.core.internal.Fatal;
import dev.sluice.core.internal.metrics.StageMeter;
import dev.sluice.core.spi.WaitCancellation;
import java.util.ArrayDeque;
import java.util.Iterator;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.concurrent.atomic.AtomicLongFieldUpdater;
import java.util.concurrent.atomic.AtomicReferenceFieldUpdater;
import java.util.function.Function;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Scannable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Operators;
import reactor.core.scheduler.Scheduler;
import reactor.util.context.Context;

/**
 * The per-subscription state of {@link FluxChunkedMap}: the filling chunk (shared with a cancelling
 * thread by a Dekker handshake), the chunks waiting for or being mapped, and the drain that emits
 * results in input order or in the order chunks finish. The operator's javadoc states the contract.
 *
 * @param <T> input type
 * @param <R> output type
 */
final class FluxChunkedMapSubscriber<T, R> implements CoreSubscriber<T>, Subscription, Scannable {
  final CoreSubscriber<? super R> actual;
  final Context ctx;
  final Function<? super T, ? extends R> fn;
  final int parallel;
  final boolean deterministic;
  final Scheduler scheduler;
  /** The workers' chunks are mapped within it; a stop cancels it. */
  final WaitCancellation waits = new WaitCancellation();
  final FluxChunkedMapTuner tuner;
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
  final ConcurrentLinkedQueue<FluxChunkedMapChunk> chunks = new ConcurrentLinkedQueue<>();
  /** Chunks waiting for a worker; guarded by {@code dispatchLock}. */
  final ArrayDeque<FluxChunkedMapChunk> waiting = new ArrayDeque<>();
  int mappingNow;
  final Object dispatchLock = new Object();

  /** Unordered mode: the chunk being emitted (drain only). */
  FluxChunkedMapChunk current;

  volatile boolean done; // the upstream ended and the filling chunk was handed on
  Throwable upstreamError;
  /** Set by cancel or by a failure of the function: no more chunks, inputs are discarded. */
  volatile boolean stopped;
  volatile boolean cancelled;
  boolean terminated; // drain only

  volatile long requested;
  static final AtomicLongFieldUpdater<FluxChunkedMapSubscriber> REQUESTED =
      AtomicLongFieldUpdater.newUpdater(FluxChunkedMapSubscriber.class, "requested");
  volatile int wip;
  static final AtomicIntegerFieldUpdater<FluxChunkedMapSubscriber> WIP =
      AtomicIntegerFieldUpdater.newUpdater(FluxChunkedMapSubscriber.class, "wip");
  volatile Throwable functionError;
  static final AtomicReferenceFieldUpdater<FluxChunkedMapSubscriber, Throwable> FUNCTION_ERROR =
      AtomicReferenceFieldUpdater.newUpdater(FluxChunkedMapSubscriber.class, Throwable.class, "functionError");

  /** Elements requested from the upstream, and results emitted or discarded by the drain; drain only. */
  long requestedUpstream;
  long released;

  FluxChunkedMapSubscriber(CoreSubscriber<? super R> actual, Function<? super T, ? extends R> fn, int parallel,
      boolean deterministic, Scheduler scheduler, FluxChunkedMapTuner tuner) {
    this.actual = actual;
    this.ctx = actual.currentContext();
    this.fn = fn;
    this.parallel = parallel;
    this.deterministic = deterministic;
    this.scheduler = scheduler;
    this.tuner = tuner;
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
    FluxChunkedMapChunk c;
    synchronized (fillLock) {
      int n = fillCount;
      if (stopped || n == 0) {
        return;
      }
      c = new FluxChunkedMapChunk(filling, n, tuner.adaptive ? System.nanoTime() - fillStarted : 0L);
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
  void dispatch(FluxChunkedMapChunk c) {
    synchronized (dispatchLock) {
      if (mappingNow >= parallel) {
        waiting.offer(c);
        return;
      }
      mappingNow++;
    }
    submit(c);
  }

  void submit(FluxChunkedMapChunk c) {
    try {
      scheduler.schedule(() -> {
        waits.run(() -> map(c, false));
        FluxChunkedMapChunk next;
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
  void map(FluxChunkedMapChunk c, boolean inline) {
    synchronized (c) {
      if (c.state != FluxChunkedMapChunk.PENDING) {
        return;
      }
      c.state = FluxChunkedMapChunk.MAPPING;
    }
    long start = tuner.adaptive || meter != null ? System.nanoTime() : 0L;
    Object[] in = c.inputs;
    Object[] out = in; // results replace inputs in place: no second array per chunk
    int i = 0;
    int k = 0; // results so far: an element skipped under onErrorContinue leaves none
    Throwable failure = null;
    for (; i < c.size; i++) {
      Object r;
      try {
        r = fn.apply((T) in[i]);
        if (r == null) {
          throw new NullPointerException("The mapper returned a null value."); // as Flux.map says it
        }
      } catch (RuntimeException | Error e) {
        Throwable stop = e instanceof RuntimeException ? Operators.onNextError(in[i], e, ctx) : e;
        in[i] = null; // element i went to fn
        if (stop == null) {
          continue; // onErrorContinue downstream dropped it
        }
        failure = Fatal.signalable(stop, "map"); // a JVM error too: Reactor would rethrow it on this worker
        for (int j = i + 1; j < c.size; j++) {
          Operators.onDiscard(in[j], ctx);
          in[j] = null;
        }
        break;
      }
      out[k++] = r;
    }
    for (int j = k; j < i; j++) {
      out[j] = null;
    }
    i = k;
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
      discardNow = c.state == FluxChunkedMapChunk.DISCARDED; // stopped while mapping: the stopper left them to us
      if (!discardNow) {
        c.results = out;
        c.resultCount = i;
        c.error = failure;
        c.state = FluxChunkedMapChunk.MAPPED;
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
    waits.cancel(); // a function waiting for pooled memory on a worker stops waiting (no interrupt)
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
  void discard(FluxChunkedMapChunk c) {
    Object[] drop = null;
    int from = 0;
    int to = 0;
    synchronized (c) {
      if (c.state == FluxChunkedMapChunk.PENDING) {
        drop = c.inputs;
        to = c.size;
      } else if (c.state == FluxChunkedMapChunk.MAPPED) {
        drop = c.results;
        from = c.next;
        to = c.resultCount;
        c.next = to;
      }
      c.state = FluxChunkedMapChunk.DISCARDED;
    }
    if (drop != null) {
      for (int j = from; j < to; j++) {
        Operators.onDiscard(drop[j], ctx);
        drop[j] = null;
      }
    }
  }

  void discardChunks() {
    FluxChunkedMapChunk c;
    while ((c = chunks.poll()) != null) {
      discard(c);
    }
    current = null;
    synchronized (dispatchLock) {
      waiting.clear(); // their inputs went with the chunks above
    }
  }

  /** The next chunk to emit from: the oldest (deterministic) or any mapped one; null if none is ready. */
  FluxChunkedMapChunk readyChunk() {
    if (deterministic) {
      FluxChunkedMapChunk head = chunks.peek();
      return head != null && head.state == FluxChunkedMapChunk.MAPPED ? head : null;
    }
    if (current != null) {
      return current;
    }
    for (Iterator<FluxChunkedMapChunk> it = chunks.iterator(); it.hasNext(); ) {
      FluxChunkedMapChunk c = it.next();
      if (c.state == FluxChunkedMapChunk.MAPPED) {
        current = c;
        return c;
      }
    }
    return null;
  }

  /** Done with {@code c}: out of the queue. */
  void retire(FluxChunkedMapChunk c) {
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
          FluxChunkedMapChunk c = readyChunk();
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
