package dev.sluice.operators.internal;

import dev.sluice.core.internal.Fatal;
import dev.sluice.core.internal.TrackedScheduler;
import dev.sluice.core.internal.metrics.StageMeter;
import dev.sluice.core.spi.WaitCancellation;
import java.util.Queue;
import java.util.function.BooleanSupplier;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.concurrent.atomic.AtomicLongFieldUpdater;
import java.util.concurrent.atomic.AtomicReferenceFieldUpdater;
import java.util.concurrent.locks.LockSupport;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Scannable;
import reactor.core.publisher.Operators;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.util.concurrent.Queues;
import reactor.util.context.Context;

/**
 * The per-subscription state machine of {@link FluxPrefetch}: the bounded queue between the
 * producer worker and the consumer's drain loop, the coalesced requests to the upstream, the
 * consumer's wait (spin, park, give the worker back) and the measurement that decides whether a
 * cheap consumer is served on the producer's worker. The operator's javadoc states the contract.
 *
 * @param <T> the element type
 */
final class FluxPrefetchSubscriber<T> implements CoreSubscriber<T>, Subscription, Runnable, Scannable {
  final CoreSubscriber<? super T> actual;
  final Context ctx;
  final int bufferSize;
  /** Null: {@code bufferSize} ahead; else autotuned ({@link FluxPrefetch#autotuned}). */
  final BooleanSupplier mayGrow;
  /** Elements the upstream is asked for when subscribed. */
  final int initial;
  /** Elements asked ahead of the consumer, at most {@code bufferSize}; drain-loop only after the start. */
  int target;
  /** Emitted elements that trigger a replenishment: {@code target - target/4}; drain-loop only after the start. */
  int limit;
  final Scheduler.Worker producerWorker;
  final Scheduler.Worker consumerWorker;
  final FluxPrefetchSpin spin;
  final long parkNanos;
  final Queue<T> queue;
  /** Current while the producer's tasks run: a cancel ends their waits for pooled memory. */
  final WaitCancellation producerCancel = new WaitCancellation();
  /** The consumer's thread while it parks in the drain for the next element, else null. */
  volatile Thread parked;
  /** Whether the consumer may be served on the producer's worker (both on one scheduler). */
  final boolean mayInline;
  /** The producer worker's thread, once the upstream is subscribed there. */
  volatile Thread producerThread;
  /** What one element costs, ns, -1 until measured: the consumer's onNext, the producer's work. */
  volatile long consumerNanos = -1;
  volatile long producerNanos = -1;
  /** Elements emitted by the drain (drain only), received from the upstream (onNext only). */
  long emittedCount;
  long receivedCount;
  /** When the producer's next element started, when it is being timed, else 0 (onNext only). */
  long producerMark;

  volatile Subscription upstream;
  @SuppressWarnings("rawtypes")
  static final AtomicReferenceFieldUpdater<FluxPrefetchSubscriber, Subscription> UPSTREAM =
      AtomicReferenceFieldUpdater.newUpdater(FluxPrefetchSubscriber.class, Subscription.class, "upstream");

  volatile boolean done;
  Throwable error;
  volatile boolean cancelled;

  /** Demand of the downstream. */
  volatile long requested;
  @SuppressWarnings("rawtypes")
  static final AtomicLongFieldUpdater<FluxPrefetchSubscriber> REQUESTED =
      AtomicLongFieldUpdater.newUpdater(FluxPrefetchSubscriber.class, "requested");

  /** Replenishment for the upstream not yet passed on by a producer task; 0 when none is pending. */
  volatile long replenish;
  @SuppressWarnings("rawtypes")
  static final AtomicLongFieldUpdater<FluxPrefetchSubscriber> REPLENISH =
      AtomicLongFieldUpdater.newUpdater(FluxPrefetchSubscriber.class, "replenish");

  volatile int wip;
  @SuppressWarnings("rawtypes")
  static final AtomicIntegerFieldUpdater<FluxPrefetchSubscriber> WIP =
      AtomicIntegerFieldUpdater.newUpdater(FluxPrefetchSubscriber.class, "wip");

  /** Emitted since the last replenishment; drain-loop only. */
  long produced;

