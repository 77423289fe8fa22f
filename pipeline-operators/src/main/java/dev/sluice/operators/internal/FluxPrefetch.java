package dev.sluice.operators.internal;

import dev.sluice.core.internal.TrackedScheduler;
import dev.sluice.core.internal.metrics.StageMeter;
import java.util.Queue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.concurrent.atomic.AtomicLongFieldUpdater;
import java.util.concurrent.atomic.AtomicReferenceFieldUpdater;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Scannable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Operators;
import reactor.core.scheduler.Scheduler;
import reactor.util.concurrent.Queues;
import reactor.util.context.Context;

/**
 * tf.data's {@code prefetch} as one operator: {@code subscribeOn(producer)} and
 * {@code publishOn(consumer, bufferSize)} fused, with one difference that matters for throughput.
 *
 * <p>The upstream is subscribed to, and every request to it runs, on a worker of the producer
 * scheduler; requests made while one is pending are coalesced into it. Elements go through a
 * bounded single-producer queue to a drain loop on a worker of the consumer scheduler, as in
 * {@code publishOn}. When that loop finds the queue empty while the downstream still has demand, it
 * waits up to {@code spinNanos} for the next element before it gives the worker back: a consumer
 * that keeps up with its producer then receives a whole epoch in one drain, and the producer never
 * pays for waking it (a task submission and a futex wake per element). A
 * consumer slower than its producer never spins (the queue is never empty); a producer much slower
 * than the spin costs at most {@code spinNanos} of an idle core per element.
 *
 * <p><b>Reactive Streams semantics.</b> At most {@code bufferSize} elements are requested ahead of
 * the downstream; replenished {@code bufferSize - bufferSize/4} at a time. Errors are delivered
 * after the elements queued before them; completion after the queue is drained; a downstream
 * cancel cancels the upstream.
 *
 * <p><b>Discard support.</b> Elements queued at cancel, and elements arriving after it, go to
 * {@link Operators#onDiscard}. Whoever enters the drain after a cancel clears the queue, so an
 * onNext racing with cancel never leaks its element. (Reactor's own {@code publishOn} can leave its
 * queue undiscarded when a cancel drops a drain task that was scheduled but had not started,
 * reactor/reactor-core#4396.)
 *
 * @param <T> the element type
 */
public final class FluxPrefetch<T> extends Flux<T> implements Scannable {
  private final Publisher<? extends T> source;
  private final int bufferSize;
  private final Scheduler producer;
  private final Scheduler consumer;
  private final long spinNanos;

  /**
   * @param bufferSize elements produced ahead of demand, &gt; 0
   * @param spinNanos how long an idle consumer waits for the next element before it yields its
   *     worker, &gt;= 0 (0: never)
   */
  public FluxPrefetch(Publisher<? extends T> source, int bufferSize, Scheduler producer, Scheduler consumer,
      long spinNanos) {
    if (bufferSize <= 0) {
      throw new IllegalArgumentException("bufferSize > 0 required but it was " + bufferSize);
    }
    if (spinNanos < 0) {
      throw new IllegalArgumentException("spinNanos >= 0 required but it was " + spinNanos);
    }
    this.source = source;
    this.bufferSize = bufferSize;
    this.producer = TrackedScheduler.of(producer);
    this.consumer = TrackedScheduler.of(consumer);
    this.spinNanos = spinNanos;
  }

  @Override
  public void subscribe(CoreSubscriber<? super T> actual) {
    Scheduler.Worker producerWorker = null;
    Scheduler.Worker consumerWorker;
    try {
      producerWorker = producer.createWorker();
      consumerWorker = consumer.createWorker();
    } catch (RuntimeException e) {
      if (producerWorker != null) {
        producerWorker.dispose();
      }
      Operators.error(actual, Operators.onOperatorError(e, actual.currentContext()));
      return;
    }
    PrefetchSubscriber<T> parent = new PrefetchSubscriber<>(actual, bufferSize, producerWorker, consumerWorker,
        spinNanos);
    actual.onSubscribe(parent);
    try {
      producerWorker.schedule(() -> source.subscribe(parent));
    } catch (RejectedExecutionException e) {
      if (!parent.cancelled) {
        parent.onError(Operators.onRejectedExecution(e, actual.currentContext()));
      }
    }
  }

  @Override
  public Object scanUnsafe(Attr key) {
    if (key == Attr.PREFETCH) {
      return bufferSize;
    }
    if (key == Attr.PARENT) {
      return source;
    }
    if (key == Attr.RUN_ON) {
      return consumer;
    }
    if (key == Attr.RUN_STYLE) {
      return Attr.RunStyle.ASYNC;
    }
    return null;
  }

  static final class PrefetchSubscriber<T> implements CoreSubscriber<T>, Subscription, Runnable, Scannable {
    final CoreSubscriber<? super T> actual;
    final Context ctx;
    final int bufferSize;
    final int limit;
    final Scheduler.Worker producerWorker;
    final Scheduler.Worker consumerWorker;
    final long spinNanos;
    final Queue<T> queue;

