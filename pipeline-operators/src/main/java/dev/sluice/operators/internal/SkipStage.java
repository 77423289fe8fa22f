package dev.sluice.operators.internal;

/** Without the first {@code count} elements. */
public record SkipStage(long count) implements Stage {
  @Override
  public String describe() {
    return "skip(" + count + ")";
  }

  @Override
  public <R> R accept(Visitor<R> visitor) {
    return visitor.skip(this);
  }
}
