package dev.sluice.operators;

/**
 * Pearson's test of a position table: {@code table[i][p]} counts how often item {@code i} landed at
 * position {@code p} over {@code trials} random permutations of {@code n} items. Under a uniform
 * permutation every cell expects {@code trials / n}; the table is a sum of permutation matrices, so
 * its row and column sums are fixed and the statistic has mean {@code n(n-1)}: scaled by
 * {@code (n-1)/n} it is chi-square with {@code (n-1)²} degrees of freedom.
 */
final class PermutationStats {
  private PermutationStats() {}

  /** The scaled statistic of {@code table} ({@code n × n}, each row summing to {@code trials}). */
  static double scaledChiSquare(long[][] table, long trials) {
    int n = table.length;
    double expected = (double) trials / n;
    double chi2 = 0;
    for (long[] row : table) {
      for (long c : row) {
        chi2 += (c - expected) * (c - expected) / expected;
      }
    }
    return chi2 * (n - 1.0) / n;
  }

  /** The 0.999 quantile of chi-square with {@code df} degrees of freedom (Wilson–Hilferty). */
  static double critical0001(int df) {
    double z = 3.090232; // standard normal 0.999 quantile
    double h = 2.0 / (9 * df);
    return df * Math.pow(1 - h + z * Math.sqrt(h), 3);
  }
}
