package dev.sluice.operators.internal;

import dev.sluice.operators.RandomAccessShuffle;
import dev.sluice.operators.SplitShuffle;

/**
 * The global shuffle: on a random-access source a keyed permutation of the positions per (seed,
 * epoch), or its block shuffle ({@code random}); on a split source, the order of {@code splits}.
 *
 * @param seed the operator's own seed, or null to use the context's
 * @param splits how a split source's rows are ordered (not null)
 * @param random how a random-access source's rows are ordered (not null)
 */
public record ShuffleStage(Long seed, SplitShuffle splits, RandomAccessShuffle random) implements Stage {
  /** Checks the arguments. */
  public ShuffleStage {
    java.util.Objects.requireNonNull(splits, "splits");
    java.util.Objects.requireNonNull(random, "random");
  }

  /** A shuffle whose random-access order is chosen by size ({@link RandomAccessShuffle#AUTO}). */
  public ShuffleStage(Long seed, SplitShuffle splits) {
    this(seed, splits, RandomAccessShuffle.AUTO);
  }

  /** The default shuffle: blocks on a split source, chosen by size on a random-access source. */
  public ShuffleStage(Long seed) {
    this(seed, SplitShuffle.BLOCKS);
  }

  @Override
  public String describe() {
    java.util.List<String> args = new java.util.ArrayList<>();
    if (seed != null) {
      args.add("seed=" + seed);
    }
    if (splits != SplitShuffle.BLOCKS) {
      args.add("splits=" + splits);
    }
    if (random != RandomAccessShuffle.AUTO) {
      args.add(random.name().toLowerCase(java.util.Locale.ROOT));
    }
    return "shuffle(" + String.join(", ", args) + ")";
  }

  @Override
  public <R> R accept(Visitor<R> visitor) {
    return visitor.shuffle(this);
  }
}
