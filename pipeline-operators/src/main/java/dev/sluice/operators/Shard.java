package dev.sluice.operators;

import dev.sluice.operators.internal.ShardOperator;
import java.util.function.Function;
import reactor.core.publisher.Flux;

/**
 * tf.data's {@code shard} as a plain Reactor transformer over any {@link Flux}: keeps the elements
 * at positions {@code p} with {@code p mod numShards == index}, under an {@link EqualLength} policy.
 *
 * <p>This is the element path: every rank reads every element and keeps its stride. On a
 * {@link dev.sluice.core.RandomAccessDataset}, {@link Pipeline#shard} computes the rank's indices
 * instead and reads nothing else.
 *
 * <p><b>Reactive Streams semantics.</b> Requests {@code numShards} upstream elements per element it
 * emits. Emits an element once its group of {@code numShards} consecutive elements is complete
 * ({@code UNEVEN} and {@code PAD} also emit from the last, incomplete group); completes when the
 * upstream completes, after {@code PAD}'s wrap-around element if this rank needs one; cancels the
 * upstream when the downstream cancels; passes errors on.
 *
 * <p><b>Discard support.</b> Elements of other ranks, a {@code DROP}ped incomplete group, and the
 * up to {@code index} first elements kept for {@code PAD}'s wrap-around go to the discard hook.
 *
 * <pre>{@code
 * Flux<Example> mine = examples.transform(Shard.of(ctx.worldSize(), ctx.rank(), EqualLength.DROP));
 * }</pre>
 */
public final class Shard {
  private Shard() {}

  /** {@link #of(int, int, EqualLength)} with {@link EqualLength#PAD}. */
  public static <T> Function<Flux<T>, Flux<T>> of(int numShards, int index) {
    return of(numShards, index, EqualLength.PAD);
  }

  /**
   * @param numShards number of shards (ranks), &gt; 0
   * @param index this shard, in {@code [0, numShards)}
   * @param policy what to do when the count is not a multiple of {@code numShards}
   */
  public static <T> Function<Flux<T>, Flux<T>> of(int numShards, int index, EqualLength policy) {
    return ShardOperator.of(numShards, index, policy);
  }
}
