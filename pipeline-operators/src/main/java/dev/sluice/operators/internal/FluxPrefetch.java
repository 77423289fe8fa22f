package dev.sluice.operators.internal;

import dev.sluice.core.Options.PrefetchSpin;
import dev.sluice.core.internal.TrackedScheduler;
import java.util.function.BooleanSupplier;
import java.util.concurrent.RejectedExecutionException;
import org.reactivestreams.Publisher;
import reactor.core.CoreSubscriber;
import reactor.core.Scannable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Operators;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

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
 * cancel cancels the upstream, ends the producer's wait for pooled memory if it waits, and never
 * interrupts the producer's thread (an interrupt during a {@code FileChannel} read closes the
 * channel): a producer task under way runs to its end, what it emits then is discarded, and its
 * worker is disposed after it.
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
  /** Null: {@code bufferSize} elements ahead; else autotuned up to it, growing while this allows. */
  private final BooleanSupplier mayGrow;

  /** The elements an autotuned prefetch asks ahead at first. */
  static final int AUTOTUNE_START = 2;

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
    this(source, bufferSize, producer, consumer, spinNanos, adaptiveSpin, parkNanos, null);
  }

  /**
   * This prefetch autotuned: it asks {@link #AUTOTUNE_START} elements ahead at first and doubles
   * that, up to its buffer size, each time the consumer finds the queue empty while it has demand
   * (the producer fell behind) and {@code mayGrow} allows (the memory budget has room); it never
   * shrinks within a pass. The order of the elements is the same whatever the size.
   *
   * @param mayGrow whether the buffer may grow now
   * @return the autotuned prefetch
   */
  public FluxPrefetch<T> autotuned(BooleanSupplier mayGrow) {
    return new FluxPrefetch<>(source, bufferSize, producer, consumer, spinNanos, adaptiveSpin, parkNanos,
        java.util.Objects.requireNonNull(mayGrow, "mayGrow"), oneScheduler);
  }

  private FluxPrefetch(Publisher<? extends T> source, int bufferSize, Scheduler producer, Scheduler consumer,
      long spinNanos, boolean adaptiveSpin, long parkNanos, BooleanSupplier mayGrow, boolean oneScheduler) {
    this.source = source;
    this.bufferSize = bufferSize;
    this.oneScheduler = oneScheduler;
    this.producer = producer;
    this.consumer = consumer;
    this.spinNanos = spinNanos;
    this.adaptiveSpin = adaptiveSpin;
    this.parkNanos = parkNanos;
    this.mayGrow = mayGrow;
  }

  private FluxPrefetch(Publisher<? extends T> source, int bufferSize, Scheduler producer, Scheduler consumer,
      long spinNanos, boolean adaptiveSpin, long parkNanos, BooleanSupplier mayGrow) {
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
    this.mayGrow = mayGrow;
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
    FluxPrefetchSubscriber<T> parent = new FluxPrefetchSubscriber<>(actual, bufferSize, producerWorker, consumerWorker,
        new FluxPrefetchSpin(spinNanos, adaptiveSpin), parkNanos, oneScheduler, mayGrow);
    actual.onSubscribe(parent);
    try {
      producerWorker.schedule(() -> {
        parent.producerThread = Thread.currentThread(); // a worker's tasks all run on its one thread
        if (parent.cancelled) {
          return; // cancelled before the upstream was subscribed: it never is
        }
        parent.producerCancel.run(() -> {
          try {
            source.subscribe(parent);
          } catch (Throwable e) {
            parent.upstreamThrew(e);
          }
        });
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

}
