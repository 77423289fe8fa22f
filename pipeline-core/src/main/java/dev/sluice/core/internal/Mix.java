package dev.sluice.core.internal;

/** Stateless 64-bit mixing (SplitMix64's finalizer) for seeded, order-free randomness. */
public final class Mix {
  private Mix() {}

  public static long mix64(long z) {
    z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
    z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
    return z ^ (z >>> 31);
  }

  /** A seed for (seed, a, b), e.g. (pipeline seed, epoch, index). */
  public static long seed(long seed, long a, long b) {
    return mix64(mix64(mix64(seed) + a) + b);
  }
}
