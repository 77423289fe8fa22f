package dev.sluice.operators;

import dev.sluice.operators.internal.InterleaveOperator;
import java.util.function.Function;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;

/**
 * tf.data's {@code interleave(map_func, cycle_length, block_length, num_parallel_calls,
 * deterministic)} as plain Reactor transformers, typically to read several files at once:
 * {@code files.transform(Interleave.of(f -> Npy.open(f).flux(), 4, 16))}.
 *
 * <p>Each upstream element is turned into a publisher by {@code fn}; up to {@code cycleLength} of
 * them are open at once, and {@code blockLength} consecutive elements are taken from each in turn.
 * When one completes, its slot takes the next upstream element. With {@code deterministic} (the
 * default) the output is exactly tf.data's sequential order for any {@code numParallelCalls};
 * {@code numParallelCalls > 1} subscribes the open publishers on {@code boundedElastic} workers,
 * so they read ahead concurrently (a bounded queue each). {@code deterministic = false} emits
 * whatever is ready first ({@code flatMap}).
 *
 * <p><b>Reactive Streams semantics.</b> Requests one upstream element per free slot; emits on
 * demand, from the slot the cycle is at; completes when upstream and every open publisher
 * completed; errors as soon as upstream or an open publisher errors (the others are cancelled);
 * cancel cancels upstream and every open publisher. With {@code numParallelCalls > 1} a cancel never
 * interrupts the worker an open publisher runs on (an interrupt during a {@code FileChannel} read
 * closes the channel, for every later pass of a source that keeps it open): a read under way
 * finishes, what the publisher emits after the cancel goes to the discard hook, its worker is given
 * back after it, and a publisher waiting for pooled memory stops waiting.
 *
 * <p><b>Discard support.</b> Elements queued in the open publishers, and upstream elements not yet
 * opened, go to Reactor's discard hook on cancel and error.
 *
 * <p>Caveat: {@code fn} should return a lazy publisher that opens its resources on subscription
 * ({@code Flux.using}, a {@code Dataset}'s flux), so a publisher cancelled before it was subscribed
 * (parallel mode) holds nothing.
 */
public final class Interleave {
  private Interleave() {}

  /** {@code interleave(fn, cycleLength, blockLength)}: sequential and deterministic. */
  public static <T, R> Function<Flux<T>, Flux<R>> of(Function<? super T, ? extends Publisher<? extends R>> fn,
      int cycleLength, int blockLength) {
    return of(fn, cycleLength, blockLength, 1, true);
  }

  /**
   * @param fn turns an upstream element (a file, a shard) into the publisher of its elements
   * @param cycleLength publishers open at once, &gt; 0
   * @param blockLength consecutive elements taken from each, &gt; 0 (tf.data default 1)
   * @param numParallelCalls 1: open publishers run on the subscriber's thread; more: on
   *     {@code boundedElastic} workers, reading ahead concurrently
   * @param deterministic keep tf.data's sequential order (default true)
   */
  public static <T, R> Function<Flux<T>, Flux<R>> of(Function<? super T, ? extends Publisher<? extends R>> fn,
      int cycleLength, int blockLength, int numParallelCalls, boolean deterministic) {
    return InterleaveOperator.of(fn, cycleLength, blockLength, numParallelCalls, deterministic);
  }
}
