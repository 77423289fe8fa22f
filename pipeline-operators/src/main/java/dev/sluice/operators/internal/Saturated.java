package dev.sluice.operators.internal;

/** Saturating arithmetic on element counts: a result past {@code Long.MAX_VALUE} is {@code Long.MAX_VALUE}. */
final class Saturated {
  private Saturated() {}

  static long add(long a, long b) {
    long r = a + b;
    return ((a ^ r) & (b ^ r)) < 0 ? Long.MAX_VALUE : r;
  }

  static long multiply(long a, long b) {
    long hi = Math.multiplyHigh(a, b);
    long lo = a * b;
    return (hi == 0 && lo >= 0) ? lo : Long.MAX_VALUE;
  }
}
