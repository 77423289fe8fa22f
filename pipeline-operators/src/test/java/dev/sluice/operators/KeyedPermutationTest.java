package dev.sluice.operators;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.operators.internal.KeyedPermutation;
import java.util.BitSet;
import org.junit.jupiter.api.Test;

class KeyedPermutationTest {

  @Test
  void isABijectionForEverySmallSize() {
    for (long n = 0; n <= 600; n++) {
      for (long seed = 0; seed < 3; seed++) {
        KeyedPermutation p = KeyedPermutation.of(n, seed, n, 0);
        BitSet seen = new BitSet();
        for (long x = 0; x < n; x++) {
          long y = p.apply(x);
          assertTrue(y >= 0 && y < n, "n=" + n + ": " + x + " -> " + y);
          assertTrue(!seen.get((int) y), "n=" + n + ": " + y + " twice");
          seen.set((int) y);
        }
        assertEquals(n, seen.cardinality());
      }
    }
  }

  @Test
  void bulkApplyEqualsApplyOnLargeAndSmallDomains() {
    for (long n : new long[] {2, 5, 1000, 65_535, 65_536, 65_537, 2_000_000, 1L << 40}) {
      KeyedPermutation p = KeyedPermutation.of(n, 9, 4, 1);
      long[] buf = new long[300];
      for (int i = 0; i < buf.length; i++) {
        buf[i] = (i * 7919L) % n;
      }
      long[] expected = new long[buf.length];
      for (int i = 0; i < buf.length; i++) {
        expected[i] = p.apply(buf[i]);
      }
      p.applyInPlace(buf, buf.length);
      org.junit.jupiter.api.Assertions.assertArrayEquals(expected, buf, "n=" + n);
    }
  }

  /**
   * Uniformity: over T epochs with a fixed seed, how often index i lands at position j. Under a
   * uniform permutation each of the n×n cells expects T/n. The table is a sum of T random
   * permutation matrices, so its row and column sums are fixed and Pearson's statistic has mean
   * n(n-1), not (n-1)²: scaled by (n-1)/n it is chi-square with (n-1)² degrees of freedom, and must
   * stay below that distribution's 0.999 quantile (significance level α = 0.001; the quantile by the
   * Wilson–Hilferty approximation). The seed is fixed, so the test is deterministic.
   */
  @Test
  void positionHistogramsPassAChiSquareTestAtLevel0001() {
    for (int n : new int[] {3, 5, 10, 17, 33}) {
      int trials = 400 * n;
      long[][] counts = new long[n][n];
      for (int epoch = 0; epoch < trials; epoch++) {
        KeyedPermutation p = KeyedPermutation.of(n, 20261122L, epoch, 0);
        for (int position = 0; position < n; position++) {
          counts[(int) p.apply(position)][position]++;
        }
      }
      double chi2 = PermutationStats.scaledChiSquare(counts, trials);
      int df = (n - 1) * (n - 1);
      double critical = PermutationStats.critical0001(df);
      assertTrue(chi2 < critical, "n=" + n + ": chi-square " + chi2 + " >= " + critical + " (df " + df + ", alpha 0.001)");
    }
  }
}
