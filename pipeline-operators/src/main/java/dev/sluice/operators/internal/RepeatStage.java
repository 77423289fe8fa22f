package dev.sluice.operators.internal;

/** {@code count} passes of everything before it (-1: forever), the epoch advancing by one each pass. */
public record RepeatStage(long count) implements Stage {
  @Override
  public String describe() {
    return count < 0 ? "repeat()" : "repeat(" + count + ")";
  }

  @Override
  public <R> R accept(Visitor<R> visitor) {
    return visitor.repeat(this);
  }
}
