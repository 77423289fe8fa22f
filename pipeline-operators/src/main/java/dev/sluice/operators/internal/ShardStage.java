package dev.sluice.operators.internal;

import dev.sluice.operators.EqualLength;

/** Element-wise shard: positions {@code p} with {@code p mod numShards == index}. */
public record ShardStage(int numShards, int index, EqualLength policy) implements Stage {
  /** The policy only: the shard's count and index are the state's {@code shards} and {@code shard}. */
  @Override
  public String shapeKey() {
    return "shard(" + policy + ")";
  }

  @Override
  public String describe() {
    return "shard(" + numShards + ", " + index + ", " + policy + ")";
  }

  @Override
  public <R> R accept(Visitor<R> visitor) {
    return visitor.shard(this);
  }
}
