package dev.sluice.operators.internal;

/**
 * The global shuffle: a keyed permutation of the positions, per (seed, epoch).
 *
 * @param seed the operator's own seed, or null to use the context's
 */
public record ShuffleStage(Long seed) implements Stage {
  @Override
  public String describe() {
    return seed == null ? "shuffle()" : "shuffle(seed=" + seed + ")";
  }

  @Override
  public <R> R accept(Visitor<R> visitor) {
    return visitor.shuffle(this);
  }
}
