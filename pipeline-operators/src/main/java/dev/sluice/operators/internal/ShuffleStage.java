package dev.sluice.operators.internal;

import dev.sluice.operators.SplitShuffle;

/**
 * The global shuffle: a keyed permutation of the positions, per (seed, epoch); on a split source,
 * the order of {@code splits}.
 *
 * @param seed the operator's own seed, or null to use the context's
 * @param splits how a split source's rows are ordered (not null)
 */
public record ShuffleStage(Long seed, SplitShuffle splits) implements Stage {
  /** Checks the arguments. */
  public ShuffleStage {
    java.util.Objects.requireNonNull(splits, "splits");
  }

  /** The default shuffle: blocks on a split source. */
  public ShuffleStage(Long seed) {
    this(seed, SplitShuffle.BLOCKS);
  }

  @Override
  public String describe() {
    String order = splits == SplitShuffle.BLOCKS ? "" : "splits=" + splits;
    if (seed == null) {
      return "shuffle(" + order + ")";
    }
    return "shuffle(seed=" + seed + (order.isEmpty() ? "" : ", " + order) + ")";
  }

  @Override
  public <R> R accept(Visitor<R> visitor) {
    return visitor.shuffle(this);
  }
}
