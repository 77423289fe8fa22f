package dev.sluice.operators;

import dev.sluice.core.Example;
import dev.sluice.core.Options;
import dev.sluice.core.PipelineContext;
import dev.sluice.operators.internal.MapOperator;
import java.util.Objects;
import java.util.SplittableRandom;
import java.util.function.BiFunction;
import java.util.function.Function;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * tf.data's {@code map(fn, num_parallel_calls, deterministic)} as plain Reactor transformers.
 *
 * <p>With {@code numParallelCalls = 1} the function runs on the subscriber's thread, element by
 * element ({@code Flux.map}). With more, elements go to the workers of a {@link Scheduler} in chunks
 * (one scheduler hop per chunk, not per element, since a hop costs microseconds in Reactor), at
 * most {@code numParallelCalls} chunks mapped at once, by one operator ({@code FluxChunkedMap}) whose
 * chunks are mapped and emitted by the engine of every ordered parallel stage
 * ({@code OrderedParallel}'s chunk engine).
 * {@code deterministic = true} (the default) keeps the input order, so the output is the same for
 * any {@code numParallelCalls}; {@code false} emits each chunk as soon as it is mapped, which may
 * reorder. With the adaptive chunk size (the default), a chunk whose function is cheap next to a
 * scheduler hop or to producing its inputs is mapped on the thread that completed it, as is the
 * first chunks of each subscription (to measure the function), unless the options say
 * {@link Options.ChunkPlacement#WORKERS} ({@link Options#mapChunks()}: those of
 * {@link Options#defaults()} unless given; a {@code Pipeline}'s map takes its pipeline's).
 *
 * <p>Augmentations that need randomness take a per-sample generator derived from (seed, epoch,
 * index) ({@link #augment}, or {@link SampleRandom#of} in {@link #mapWithContext}), never a shared
 * {@code Random}, so the result does not depend on the parallelism or on thread timing.
 *
 * <p><b>Reactive Streams semantics.</b> Requests upstream in chunks ({@code (numParallelCalls + 2) ×
 * chunkSize} elements ahead at most); emits mapped elements as downstream requests them; completes
 * after the last chunk is emitted; errors when upstream or the function fails (later chunks are
 * cancelled); cancels upstream and the chunks in flight when downstream cancels.
 *
 * <p><b>Discard support.</b> Elements waiting in a partial chunk, and mapped elements waiting to be
 * emitted, go to Reactor's discard hook on cancel and error.
 *
 * <p>Chunk size: unless given, it starts at {@value #DEFAULT_CHUNK_SIZE} and doubles (up to 4,096)
 * while a chunk maps in under 100 µs and its elements arrive faster than one per 2 µs, so a cheap
 * function over a fast source pays one scheduler hop per thousands of elements; it halves back
 * when elements arrive slower than one per 20 µs (the first element of a chunk waits for the
 * last). The output never depends on it.
 *
 * <p>Caveat: with {@code numParallelCalls > 1} the first element waits until a chunk is full (or
 * upstream completes): for a slow streaming source give a small fixed {@code chunkSize}.
 */
public final class ParallelMap {
  /** Elements handed to a worker at once, unless given. */
  public static final int DEFAULT_CHUNK_SIZE = MapOperator.DEFAULT_CHUNK_SIZE;
  /** tf.data's {@code AUTOTUNE}: as many parallel calls as available processors. */
  public static final int AUTOTUNE = MapOperator.AUTOTUNE;

  private ParallelMap() {}

  /** {@code map(fn, numParallelCalls, deterministic = true)}. */
  public static <T, R> Function<Flux<T>, Flux<R>> map(Function<? super T, ? extends R> fn, int numParallelCalls) {
    return map(fn, numParallelCalls, true);
  }

  /**
   * tf.data's {@code map}.
   *
   * @param fn the function, called once per element, possibly on several threads at once
   * @param numParallelCalls chunks mapped at once, &gt; 0 (1 = on the calling thread), or {@link #AUTOTUNE}
   * @param deterministic true: keep the input order
   */
  public static <T, R> Function<Flux<T>, Flux<R>> map(Function<? super T, ? extends R> fn, int numParallelCalls,
      boolean deterministic) {
    return map(fn, numParallelCalls, deterministic, Options.defaults());
  }

  /**
   * tf.data's {@code map}, its chunks placed as {@code options} say ({@link Options#mapChunks()}).
   *
   * @param fn the function, called once per element, possibly on several threads at once
   * @param numParallelCalls chunks mapped at once, &gt; 0 (1 = on the calling thread), or {@link #AUTOTUNE}
   * @param deterministic true: keep the input order
   * @param options the options, read once here
   */
  public static <T, R> Function<Flux<T>, Flux<R>> map(Function<? super T, ? extends R> fn, int numParallelCalls,
      boolean deterministic, Options options) {
    return MapOperator.of(fn, numParallelCalls, deterministic, DEFAULT_CHUNK_SIZE, true, Schedulers.parallel(),
        options);
  }

  /**
   * {@link #map(Function, int, boolean)} with a fixed chunk size and the scheduler of the workers.
   *
   * @param chunkSize elements handed to a worker at once, &gt; 0 (fixed; the default adapts from
   *     {@value #DEFAULT_CHUNK_SIZE})
   * @param scheduler where chunks are mapped (default {@link Schedulers#parallel()})
   */
  public static <T, R> Function<Flux<T>, Flux<R>> map(Function<? super T, ? extends R> fn, int numParallelCalls,
      boolean deterministic, int chunkSize, Scheduler scheduler) {
    return map(fn, numParallelCalls, deterministic, chunkSize, false, scheduler);
  }

  private static <T, R> Function<Flux<T>, Flux<R>> map(Function<? super T, ? extends R> fn, int numParallelCalls,
      boolean deterministic, int chunkSize, boolean adaptive, Scheduler scheduler) {
    return MapOperator.of(fn, numParallelCalls, deterministic, chunkSize, adaptive, scheduler);
  }

  /**
   * A map whose function also receives the pass's {@link PipelineContext} (from the Reactor context,
   * the defaults when absent), e.g. to derive {@link SampleRandom#of(PipelineContext, long)}.
   */
  public static <T, R> Function<Flux<T>, Flux<R>> mapWithContext(
      BiFunction<? super T, PipelineContext, ? extends R> fn, int numParallelCalls, boolean deterministic) {
    Objects.requireNonNull(fn, "fn");
    return f -> Flux.deferContextual(view -> {
      PipelineContext ctx = PipelineContext.from(view);
      return f.transform(map((T t) -> fn.apply(t, ctx), numParallelCalls, deterministic));
    });
  }

  /**
   * A map over examples whose function receives the example's own generator,
   * {@link SampleRandom#of(PipelineContext, long) SampleRandom.of(context, example.index())}:
   * the same example in the same epoch is always augmented the same way.
   */
  public static <R> Function<Flux<Example>, Flux<R>> augment(
      BiFunction<? super Example, SplittableRandom, ? extends R> fn, int numParallelCalls, boolean deterministic) {
    Objects.requireNonNull(fn, "fn");
    return mapWithContext((Example e, PipelineContext ctx) -> fn.apply(e, SampleRandom.of(ctx, e.index())),
        numParallelCalls, deterministic);
  }
}