  FluxPrefetchSubscriber(CoreSubscriber<? super T> actual, int bufferSize, Scheduler.Worker producerWorker,
      Scheduler.Worker consumerWorker, FluxPrefetchSpin spin, long parkNanos, boolean mayInline,
      BooleanSupplier mayGrow) {
    this.actual = actual;
    this.ctx = actual.currentContext();
    this.bufferSize = bufferSize;
    this.mayGrow = mayGrow;
    this.initial = mayGrow == null ? bufferSize : Math.min(bufferSize, FluxPrefetch.AUTOTUNE_START);
    this.target = initial;
    this.limit = target - (target >> 2);
    this.producerWorker = producerWorker;
    this.consumerWorker = consumerWorker;
    this.spin = spin;
    this.parkNanos = parkNanos;
    this.mayInline = mayInline;
    this.queue = Queues.<T>get(bufferSize).get();
    StageMeter meter = StageMeter.from(ctx);
    if (meter != null) {
      meter.buffer(queue::size, bufferSize);
    }
  }

  @Override
  public Context currentContext() {
    return ctx;
  }

  @Override
  public void onSubscribe(Subscription s) {
    if (Operators.setOnce(UPSTREAM, this, s)) {
      s.request(initial); // on the producer worker: a synchronous source starts producing here
    }
  }

  @Override
  public void onNext(T t) {
    if (done) {
      Operators.onNextDropped(t, ctx);
      return;
    }
    if (cancelled) {
      Operators.onDiscard(t, ctx);
      return;
    }
    long mark = producerMark;
    if (mark != 0) {
      producerNanos = average(producerNanos, System.nanoTime() - mark);
      producerMark = 0;
    }
    if (!queue.offer(t)) {
      Operators.onDiscard(t, ctx);
      error = Operators.onOperatorError(upstream,
          new IllegalStateException("prefetch: upstream emitted more than requested"), t, ctx);
      done = true;
      Operators.terminate(UPSTREAM, this);
    }
    trySchedule();
    if (mayInline && ++receivedCount % FluxPrefetch.SAMPLE_EVERY == 0) {
      producerMark = System.nanoTime(); // the next element's production starts
    }
  }

  /**
   * A moving average of per-element costs: the first sample, then a quarter of each new one, a
   * sample counted as at most {@link FluxPrefetch#SAMPLE_CAP} times the average (plus a microsecond). A thread
   * descheduled while it is timed, or a producer that waited for demand, yields one sample
   * hundreds of times the cost; capped, such samples move the average by three quarters at most,
   * so only a lasting change of cost (several samples in a row) moves where the consumer is served.
   */
  static long average(long old, long sample) {
    return old < 0 ? sample : (3 * old + Math.min(sample, FluxPrefetch.SAMPLE_CAP * old + 1_000)) / 4;
  }

  /**
   * Whether the consumer is served on the producer's worker: allowed, and the consumer measured to
   * cost at most {@code 1/INLINE_RATIO} of the producer.
   */
  boolean preferInline() {
    if (!mayInline) {
      return false;
    }
    long c = consumerNanos;
    long p = producerNanos;
    return c >= 0 && p >= 0 && c * FluxPrefetch.INLINE_RATIO <= p;
  }

  @Override
  public void onError(Throwable t) {
    if (done) {
      Operators.onErrorDropped(t, ctx);
      return;
    }
    error = t;
    done = true;
    trySchedule();
  }

  /**
   * The upstream threw out of {@code subscribe} or {@code request} on the producer worker (a JVM
   * error Reactor rethrows rather than signals): it is cancelled, and the error is signalled
   * after the elements queued before it.
   */
  void upstreamThrew(Throwable e) {
    Operators.terminate(UPSTREAM, this);
    onError(Fatal.signalable(e, "prefetch producer"));
  }

  @Override
  public void onComplete() {
    if (done) {
      return;
    }
    done = true;
    trySchedule();
  }

  @Override
  public void request(long n) {
    if (Operators.validate(n)) {
      Operators.addCap(REQUESTED, this, n);
      trySchedule();
    }
  }

  /**
   * Cancels: the upstream is cancelled, a wait of the producer for pooled memory ends, and the
   * producer worker is disposed once the task it runs (a read under way, say) returns. The producer's
   * thread is never interrupted: an interrupt during a {@code FileChannel} read closes the channel,
   * which a source may keep open for its later passes.
   */
  @Override
  public void cancel() {
    if (cancelled) {
      return;
    }
    cancelled = true;
    stopProducer();
    if (WIP.getAndIncrement(this) == 0) {
      clearAndDispose();
    } else {
      wakeConsumer();
    }
  }

