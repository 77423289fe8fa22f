package dev.sluice.operators;

/**
 * What {@link Pipeline#shard(int, int, EqualLength) shard} does when the number of elements
 * {@code n} is not a multiple of the number of shards {@code k}.
 *
 * <p>Distributed training needs every rank to run the same number of steps, or the ranks that
 * finish early wait forever in the next collective; evaluation needs every element exactly once.
 */
public enum EqualLength {
  /**
   * Every rank gets {@code ceil(n / k)} elements; the missing positions wrap around to the start
   * of the (shuffled) order, as PyTorch's {@code DistributedSampler(drop_last=False)}. Every element
   * is covered, a few appear twice. The default.
   */
  PAD,
  /**
   * Every rank gets {@code floor(n / k)} elements; the last {@code n mod k} positions are dropped,
   * as {@code DistributedSampler(drop_last=True)}. Ranks are disjoint.
   */
  DROP,
  /**
   * An exact partition: rank {@code i} gets the positions {@code p} with {@code p mod k == i}, so
   * the first {@code n mod k} ranks get one element more. Every element exactly once: for
   * evaluation, not for training loops that need equal step counts.
   */
  UNEVEN;

  /** The number of elements rank {@code index} of {@code numShards} gets out of {@code n}. */
  public long count(long n, int numShards, int index) {
    switch (this) {
      case PAD:
        return n == 0 ? 0 : (n + numShards - 1) / numShards;
      case DROP:
        return n / numShards;
      default:
        return n <= index ? 0 : (n - index + numShards - 1) / numShards;
    }
  }
}
