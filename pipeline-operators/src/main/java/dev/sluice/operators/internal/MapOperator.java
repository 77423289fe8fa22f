package dev.sluice.operators.internal;

import dev.sluice.core.Options;
import java.util.Objects;
import java.util.function.Function;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * {@code map(fn, numParallelCalls, deterministic)} on the element path: {@code Flux.map} for one
 * call at a time, else {@link FluxChunkedMap} (chunks filled there and mapped by
 * {@link dev.sluice.core.internal.OrderedChunks}). The public {@code ParallelMap} and the planner's map
 * stage both build it.
 */
public final class MapOperator {
  /** Elements handed to a worker at once, unless given (the adaptive chunk size starts here). */
  public static final int DEFAULT_CHUNK_SIZE = 64;
  /** tf.data's {@code AUTOTUNE}: as many parallel calls as available processors. */
  public static final int AUTOTUNE = -1;

  private MapOperator() {}

  /**
   * The map with the adaptive chunk size from {@link #DEFAULT_CHUNK_SIZE}, mapped on
   * {@link Schedulers#parallel()}, its chunks placed as {@code options} say
   * ({@link Options#mapChunks()}).
   *
   * @param fn the function, called once per element, possibly on several threads at once
   * @param numParallelCalls chunks mapped at once, &gt; 0 (1 = on the calling thread), or {@link #AUTOTUNE}
   * @param deterministic true: keep the input order
   * @param options the pipeline's options
   * @return the transformer
   */
  public static <T, R> Function<Flux<T>, Flux<R>> of(Function<? super T, ? extends R> fn, int numParallelCalls,
      boolean deterministic, Options options) {
    return of(fn, numParallelCalls, deterministic, DEFAULT_CHUNK_SIZE, true, Schedulers.parallel(), options);
  }

  /**
   * The map tuned by {@link Options#defaults()}.
   *
   * @param fn the function, called once per element, possibly on several threads at once
   * @param numParallelCalls chunks mapped at once, &gt; 0 (1 = on the calling thread), or {@link #AUTOTUNE}
   * @param deterministic true: keep the input order
   * @param chunkSize elements handed to a worker at once (the first size when {@code adaptive}), &gt; 0
   * @param adaptive let the chunk size adapt to the function's cost
   * @param scheduler where chunks are mapped
   * @return the transformer
   */
  public static <T, R> Function<Flux<T>, Flux<R>> of(Function<? super T, ? extends R> fn, int numParallelCalls,
      boolean deterministic, int chunkSize, boolean adaptive, Scheduler scheduler) {
    return of(fn, numParallelCalls, deterministic, chunkSize, adaptive, scheduler, Options.defaults());
  }

  /**
   * The map tuned by {@code options}.
   *
   * @param fn the function, called once per element, possibly on several threads at once
   * @param numParallelCalls chunks mapped at once, &gt; 0 (1 = on the calling thread), or {@link #AUTOTUNE}
   * @param deterministic true: keep the input order
   * @param chunkSize elements handed to a worker at once (the first size when {@code adaptive}), &gt; 0
   * @param adaptive let the chunk size adapt to the function's cost
   * @param scheduler where chunks are mapped
   * @param options the pipeline's options: where chunks map ({@link Options#mapChunks()}), read once here
   * @return the transformer
   */
  public static <T, R> Function<Flux<T>, Flux<R>> of(Function<? super T, ? extends R> fn, int numParallelCalls,
      boolean deterministic, int chunkSize, boolean adaptive, Scheduler scheduler, Options options) {
    Objects.requireNonNull(fn, "fn");
    Objects.requireNonNull(scheduler, "scheduler");
    if (chunkSize <= 0) {
      throw new IllegalArgumentException("chunkSize > 0 required but it was " + chunkSize);
    }
    int parallel = numParallelCalls == AUTOTUNE ? Runtime.getRuntime().availableProcessors() : numParallelCalls;
    if (parallel <= 0) {
      throw new IllegalArgumentException("numParallelCalls > 0 (or AUTOTUNE = -1) required but it was " + numParallelCalls);
    }
    if (parallel == 1) {
      return f -> f.map(fn);
    }
    Options.ChunkPlacement placement = options.mapChunks();
    return f -> new FluxChunkedMap<T, R>(f, fn, parallel, deterministic, chunkSize, adaptive, placement, scheduler);
  }
}
