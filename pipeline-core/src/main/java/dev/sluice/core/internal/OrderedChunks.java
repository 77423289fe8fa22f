package dev.sluice.core.internal;

import dev.sluice.core.internal.metrics.StageMeter;
import dev.sluice.core.spi.WaitCancellation;
import java.util.ArrayDeque;
import java.util.Iterator;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.concurrent.atomic.AtomicLongFieldUpdater;
import java.util.concurrent.atomic.AtomicReferenceFieldUpdater;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Operators;
import reactor.core.scheduler.Scheduler;
import reactor.util.context.Context;

/**
 * The chunk engine of {@link OrderedParallel}: a front-end hands it complete chunks of inputs, it maps
 * each on a worker of {@code scheduler} (at most {@code parallelism} at once, the others wait in
 * input order) or on the calling thread, and emits the results in input order ({@code ordered}) or in
 * the order the chunks finish. A chunk's task replaces its inputs by its results in place, so an
 * element costs the front-end one array store on the way in and the engine one array load on the way
 * out.
 *
 * <p>The front-end (a subclass) owns the upstream: it fills chunks, requests inputs in
 * {@link #replenish} and ends the input with {@link #inputDone}. The engine owns everything after
 * the hand-over.
 *
 * <p><b>Reactive Streams semantics.</b> Results are emitted on demand, on the thread that requested
 * them or that finished a chunk. An input error arrives after every result before it; a failure of
 * a task after the results its chunk produced before the failure (then the engine stops). Cancel
 * stops the engine. A stop (cancel or a task's failure) calls {@link #onStop} once, which cancels
 * the upstream and discards what the front-end holds; a chunk being mapped on a worker is not
 * interrupted, and a task waiting there for pooled memory stops waiting (the workers' chunks run
 * within a {@link WaitCancellation} that the stop triggers, never the completion).
 *
 * <p><b>Discard support.</b> Every input handed over is emitted as a result or discarded exactly once
 * through {@link Operators#onDiscard}: the inputs of chunks not yet mapped, the results not yet
 * emitted, and the results of a chunk whose worker finishes after the stop. A task discards the
 * inputs it did not map when it fails.
 *
 * <p><b>Metrics.</b> When the subscriber context holds a {@link StageMeter} that records work, the
 * chunks' mapping times count as the stage's worker time.
 *
 * @param <R> the result type
 */
public abstract class OrderedChunks<R> implements Subscription {
  /** One chunk: its inputs, then (in the same array) its results. State changes under the chunk's lock. */
  public static final class Chunk {
    static final int PENDING = 0;
    static final int MAPPING = 1;
    static final int MAPPED = 2;
    static final int DISCARDED = 3;

    final Object[] items;
    final int size;
    final long fillNanos;
    /** Guarded by {@code this}; volatile so the drain can poll it without the lock. */
    volatile int state = PENDING;
    int resultCount;
    Throwable error;
    /** Next result to emit; drain only. */
    int next;

    /**
     * A chunk of {@code size} inputs in {@code items[0 .. size)}, filled in {@code fillNanos}.
     *
     * @param items the inputs; from the hand-over on, the engine's
     * @param size inputs, &gt; 0
     * @param fillNanos how long the inputs took to arrive (0 when not measured)
     */
    public Chunk(Object[] items, int size, long fillNanos) {
      this.items = items;
      this.size = size;
      this.fillNanos = fillNanos;
    }

    /** The inputs, replaced in place by the results. */
    public Object[] items() {
      return items;
    }

    /** The number of inputs. */
    public int size() {
      return size;
    }

    /** How long the inputs took to arrive. */
    public long fillNanos() {
      return fillNanos;
    }

    /** The task failed after its results so far: the error is emitted after them. */
    public void fail(Throwable e) {
      error = e;
    }
  }

  final CoreSubscriber<? super R> actual;
  final Context ctx;
  final int parallelism;
  final boolean ordered;
  final Scheduler scheduler;
  /** The workers' chunks are mapped within it; a stop cancels it. */
  final WaitCancellation waits = new WaitCancellation();
  /** The stage's meter when it records the time chunks take, else null. */
  final StageMeter meter;
  final boolean timed;

