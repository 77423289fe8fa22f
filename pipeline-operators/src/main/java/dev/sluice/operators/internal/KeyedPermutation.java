package dev.sluice.operators.internal;

import dev.sluice.core.internal.Mix;
import java.util.SplittableRandom;

/**
 * A keyed bijection of {@code [0, n)} in O(1) memory: an unbalanced Feistel network over the
 * smallest power of two {@code >= n} (at least 4), restricted to {@code [0, n)} by cycle walking.
 *
 * <p>Each round maps {@code (L, R)} (widths {@code a}, {@code b} bits) to
 * {@code (R, L xor F_i(R))} (widths {@code b}, {@code a}), a bijection of {@code a + b}-bit values;
 * their composition is a bijection {@code E} of {@code [0, 2^bits)}. Cycle walking
 * ({@code y = E(x)} until {@code y < n}) turns it into a bijection of {@code [0, n)}; since the
 * domain is less than twice {@code n}, a lookup costs fewer than two passes on average.
 *
 * <p>The round functions are simple tabulation hashes: the input half is cut into 12-bit
 * characters and {@code F_i(R)} is the xor of one random table entry per character. Up to
 * 2^24 rows (halves of at most 12 bits) that is one lookup in a table of random values, i.e. a truly
 * random round function (the Luby–Rackoff setting), at the cost of one table lookup per character
 * and round. The tables derive from
 * (seed, epoch, salt) only, so every rank computes the same permutation; they are built once per
 * pass (at most 6 × 3 tables of 4,096 ints).
 *
 * <p>Domains under 2^16 use 24 rounds instead of 6: with halves of a few bits, 6 rounds leave the
 * position histograms measurably non-uniform (a chi-square test at level 0.001 rejects n = 5..7).
 */
public final class KeyedPermutation {
  /** Rounds of the network on domains of 2^16 and more. */
  static final int ROUNDS = 6;
  /** Rounds on small domains, whose few-bit halves need more mixing to be uniform. */
  static final int SMALL_DOMAIN_ROUNDS = 24;
  /** Bits per tabulation character. */
  static final int CHAR_BITS = 12;

  private final long n;
  private final int highBits;
  private final int lowBits;
  /** {@code tables[i][c]}: round {@code i}'s random values for character {@code c} of its input. */
  private final int[][][] tables;
  /** True when every round input is one character (domains up to 2^24). */
  private final boolean singleChar;

  private KeyedPermutation(long n, long seed, long epoch, long salt) {
    this.n = n;
    int bits = n <= 4 ? 2 : 64 - Long.numberOfLeadingZeros(n - 1);
    this.highBits = bits / 2;
    this.lowBits = bits - highBits;
    int rounds = bits < 16 ? SMALL_DOMAIN_ROUNDS : ROUNDS;
    this.tables = new int[rounds][][];
    SplittableRandom random = new SplittableRandom(Mix.seed(seed, epoch, salt));
    for (int i = 0; i < rounds; i++) {
      int in = i % 2 == 0 ? lowBits : highBits; // the half R that round i reads
      int chars = (in + CHAR_BITS - 1) / CHAR_BITS;
      tables[i] = new int[chars][];
      for (int c = 0; c < chars; c++) {
        int width = Math.min(CHAR_BITS, in - c * CHAR_BITS);
        int[] t = new int[1 << width];
        for (int j = 0; j < t.length; j++) {
          t[j] = random.nextInt();
        }
        tables[i][c] = t;
      }
    }
    this.singleChar = lowBits <= CHAR_BITS;
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

  /**
   * Replaces each of {@code buf[0..count)}, in {@code [0, n)}, by its image. One straight pass of
   * the network over every value first (independent values, so the CPU overlaps their rounds),
   * then the few cycle walks.
   */
  public void applyInPlace(long[] buf, int count) {
    if (n <= 1) {
      return;
    }
    if (singleChar && tables.length == ROUNDS) {
      for (int i = 0; i < count; i++) {
        buf[i] = encrypt6(buf[i]);
      }
      for (int i = 0; i < count; i++) {
        long y = buf[i];
        while (y >= n) {
          y = encrypt6(y);
        }
        buf[i] = y;
      }
      return;
    }
    for (int i = 0; i < count; i++) {
      buf[i] = encrypt(buf[i]);
    }
    for (int i = 0; i < count; i++) {
      long y = buf[i];
      while (y >= n) {
        y = encrypt(y);
      }
      buf[i] = y;
    }
  }

  /** Round {@code i}'s function of the half {@code right}. */
  private long round(int i, long right) {
    int[][] t = tables[i];
    long f = 0;
    for (int c = 0; c < t.length; c++) {
      f ^= t[c][(int) (right >>> (c * CHAR_BITS)) & (t[c].length - 1)];
    }
    return f;
  }

  private long encrypt(long y) {
    int a = highBits;
    int b = lowBits;
    for (int i = 0; i < tables.length; i++) {
      long left = y >>> b;
      long right = y & ((1L << b) - 1);
      long newLow = (left ^ round(i, right)) & ((1L << a) - 1);
      y = (right << a) | newLow;
      int t = a;
      a = b;
      b = t;
    }
    return y;
  }

  /** {@link #encrypt} unrolled for {@link #ROUNDS} = 6 rounds of one character each. */
  private long encrypt6(long y) {
    int a = highBits;
    int b = lowBits;
    long ma = (1L << a) - 1;
    long mb = (1L << b) - 1;
    int[] t0 = tables[0][0];
    int[] t1 = tables[1][0];
    int[] t2 = tables[2][0];
    int[] t3 = tables[3][0];
    int[] t4 = tables[4][0];
    int[] t5 = tables[5][0];
    y = ((y & mb) << a) | (((y >>> b) ^ t0[(int) (y & mb)]) & ma);
    y = ((y & ma) << b) | (((y >>> a) ^ t1[(int) (y & ma)]) & mb);
    y = ((y & mb) << a) | (((y >>> b) ^ t2[(int) (y & mb)]) & ma);
    y = ((y & ma) << b) | (((y >>> a) ^ t3[(int) (y & ma)]) & mb);
    y = ((y & mb) << a) | (((y >>> b) ^ t4[(int) (y & mb)]) & ma);
    y = ((y & ma) << b) | (((y >>> a) ^ t5[(int) (y & ma)]) & mb);
    return y;
  }
}
