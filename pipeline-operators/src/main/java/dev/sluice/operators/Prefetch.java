package dev.sluice.operators;

import dev.sluice.core.Options;
import dev.sluice.operators.internal.FluxPrefetch;
import dev.sluice.operators.internal.PrefetchOperator;
import java.util.function.Function;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * tf.data's {@code prefetch} as a plain Reactor transformer: the upstream runs on its own thread and
 * works at most {@code bufferSize} elements ahead of the consumer.
 *
 * <p>It behaves as {@code subscribeOn} (the producer, and every request to it, runs on a worker of
 * the producer scheduler) followed by {@code publishOn} with a bounded queue of {@code bufferSize}
 * elements (the consumer is called on a worker of the consumer scheduler), fused into one operator
 * ({@link FluxPrefetch}) whose idle consumer parks on its worker for the next element and is woken
 * by the producer directly, instead of handing its worker back and being scheduled again for each
 * element. It spins before parking only when the process may use more processors than the two
 * threads of the prefetch, and only while spinning is measured to pay. Both schedulers default to
 * {@link Schedulers#boundedElastic()}, since producers block on page faults and consumers on
 * training steps. How long the idle consumer parks and whether it spins are
 * {@link Options#prefetchPark()} and {@link Options#prefetchSpin()}: those of
 * {@link Options#defaults()} unless given (a {@code Pipeline}'s prefetch takes its pipeline's).
 *
 * <p><b>Reactive Streams semantics.</b> Emits when an element is queued and there is demand;
 * backpressures when the queue holds {@code bufferSize} elements (the producer is not asked for
 * more); completes when the upstream completed and the queue is drained; cancels the upstream when
 * the downstream cancels. Errors are delivered after the elements queued before them.
 *
 * <p><b>Discard support.</b> Elements still queued on cancel or error go to Reactor's discard hook;
 * this transformer registers {@code doOnDiscard(Batch.class, Batch::close)}, so dropped batches are
 * released even when the caller registers no hook of its own.
 *
 * <p>Caveat: prefetch counts elements, not examples: after {@code batch(256)}, {@code prefetch(4)}
 * holds up to 4 batches (1,024 rows).
 *
 * <pre>{@code
 * Flux<Batch> ahead = batches.transform(Prefetch.of(4));
 * }</pre>
 */
public final class Prefetch {
  /**
   * tf.data's {@code AUTOTUNE} as a buffer size: the buffer starts at 2 elements and doubles, up to
   * {@link #AUTOTUNE_MAX}, each time the consumer finds it empty while it has demand (the producer
   * fell behind), as long as the memory manager of the options holds less than half its limit; it
   * never shrinks within a pass. The elements and their order do not depend on the size.
   */
  public static final int AUTOTUNE = PrefetchOperator.AUTOTUNE;

  /** The most elements an autotuned prefetch produces ahead. */
  public static final int AUTOTUNE_MAX = PrefetchOperator.AUTOTUNE_MAX;

  private Prefetch() {}

  /**
   * @param bufferSize elements produced ahead of demand, &gt; 0 (tf.data's {@code buffer_size}), or
   *     {@link #AUTOTUNE}
   */
  public static <T> Function<Flux<T>, Flux<T>> of(int bufferSize) {
    return of(bufferSize, Schedulers.boundedElastic(), Schedulers.boundedElastic());
  }

  /**
   * @param bufferSize elements produced ahead of demand, &gt; 0, or {@link #AUTOTUNE}
   * @param producer the scheduler the upstream runs on
   * @param consumer the scheduler the downstream is called on
   */
  public static <T> Function<Flux<T>, Flux<T>> of(int bufferSize, Scheduler producer, Scheduler consumer) {
    return of(bufferSize, producer, consumer, Options.defaults());
  }

  /**
   * @param bufferSize elements produced ahead of demand, &gt; 0, or {@link #AUTOTUNE}
   * @param producer the scheduler the upstream runs on
   * @param consumer the scheduler the downstream is called on
   * @param options how the idle consumer waits ({@link Options#prefetchPark()},
   *     {@link Options#prefetchSpin()}), read once here
   */
  public static <T> Function<Flux<T>, Flux<T>> of(int bufferSize, Scheduler producer, Scheduler consumer,
      Options options) {
    return PrefetchOperator.of(bufferSize, producer, consumer, PrefetchOperator.THREADS, options);
  }
}
