package dev.sluice.operators.internal;

import dev.sluice.core.internal.Mix;

/**
 * A keyed bijection of {@code [0, n)} in O(1) memory: an unbalanced Feistel network over the
 * smallest power of two {@code >= n} (at least 4), restricted to {@code [0, n)} by cycle walking.
 *
 * <p>Each round maps {@code (L, R)} (widths {@code a}, {@code b} bits) to
 * {@code (R, L xor F_i(R))} (widths {@code b}, {@code a}), a bijection of {@code a + b}-bit values;
 * their composition is a bijection {@code E} of {@code [0, 2^bits)}. Cycle walking
 * ({@code y = E(x)} until {@code y < n}) turns it into a bijection of {@code [0, n)}; since the
 * domain is less than twice {@code n}, a lookup costs fewer than two passes on average. The round
 * keys derive from (seed, epoch, salt) only, so every rank computes the same permutation.
 */
public final class KeyedPermutation {
  /** Rounds of the network; 6 keeps the position histograms uniform even on 2-bit domains. */
  static final int ROUNDS = 6;

  private final long n;
  private final int highBits;
  private final int lowBits;
  private final long[] keys = new long[ROUNDS];

  private KeyedPermutation(long n, long seed, long epoch, long salt) {
    this.n = n;
    int bits = n <= 4 ? 2 : 64 - Long.numberOfLeadingZeros(n - 1);
    this.highBits = bits / 2;
    this.lowBits = bits - highBits;
    long k = Mix.seed(seed, epoch, salt);
    for (int i = 0; i < ROUNDS; i++) {
      k = Mix.mix64(k + 0x9E3779B97F4A7C15L);
      keys[i] = k;
    }
  }

  /**
   * The permutation of {@code [0, n)} for (seed, epoch, salt).
   *
   * @param n the domain size, {@code >= 0}
   * @param salt distinguishes several shuffles of one pipeline
   */
  public static KeyedPermutation of(long n, long seed, long epoch, long salt) {
    if (n < 0) {
      throw new IllegalArgumentException("n >= 0 required but it was " + n);
    }
    return new KeyedPermutation(n, seed, epoch, salt);
  }

  public long size() {
    return n;
  }

  /** The image of {@code x}, for {@code x} in {@code [0, n)}. */
  public long apply(long x) {
    if (n <= 1) {
      return x;
    }
    long y = x;
    do {
      y = encrypt(y);
    } while (y >= n);
    return y;
  }

  private long encrypt(long y) {
    int a = highBits;
    int b = lowBits;
    for (int i = 0; i < ROUNDS; i++) {
      long left = y >>> b;
      long right = y & ((1L << b) - 1);
      long f = Mix.mix64(right + keys[i]);
      long newLow = (left ^ f) & ((1L << a) - 1);
      y = (right << a) | newLow;
      int t = a;
      a = b;
      b = t;
    }
    return y;
  }
}