  /** Every chunk not yet fully emitted or discarded, in input order. */
  final ConcurrentLinkedQueue<Chunk> chunks = new ConcurrentLinkedQueue<>();
  /** Chunks waiting for a worker; guarded by {@code dispatchLock}. */
  final ArrayDeque<Chunk> waiting = new ArrayDeque<>();
  int mappingNow;
  final Object dispatchLock = new Object();

  /** Finish-order mode: the chunk being emitted (drain only). */
  Chunk current;

  /** The input ended and its last chunk was handed over. */
  volatile boolean done;
  Throwable inputError;
  /** Set by cancel or by a failure of a task: no more chunks. */
  protected volatile boolean stopped;
  volatile boolean cancelled;
  boolean terminated; // drain only

  volatile long requested;
  @SuppressWarnings("rawtypes")
  static final AtomicLongFieldUpdater<OrderedChunks> REQUESTED =
      AtomicLongFieldUpdater.newUpdater(OrderedChunks.class, "requested");
  volatile int wip;
  @SuppressWarnings("rawtypes")
  static final AtomicIntegerFieldUpdater<OrderedChunks> WIP =
      AtomicIntegerFieldUpdater.newUpdater(OrderedChunks.class, "wip");
  volatile Throwable failure;
  @SuppressWarnings("rawtypes")
  static final AtomicReferenceFieldUpdater<OrderedChunks, Throwable> FAILURE =
      AtomicReferenceFieldUpdater.newUpdater(OrderedChunks.class, Throwable.class, "failure");

  /** Inputs whose results were emitted or discarded by the drain; drain only. */
  long released;

  /**
   * The engine of one subscription.
   *
   * @param actual the subscriber of the results
   * @param parallelism chunks mapped on workers at once, &gt; 0
   * @param ordered emit in input order, else in the order the chunks finish
   * @param scheduler where chunks are mapped
   * @param timed whether the front-end wants every chunk's mapping time ({@link #mapped})
   */
  protected OrderedChunks(CoreSubscriber<? super R> actual, int parallelism, boolean ordered, Scheduler scheduler,
      boolean timed) {
    if (parallelism <= 0) {
      throw new IllegalArgumentException("parallelism > 0 required but it was " + parallelism);
    }
    this.actual = actual;
    this.ctx = actual.currentContext();
    this.parallelism = parallelism;
    this.ordered = ordered;
    this.scheduler = TrackedScheduler.of(scheduler);
    StageMeter m = StageMeter.from(ctx);
    this.meter = m != null && m.recordsWork() ? m : null;
    if (m != null) {
      m.workers(parallelism);
    }
    this.timed = timed || meter != null;
  }

  /**
   * Maps {@code c}'s inputs in place: result {@code j} goes to {@code c.items()[j]}; returns the
   * number of results and nulls the slots after them. On a failure it discards the inputs it did
   * not map, calls {@link Chunk#fail} and returns the results before the failure. Runs on a worker
   * or on the thread that handed the chunk over.
   */
  protected abstract int map(Chunk c);

  /** The engine stopped (cancel or a task's failure): cancel the upstream and discard what is held. */
  protected abstract void onStop();

  /**
   * Called by the drain while the input is open and the engine is running: request more inputs.
   *
   * @param released inputs whose results were emitted or discarded so far
   */
  protected abstract void replenish(long released);

  /** Called after every chunk mapped when the engine is timed. */
  protected void mapped(Chunk c, long nanos, boolean inline) {}

  /** The subscriber of the results. */
  public final CoreSubscriber<? super R> actualSubscriber() {
    return actual;
  }

  /** The subscriber's context. */
  public final Context context() {
    return ctx;
  }

  /** Chunks mapped on workers at once. */
  public final int parallelism() {
    return parallelism;
  }

  /** Whether the engine stopped (cancel or a task's failure). */
  public final boolean isStopped() {
    return stopped;
  }

  /**
   * Hands a complete chunk over: it is mapped now on this thread ({@code inline}) or on a worker.
   * Nothing is handed over after a stop (the front-end checks {@link #isStopped} under its lock).
   */
  public final void accept(Chunk c, boolean inline) {
    chunks.offer(c);
    if (inline) {
      run(c, true);
      drain();
    } else {
      dispatch(c);
    }
  }

  /** The input ended ({@code error} null) or failed, after its last chunk was handed over. */
  public final void inputDone(Throwable error) {
    inputError = error;
    done = true;
    drain();
  }

