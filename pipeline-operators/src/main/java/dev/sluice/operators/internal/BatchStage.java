package dev.sluice.operators.internal;

/** Consecutive elements collated into batches of {@code batchSize} rows. */
public record BatchStage(int batchSize, boolean dropRemainder, int numParallelCalls) implements Stage {
  /** Without the parallelism, which does not change the batches. */
  @Override
  public String shapeKey() {
    return "batch(" + batchSize + ", " + dropRemainder + ")";
  }

  @Override
  public String describe() {
    return "batch(" + batchSize + ", " + dropRemainder + ", " + numParallelCalls + ")";
  }

  @Override
  public int workers() {
    return Stage.workersOf(numParallelCalls);
  }

  @Override
  public <R> R accept(Visitor<R> visitor) {
    return visitor.batch(this);
  }
}