    volatile Subscription upstream;
    @SuppressWarnings("rawtypes")
    static final AtomicReferenceFieldUpdater<PrefetchSubscriber, Subscription> UPSTREAM =
        AtomicReferenceFieldUpdater.newUpdater(PrefetchSubscriber.class, Subscription.class, "upstream");

    volatile boolean done;
    Throwable error;
    volatile boolean cancelled;

    /** Demand of the downstream. */
    volatile long requested;
    @SuppressWarnings("rawtypes")
    static final AtomicLongFieldUpdater<PrefetchSubscriber> REQUESTED =
        AtomicLongFieldUpdater.newUpdater(PrefetchSubscriber.class, "requested");

    /** Replenishment for the upstream not yet passed on by a producer task; 0 when none is pending. */
    volatile long replenish;
    @SuppressWarnings("rawtypes")
    static final AtomicLongFieldUpdater<PrefetchSubscriber> REPLENISH =
        AtomicLongFieldUpdater.newUpdater(PrefetchSubscriber.class, "replenish");

    volatile int wip;
    @SuppressWarnings("rawtypes")
    static final AtomicIntegerFieldUpdater<PrefetchSubscriber> WIP =
        AtomicIntegerFieldUpdater.newUpdater(PrefetchSubscriber.class, "wip");

    /** Emitted since the last replenishment; drain-loop only. */
    long produced;

    PrefetchSubscriber(CoreSubscriber<? super T> actual, int bufferSize, Scheduler.Worker producerWorker,
        Scheduler.Worker consumerWorker, long spinNanos) {
      this.actual = actual;
      this.ctx = actual.currentContext();
      this.bufferSize = bufferSize;
      this.limit = bufferSize - (bufferSize >> 2);
      this.producerWorker = producerWorker;
      this.consumerWorker = consumerWorker;
      this.spinNanos = spinNanos;
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
        s.request(bufferSize); // on the producer worker: a synchronous source starts producing here
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
      if (!queue.offer(t)) {
        Operators.onDiscard(t, ctx);
        error = Operators.onOperatorError(upstream,
            new IllegalStateException("prefetch: upstream emitted more than requested"), t, ctx);
        done = true;
        Operators.terminate(UPSTREAM, this);
      }
      trySchedule();
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

    @Override
    public void cancel() {
      if (cancelled) {
        return;
      }
      cancelled = true;
      Operators.terminate(UPSTREAM, this);
      producerWorker.dispose();
      if (WIP.getAndIncrement(this) == 0) {
        clearAndDispose();
      }
    }

    /** Runs the drain on the consumer worker unless it runs already; after a cancel, clears inline. */
    void trySchedule() {
      if (WIP.getAndIncrement(this) != 0) {
        return;
      }
      if (cancelled) {
        clearAndDispose();
        return;
      }
      try {
        consumerWorker.schedule(this);
      } catch (RejectedExecutionException e) {
        cancelled = true;
        Operators.terminate(UPSTREAM, this);
        producerWorker.dispose();
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

    /** Passes {@code n} more to the upstream from the producer worker, coalescing pending requests. */
    void requestUpstream(long n) {
      if (REPLENISH.getAndAdd(this, n) != 0) {
        return; // a producer task is pending and will pass this on too
      }
      try {
        producerWorker.schedule(() -> {
          long r = REPLENISH.getAndSet(this, 0);
          Subscription s = upstream;
          if (s != null && r > 0) {
            s.request(r);
          }
        });
      } catch (RejectedExecutionException e) {
        if (!cancelled) {
          onError(Operators.onRejectedExecution(e, ctx));
        }
      }
    }

    /**
     * Waits up to {@code spinNanos} for the queue to fill or the upstream to end; true when it did
     * (or the pass was cancelled), false when the time ran out.
     */
    boolean awaitBriefly() {
      if (spinNanos == 0) {
        return false;
      }
      long start = System.nanoTime();
      for (int i = 1; queue.isEmpty(); i++) {
        if ((i & 63) == 0) {
          if (done || cancelled) {
            return true;
          }
          if (System.nanoTime() - start > spinNanos) {
            return false;
          }
        }
        Thread.onSpinWait();
      }
      return true;
    }

    /** The drain loop, on the consumer worker. */
    @Override
    public void run() {
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
            if (!d && awaitBriefly()) {
              continue;
            }
            break;
          }
          a.onNext(v);
          e++;
          if (e == limit) {
            if (r != Long.MAX_VALUE) {
              r = REQUESTED.addAndGet(this, -e);
            }
            requestUpstream(e);
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
     * Disposes the producer worker from a task on it, so after the task it runs now. The upstream has
     * terminated, but its thread may still be running the source's cleanup (doFinally, Flux.using's
     * resource close): disposing the worker from here would interrupt that thread, as only a cancel
     * may ({@code subscribeOn} disposes its worker on the thread that signalled the end).
     */
    void disposeProducerWhenIdle() {
      try {
        producerWorker.schedule(producerWorker::dispose);
      } catch (RejectedExecutionException e) {
        // disposed already, by a racing cancel
      }
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
        return bufferSize;
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
}
