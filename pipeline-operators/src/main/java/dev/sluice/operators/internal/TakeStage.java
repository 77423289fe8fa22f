package dev.sluice.operators.internal;

/** At most the first {@code count} elements. */
public record TakeStage(long count) implements Stage {
  @Override
  public String describe() {
    return "take(" + count + ")";
  }
}