  /**
   * Stops the producer without interrupting it: cancels the upstream, ends a wait of the producer's
   * task for pooled memory ({@link WaitCancellation}) and disposes the producer worker after the
   * task it runs now.
   */
  void stopProducer() {
    Operators.terminate(UPSTREAM, this);
    producerCancel.cancel();
    disposeProducerWhenIdle();
  }

  /** Unparks the consumer when it parks in the drain (after a full fence: see {@link #awaitNext}). */
  void wakeConsumer() {
    Thread t = parked;
    if (t != null) {
      LockSupport.unpark(t);
    }
  }

  /**
   * Runs the drain on the consumer worker unless it runs already (then wakes it if it parks); after
   * a cancel, clears inline.
   */
  void trySchedule() {
    if (WIP.getAndIncrement(this) != 0) {
      wakeConsumer(); // the increment is the fence between the caller's signal and this read
      return;
    }
    if (cancelled) {
      clearAndDispose();
      return;
    }
    if (preferInline() && Thread.currentThread() == producerThread) {
      drain(true);
      return;
    }
    try {
      consumerWorker.schedule(this);
    } catch (RejectedExecutionException e) {
      if (cancelled) {
        // the pass ended (cancelled, or terminated by the drain) between the check above and the
        // schedule, and the worker was disposed with it: nobody is left to tell
        clearAndDispose();
        return;
      }
      cancelled = true;
      stopProducer();
      clearAndDispose();
      actual.onError(Operators.onRejectedExecution(e, ctx));
    }
  }

  /** Discards the queue for as long as others enter the drain; the caller holds it. */
  void clearAndDispose() {
    int missed = 1;
    for (;;) {
      Operators.onDiscardQueueWithClear(queue, ctx, null);
      missed = WIP.addAndGet(this, -missed);
      if (missed == 0) {
        break;
      }
    }
    consumerWorker.dispose();
  }

  /**
   * Passes {@code n} more to the upstream from the producer worker, coalescing pending requests;
   * directly when the drain runs there ({@code inline}).
   */
  void requestUpstream(long n, boolean inline) {
    if (inline) {
      Subscription s = upstream;
      if (s != null) {
        s.request(n); // on the producer worker, within the upstream's onNext: it serializes this
      }
      return;
    }
    if (REPLENISH.getAndAdd(this, n) != 0) {
      return; // a producer task is pending and will pass this on too
    }
    try {
      producerWorker.schedule(() -> {
        long r = REPLENISH.getAndSet(this, 0);
        Subscription s = upstream;
        if (s != null && r > 0) {
          producerCancel.run(() -> {
            try {
              s.request(r);
            } catch (Throwable e) {
              upstreamThrew(e);
            }
          });
        }
      });
    } catch (RejectedExecutionException e) {
      if (!cancelled) {
        onError(Operators.onRejectedExecution(e, ctx));
      }
    }
  }

