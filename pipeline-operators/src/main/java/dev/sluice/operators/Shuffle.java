package dev.sluice.operators;

import dev.sluice.core.PipelineContext;
import dev.sluice.operators.internal.FluxBufferShuffle;
import java.util.function.Function;
import reactor.core.publisher.Flux;

/**
 * tf.data's buffer shuffle as plain Reactor transformers:
 * {@code flux.transform(Shuffle.buffer(10_000, 7))}.
 *
 * <p>The operator fills a buffer of {@code bufferSize} elements; then, each time downstream asks for
 * an element, it emits one chosen uniformly from the buffer and refills the freed slot with the
 * next upstream element (refills are requested in batches; a draw that hits a slot still waiting
 * for its refill waits for it); once upstream completes it drains the buffer in random order. With
 * {@code bufferSize} at least the number of elements the result is a uniform random permutation;
 * with {@code bufferSize = 1} it is the identity. The buffer holds at most {@code bufferSize}
 * elements, counting those requested from upstream and not yet received.
 *
 * <p>The order depends only on the elements, the seed and the epoch, never on thread timing or on
 * how downstream requests. The seed is the operator's own when given, else the seed of the
 * {@link PipelineContext} found in the Reactor context under {@code PipelineContext.class}, else 0;
 * the epoch is that context's epoch (0 when absent). With {@code reshuffleEachIteration = false}
 * every epoch uses the order of epoch 0.
 *
 * <p><b>Reactive Streams semantics.</b> Emits when downstream has demand and the buffer is full
 * (or upstream completed); backpressures upstream to keep at most {@code bufferSize} elements;
 * completes when upstream completed and the buffer is empty; errors as soon as upstream errors
 * (buffered elements are discarded, not emitted); cancels upstream when downstream cancels.
 *
 * <p><b>Discard support.</b> On cancel and on error every buffered element goes to Reactor's discard
 * hook ({@code doOnDiscard(Batch.class, Batch::close)} releases pooled batches).
 *
 * <p>Caveat: a buffer shuffle is a local shuffle; a random-access source gets a true global shuffle
 * from {@code Pipeline.shuffle()} at O(1) memory. On a split source, shard before shuffling.
 */
public final class Shuffle {
  private Shuffle() {}

  /**
   * A buffer shuffle with the context's seed, reshuffled each epoch.
   *
   * @param bufferSize elements held, &gt; 0
   */
  public static <T> Function<Flux<T>, Flux<T>> buffer(int bufferSize) {
    check(bufferSize);
    return f -> new FluxBufferShuffle<>(f, bufferSize, false, 0, true);
  }

  /**
   * A buffer shuffle with its own seed, reshuffled each epoch.
   *
   * @param bufferSize elements held, &gt; 0
   * @param seed overrides the context's seed
   */
  public static <T> Function<Flux<T>, Flux<T>> buffer(int bufferSize, long seed) {
    return buffer(bufferSize, seed, true);
  }

  /**
   * tf.data's {@code shuffle(buffer_size, seed, reshuffle_each_iteration)}.
   *
   * @param bufferSize elements held, &gt; 0
   * @param seed overrides the context's seed
   * @param reshuffleEachIteration true (tf.data's default): a different order each epoch
   */
  public static <T> Function<Flux<T>, Flux<T>> buffer(int bufferSize, long seed, boolean reshuffleEachIteration) {
    check(bufferSize);
    return f -> new FluxBufferShuffle<>(f, bufferSize, true, seed, reshuffleEachIteration);
  }

  /** {@link #buffer(int)} with the context's seed and a choice of reshuffling. */
  public static <T> Function<Flux<T>, Flux<T>> buffer(int bufferSize, boolean reshuffleEachIteration) {
    check(bufferSize);
    return f -> new FluxBufferShuffle<>(f, bufferSize, false, 0, reshuffleEachIteration);
  }

  private static void check(int bufferSize) {
    if (bufferSize <= 0) {
      throw new IllegalArgumentException("bufferSize > 0 required but it was " + bufferSize);
    }
  }
}
