package dev.sluice.operators.internal;

import dev.sluice.core.Options.PrefetchSpin;
import dev.sluice.core.internal.Fatal;
import dev.sluice.core.internal.TrackedScheduler;
import dev.sluice.core.internal.metrics.StageMeter;
import java.util.Queue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.concurrent.atomic.AtomicLongFieldUpdater;
import java.util.concurrent.atomic.AtomicReferenceFieldUpdater;
import java.util.concurrent.locks.LockSupport;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Scannable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Operators;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.util.concurrent.Queues;
import reactor.util.context.Context;

/**
 * tf.data's {@code prefetch} as one operator: {@code subscribeOn(producer)} and
 * {@code publishOn(consumer, bufferSize)} fused, with one difference that matters for throughput and
 * CPU: how the consumer waits.
 *
 * <p>The upstream is subscribed to, and every request to it runs, on a worker of the producer
 * scheduler; requests made while one is pending are coalesced into it. Elements go through a
 * bounded single-producer queue to a drain loop on a worker of the consumer scheduler, as in
 * {@code publishOn}. When that loop finds the queue empty while the downstream still has demand, it
 * waits for the next element on its worker instead of giving the worker back at once:
 *
 * <ol>
 *   <li>it spins, only when spinning is allowed and has been measured to pay: with an adaptive
 *       budget of up to {@code maxSpinNanos}, the consumer spins while most recent waits ended
 *       within it, and stops spinning (trying again now and then) when they did not;
 *   <li>it parks its thread for up to {@code parkNanos} ({@link #DEFAULT_PARK_NANOS} unless given), woken
 *       by the producer's next element (one {@code unpark}, without a task submission), so a waiting
 *       consumer costs no CPU and the producer pays a wake-up only when the consumer sleeps; a
 *       consumer on a non-blocking thread ({@code Schedulers.parallel()}) never parks;
 *   <li>then it gives the worker back, and the next element schedules the drain again.
 * </ol>
 *
 * A consumer slower than its producer never waits (the queue is never empty).
 *
 * <p><b>Cheap consumers are served on the producer's worker.</b> When both schedulers are the same
 * (the default) and the consumer's work per element is measured to be at most an eighth of the
 * producer's (one element in {@value #SAMPLE_EVERY} is timed on each side), an element that finds the
 * consumer idle goes downstream right away on the producer's worker, a worker of the consumer
 * scheduler too, and the requests that replenish the queue go upstream from there without a task:
 * a consumer that only takes elements (an iterator's queue, a counter) then costs no wake-up per
 * element, whose price on a busy or virtual machine is tens of microseconds of CPU. A consumer that
 * costs more is served on its own worker, in parallel with the producer, as above.
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
  private final boolean adaptiveSpin;
  private final long parkNanos;
  /** Whether the producer and the consumer run on one scheduler (then a cheap consumer may be served inline). */
  private final boolean oneScheduler;

  /** How long an idle consumer parks unless given: {@code Options.prefetchPark()}'s default. */
  static final long DEFAULT_PARK_NANOS = 1_000_000L;

  /** One element in this many is timed on each side, to decide where the consumer is served. */
  static final int SAMPLE_EVERY = 8;
  /** The consumer is served on the producer's worker when it costs at most 1/this of the producer. */
  static final int INLINE_RATIO = 8;
  /** A timed element counts as at most this many times the moving average of its side. */
  static final int SAMPLE_CAP = 4;

  /** The most an idle consumer spins for the next element under {@link PrefetchSpin#adaptive()}. */
  static final long MAX_SPIN_NANOS = 50_000;

  /**
   * The spin budget of a prefetch in a pipeline whose threads may all be busy at once
   * ({@code busyThreads}: the consumer, the producers, the parallel workers): a
   * {@link PrefetchSpin.Fixed} budget as given (0 never spins); under {@link PrefetchSpin#adaptive()}
   * {@link #MAX_SPIN_NANOS} when the process may use more processors than that, and 0 otherwise, so
   * that a spinning consumer never takes a core the pipeline's work needs.
   */
  public static long spinBudget(PrefetchSpin spin, int busyThreads) {
    if (spin instanceof PrefetchSpin.Fixed fixed) {
      return fixed.budget().toNanos();
    }
    return Runtime.getRuntime().availableProcessors() > busyThreads ? MAX_SPIN_NANOS : 0;
  }

  /**
   * A prefetch whose idle consumer spins a fixed {@code spinNanos} before it parks.
   *
   * @param bufferSize elements produced ahead of demand, &gt; 0
   * @param spinNanos how long an idle consumer spins for the next element before it parks, &gt;= 0 (0: never)
   */
  public FluxPrefetch(Publisher<? extends T> source, int bufferSize, Scheduler producer, Scheduler consumer,
      long spinNanos) {
    this(source, bufferSize, producer, consumer, spinNanos, false, DEFAULT_PARK_NANOS);
  }

  /**
   * @param bufferSize elements produced ahead of demand, &gt; 0
   * @param spinNanos the most an idle consumer spins for the next element before it parks, &gt;= 0 (0: never)
   * @param adaptiveSpin spin only while spinning pays (most waits end within the budget)
   * @param parkNanos how long it then parks on its worker before it gives the worker back, &gt;= 0
   */
  public FluxPrefetch(Publisher<? extends T> source, int bufferSize, Scheduler producer, Scheduler consumer,
      long spinNanos, boolean adaptiveSpin, long parkNanos) {
    if (bufferSize <= 0) {
      throw new IllegalArgumentException("bufferSize > 0 required but it was " + bufferSize);
    }
    if (spinNanos < 0) {
      throw new IllegalArgumentException("spinNanos >= 0 required but it was " + spinNanos);
    }
    if (parkNanos < 0) {
      throw new IllegalArgumentException("parkNanos >= 0 required but it was " + parkNanos);
    }
    this.source = source;
    this.bufferSize = bufferSize;
    this.oneScheduler = producer == consumer;
    this.producer = TrackedScheduler.of(producer);
    this.consumer = TrackedScheduler.of(consumer);
    this.spinNanos = spinNanos;
    this.adaptiveSpin = adaptiveSpin;
    this.parkNanos = parkNanos;
  }

  /** The most an idle consumer spins, ns (test hook). */
  long spinNanos() {
    return spinNanos;
  }

  /** Whether the spin adapts (test hook). */
  boolean adaptiveSpin() {
    return adaptiveSpin;
  }

  /** How long an idle consumer parks, ns (test hook). */
  long parkNanos() {
    return parkNanos;
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
        new Spin(spinNanos, adaptiveSpin), parkNanos, oneScheduler);
    actual.onSubscribe(parent);
    try {
      producerWorker.schedule(() -> {
        parent.producerThread = Thread.currentThread(); // a worker's tasks all run on its one thread
        try {
          source.subscribe(parent);
        } catch (Throwable e) {
          parent.upstreamThrew(e);
        }
      });
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
    final Spin spin;
    final long parkNanos;
    final Queue<T> queue;
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
        Scheduler.Worker consumerWorker, Spin spin, long parkNanos, boolean mayInline) {
      this.actual = actual;
      this.ctx = actual.currentContext();
      this.bufferSize = bufferSize;
      this.limit = bufferSize - (bufferSize >> 2);
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
      if (mayInline && ++receivedCount % SAMPLE_EVERY == 0) {
        producerMark = System.nanoTime(); // the next element's production starts
      }
    }

    /**
     * A moving average of per-element costs: the first sample, then a quarter of each new one, a
     * sample counted as at most {@link #SAMPLE_CAP} times the average (plus a microsecond). A thread
     * descheduled while it is timed, or a producer that waited for demand, yields one sample
     * hundreds of times the cost; capped, such samples move the average by three quarters at most,
     * so only a lasting change of cost (several samples in a row) moves where the consumer is served.
     */
    static long average(long old, long sample) {
      return old < 0 ? sample : (3 * old + Math.min(sample, SAMPLE_CAP * old + 1_000)) / 4;
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
      return c >= 0 && p >= 0 && c * INLINE_RATIO <= p;
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
      } else {
        wakeConsumer();
      }
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
            try {
              s.request(r);
            } catch (Throwable e) {
              upstreamThrew(e);
            }
          }
        });
      } catch (RejectedExecutionException e) {
        if (!cancelled) {
          onError(Operators.onRejectedExecution(e, ctx));
        }
      }
    }

    /**
     * Waits for the queue to fill or the upstream to end: spins (when {@link Spin} allows), then
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
            if (!d && awaitNext(inline)) {
              continue;
            }
            break;
          }
          if (mayInline && ++emittedCount % SAMPLE_EVERY == 0) {
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

  /**
   * The spin budget of one subscription's consumer. Fixed, it is always the given budget. Adaptive,
   * it starts at the given budget and is checked every {@value #WINDOW} waits: it stays while at least
   * half of them ended within the spin, else it drops to 0 for {@value #COOLDOWN} waits, after which
   * one window spins again to measure anew. Consumer thread only.
   */
  static final class Spin {
    static final int WINDOW = 16;
    static final int COOLDOWN = 256;

    private final long max;
    private final boolean adaptive;
    private long budget;
    private int waits;
    private int hits;
    private int cooldown;

    Spin(long max, boolean adaptive) {
      this.max = max;
      this.adaptive = adaptive;
      this.budget = max;
    }

    /** How long to spin now, in nanoseconds (0: park at once). */
    long budget() {
      if (budget == 0 && adaptive && max > 0 && --cooldown <= 0) {
        budget = max; // measure again
        waits = 0;
        hits = 0;
      }
      return budget;
    }

    /** A spin ended with the element ({@code true}) or without it. */
    void record(boolean came) {
      if (!adaptive) {
        return;
      }
      waits++;
      if (came) {
        hits++;
      }
      if (waits == WINDOW) {
        if (2 * hits < WINDOW) {
          budget = 0;
          cooldown = COOLDOWN;
        }
        waits = 0;
        hits = 0;
      }
    }
  }
}