  /** Whether {@link #inputDone} was called. */
  public final boolean isInputDone() {
    return done;
  }

  void dispatch(Chunk c) {
    synchronized (dispatchLock) {
      if (mappingNow >= parallelism) {
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
        try {
          waits.run(() -> run(c, false));
        } catch (Throwable e) {
          fail(Fatal.signalable(e, "map"));
        }
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
  void run(Chunk c, boolean inline) {
    synchronized (c) {
      if (c.state != Chunk.PENDING) {
        return;
      }
      c.state = Chunk.MAPPING;
    }
    long start = timed ? System.nanoTime() : 0L;
    int k = map(c);
    if (timed) {
      long took = System.nanoTime() - start;
      mapped(c, took, inline);
      if (meter != null) {
        meter.workerTime(took);
      }
    }
    boolean discardNow;
    synchronized (c) {
      discardNow = c.state == Chunk.DISCARDED; // stopped while mapping: the stopper left them to us
      if (!discardNow) {
        c.resultCount = k;
        c.state = Chunk.MAPPED;
      }
    }
    if (discardNow) {
      Object[] out = c.items;
      for (int j = 0; j < k; j++) {
        Operators.onDiscard(out[j], ctx);
        out[j] = null;
      }
    }
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

  /** Whether the subscriber cancelled. */
  public final boolean isCancelled() {
    return cancelled;
  }

  void stop() {
    stopped = true; // volatile write first: a front-end's Dekker handshake pairs with it
    waits.cancel(); // a task waiting for pooled memory on a worker stops waiting (no interrupt)
    onStop();
  }

  /** A failure of a task or of the scheduler: stop, and let the drain report it. */
  final void fail(Throwable e) {
    if (FAILURE.compareAndSet(this, null, e)) {
      stop();
    } else {
      Operators.onErrorDropped(e, ctx);
    }
    drain();
  }

  /** Discards what a chunk still holds: inputs never mapped, or results not emitted. */
  void discard(Chunk c) {
    int from = 0;
    int to = 0;
    synchronized (c) {
      if (c.state == Chunk.PENDING) {
        to = c.size;
      } else if (c.state == Chunk.MAPPED) {
        from = c.next;
        to = c.resultCount;
        c.next = to;
      }
      c.state = Chunk.DISCARDED;
    }
    Object[] drop = c.items;
    for (int j = from; j < to; j++) {
      Operators.onDiscard(drop[j], ctx);
      drop[j] = null;
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

  /** The next chunk to emit from: the oldest (ordered) or any mapped one; null if none is ready. */
  Chunk readyChunk() {
    if (ordered) {
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

  void retire(Chunk c) {
    if (ordered) {
      chunks.poll();
    } else {
      chunks.remove(c);
      current = null;
    }
  }

  /** Emits what is ready and demanded, ends the flux when it is time (WIP drain; any thread). */
  public final void drain() {
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
            R v = (R) c.items[c.next];
            c.items[c.next++] = null;
            a.onNext(v);
            e++;
            if (cancelled) {
              break;
            }
            continue;
          }
          if (c.error != null) {
            Throwable f = c.error;
            c.error = null;
            fail(f); // stops; this drain reports it below
            break;
          }
          retire(c); // even without demand, so that completion is not held back
          released += c.size;
        }
        if (e != 0L && r != Long.MAX_VALUE) {
          REQUESTED.addAndGet(this, -e);
        }
        if (!cancelled) {
          Throwable fe = failure;
          if (fe != null) {
            terminated = true;
            discardChunks();
            a.onError(fe);
          } else if (done && chunks.isEmpty()) {
            terminated = true;
            Throwable ie = inputError;
            if (ie != null) {
              a.onError(ie);
            } else {
              a.onComplete();
            }
          } else if (!done && !stopped) {
            replenish(released);
          }
        }
      }
      missed = WIP.addAndGet(this, -missed);
      if (missed == 0) {
        break;
      }
    }
  }

  /** Whether the input ended and every chunk was emitted or discarded. */
  public final boolean isTerminated() {
    return done && chunks.isEmpty();
  }

  /** The demand of the subscriber not yet served. */
  public final long requested() {
    return requested;
  }
}
