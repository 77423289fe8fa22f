package dev.sluice.operators.internal;

/** At most the first {@code count} elements. */
public record TakeStage(long count) implements Stage {
  @Override
  public String describe() {
    return "take(" + count + ")";
  }

  @Override
  public <R> R accept(Visitor<R> visitor) {
    return visitor.take(this);
  }
}