  /**
   * Waits for the queue to fill or the upstream to end: spins (when {@link FluxPrefetchSpin} allows), then
   * parks up to {@code parkNanos}; true when it came (or the pass was cancelled), false when the
   * time ran out and the worker should be given back.
   *
   * <p>No wake-up is lost: this thread publishes {@code parked} (a volatile write) before it reads
   * the queue again, and a signalling thread writes the queue or the flags before the atomic
   * increment in {@link #trySchedule} that precedes its read of {@code parked}.
   */
  boolean awaitNext(boolean inline) {
    if (inline || preferInline()) {
      return false; // the producer serves the consumer: never hold its thread, nor the worker
    }
    long budget = spin.budget();
    if (budget > 0) {
      boolean came = spinFor(budget);
      spin.record(came);
      if (came) {
        return true;
      }
    }
    if (parkNanos == 0 || Schedulers.isInNonBlockingThread()) {
      return false;
    }
    parked = Thread.currentThread();
    try {
      long deadline = System.nanoTime() + parkNanos;
      while (queue.isEmpty() && !done && !cancelled) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          return false;
        }
        LockSupport.parkNanos(this, left);
      }
      return true;
    } finally {
      parked = null;
    }
  }

  /** Spins up to {@code nanos} for the queue to fill or the upstream to end; true when it did. */
  boolean spinFor(long nanos) {
    long start = System.nanoTime();
    for (int i = 1; queue.isEmpty(); i++) {
      if ((i & 63) == 0) {
        if (done || cancelled) {
          return true;
        }
        if (System.nanoTime() - start > nanos) {
          return false;
        }
      }
      Thread.onSpinWait();
    }
    return true;
  }

  /**
   * An autotuned prefetch whose consumer found the queue empty while it has demand: asks the
   * upstream for as many more elements ahead again (up to the buffer size) when the budget allows.
   * Drain loop only.
   */
  void grow(boolean inline) {
    if (target >= bufferSize || upstream == null || !mayGrow.getAsBoolean()) {
      return; // before the upstream is subscribed, a request would be lost
    }
    int add = Math.min(target, bufferSize - target);
    target += add;
    limit = target - (target >> 2);
    requestUpstream(add, inline);
  }

  /** The drain loop, on the consumer worker. */
  @Override
  public void run() {
    drain(false);
  }

  /** The drain loop, on the consumer worker or ({@code inline}) on the producer's. */
  void drain(boolean inline) {
    int missed = 1;
    final CoreSubscriber<? super T> a = actual;
    long e = produced;
    for (;;) {
      long r = requested;
      while (e != r) {
        boolean d = done;
        T v = queue.poll();
        boolean empty = v == null;
        if (checkTerminated(d, empty, a, v)) {
          return;
        }
        if (empty) {
          if (!d && mayGrow != null) {
            grow(inline);
          }
          if (!d && awaitNext(inline)) {
            continue;
          }
          break;
        }
        if (mayInline && ++emittedCount % FluxPrefetch.SAMPLE_EVERY == 0) {
          long start = System.nanoTime();
          a.onNext(v);
          consumerNanos = average(consumerNanos, System.nanoTime() - start);
        } else {
          a.onNext(v);
        }
        e++;
        if (e == limit) {
          if (r != Long.MAX_VALUE) {
            r = REQUESTED.addAndGet(this, -e);
          }
          requestUpstream(e, inline);
          e = 0L;
        }
      }
      if (e == r && checkTerminated(done, queue.isEmpty(), a, null)) {
        return;
      }
      int w = wip;
      if (missed == w) {
        produced = e;
        missed = WIP.addAndGet(this, -missed);
        if (missed == 0) {
          break;
        }
      } else {
        missed = w;
      }
    }
  }

  /**
   * Disposes the producer worker from a task on it, so after the task it runs now, which is not
   * interrupted: disposing the worker from another thread would interrupt a task under way, be it a
   * read of the source (after a cancel) or the source's cleanup after its terminal signal
   * (doFinally, Flux.using's resource close).
   */
  void disposeProducerWhenIdle() {
    TrackedScheduler.disposeWhenIdle(producerWorker);
  }

  /** True when the pass is over (cancelled, failed or complete); the queue is then cleared. */
  boolean checkTerminated(boolean d, boolean empty, CoreSubscriber<? super T> a, T v) {
    if (cancelled) {
      Operators.onDiscard(v, ctx);
      clearAndDispose();
      return true;
    }
    if (d && empty) {
      Throwable ex = error;
      // mark cancelled so a late onNext discards instead of queueing
      cancelled = true;
      Operators.terminate(UPSTREAM, this);
      disposeProducerWhenIdle();
      consumerWorker.dispose();
      if (ex != null) {
        a.onError(ex);
      } else {
        a.onComplete();
      }
      return true;
    }
    return false;
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
      return cancelled && !done;
    }
    if (key == Attr.TERMINATED) {
      return done && queue.isEmpty();
    }
    if (key == Attr.ERROR) {
      return error;
    }
    if (key == Attr.PREFETCH) {
      return target; // the buffer size, or where autotuning has taken it
    }
    if (key == Attr.BUFFERED) {
      return queue.size();
    }
    if (key == Attr.REQUESTED_FROM_DOWNSTREAM) {
      return requested;
    }
    if (key == Attr.RUN_ON) {
      return consumerWorker;
    }
    if (key == Attr.RUN_STYLE) {
      return Attr.RunStyle.ASYNC;
    }
    return null;
  }
}
