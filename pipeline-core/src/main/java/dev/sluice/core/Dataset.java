package dev.sluice.core;

import reactor.core.publisher.Flux;

/**
 * An immutable, lazy description of a dataset. {@link #flux(PipelineContext)} returns one pass over
 * it; nothing is read until the flux is subscribed, and each subscription is an independent pass.
 *
 * <p>A pass is a function of its {@link PipelineContext} (seed, epoch, rank, world size): two
 * subscriptions with the same context yield the same elements in the same order.
 *
 * @param <T> the element type ({@link Example}, {@link Batch} or any user type)
 */
@FunctionalInterface
public interface Dataset<T> {

  /** One pass over the dataset for the given context. */
  Flux<T> flux(PipelineContext context);

  /**
   * How the planner reads this dataset. The default follows the interfaces it implements:
   * {@link Access#RANDOM} for a {@link RandomAccessDataset} (also when it is a split source too),
   * else {@link Access#BLOCKS} for a {@link SplitDataset}, else {@link Access#STREAM}. A source that
   * implements both interfaces may override it to declare {@link Access#BLOCKS} (the columnar path
   * instead of the index path); a declaration the source's interfaces cannot honour ({@code RANDOM}
   * without {@code RandomAccessDataset}, {@code BLOCKS} without {@code SplitDataset}) fails at
   * planning.
   */
  default Access access() {
    return this instanceof RandomAccessDataset ? Access.RANDOM : this instanceof SplitDataset ? Access.BLOCKS
        : Access.STREAM;
  }

  /** One pass with {@link PipelineContext#defaults()} (seed 0, epoch 0, rank 0 of 1). */
  default Flux<T> flux() {
    return flux(PipelineContext.defaults());
  }
}
