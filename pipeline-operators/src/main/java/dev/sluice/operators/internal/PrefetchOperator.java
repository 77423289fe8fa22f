package dev.sluice.operators.internal;

import dev.sluice.core.Batch;
import dev.sluice.core.MemoryManager;
import dev.sluice.core.Options;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * {@code prefetch(bufferSize)} on the element path: a {@link FluxPrefetch} that closes the batches
 * it drops. The public {@code Prefetch} and the planner's prefetch stage both build it.
 */
public final class PrefetchOperator {
  /** The buffer size that asks for an autotuned buffer ({@link FluxPrefetch#autotuned}). */
  public static final int AUTOTUNE = -1;

  /** The most elements an autotuned prefetch asks ahead. */
  public static final int AUTOTUNE_MAX = 32;

  /** The threads of a prefetch that may both be busy: its producer and its consumer. */
  public static final int THREADS = 2;

  private PrefetchOperator() {}

  /**
   * The prefetch with its producer and consumer on {@link Schedulers#boundedElastic()}, spinning
   * as a prefetch alone in the process may ({@link #THREADS} busy threads).
   *
   * @param bufferSize elements produced ahead of demand, &gt; 0
   * @return the transformer
   */
  public static <T> Function<Flux<T>, Flux<T>> of(int bufferSize) {
    return of(bufferSize, Schedulers.boundedElastic(), Schedulers.boundedElastic(), THREADS);
  }

  /**
   * The prefetching transformer tuned by {@link Options#defaults()}.
   *
   * @param bufferSize elements produced ahead of demand, &gt; 0
   * @param producer the scheduler the upstream runs on
   * @param consumer the scheduler the downstream is called on
   * @param busyThreads the threads of the pass that may be busy at once, for the spin budget
   *     ({@link FluxPrefetch#spinBudget})
   * @return the transformer
   */
  public static <T> Function<Flux<T>, Flux<T>> of(int bufferSize, Scheduler producer, Scheduler consumer,
      int busyThreads) {
    return of(bufferSize, producer, consumer, busyThreads, Options.defaults());
  }

  /**
   * The prefetching transformer tuned by {@code options} ({@link Options#prefetchPark()},
   * {@link Options#prefetchSpin()}), read once here.
   *
   * @param bufferSize elements produced ahead of demand, &gt; 0
   * @param producer the scheduler the upstream runs on
   * @param consumer the scheduler the downstream is called on
   * @param busyThreads the threads of the pass that may be busy at once, for the spin budget
   *     ({@link FluxPrefetch#spinBudget})
   * @param options the pipeline's options
   * @return the transformer
   */
  public static <T> Function<Flux<T>, Flux<T>> of(int bufferSize, Scheduler producer, Scheduler consumer,
      int busyThreads, Options options) {
    if (bufferSize <= 0 && bufferSize != AUTOTUNE) {
      throw new IllegalArgumentException("bufferSize > 0 (or AUTOTUNE = -1) required but it was " + bufferSize);
    }
    long spin = FluxPrefetch.spinBudget(options.prefetchSpin(), busyThreads);
    boolean adaptive = options.prefetchSpin() instanceof Options.PrefetchSpin.Adaptive;
    long park = options.prefetchPark().toNanos();
    if (bufferSize == AUTOTUNE) {
      MemoryManager memory = options.memory();
      BooleanSupplier room = () -> memory.limit() == MemoryManager.UNLIMITED || memory.reservedBytes() < memory.limit() / 2;
      return flux -> new FluxPrefetch<T>(flux, AUTOTUNE_MAX, producer, consumer, spin, adaptive, park).autotuned(room)
          .doOnDiscard(Batch.class, Batch::close);
    }
    return flux -> new FluxPrefetch<T>(flux, bufferSize, producer, consumer, spin, adaptive, park)
        .doOnDiscard(Batch.class, Batch::close);
  }
}
