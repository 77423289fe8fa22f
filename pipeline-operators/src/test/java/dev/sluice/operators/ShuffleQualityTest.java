package dev.sluice.operators;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.core.Batch;
import dev.sluice.core.Datasets;
import dev.sluice.core.Example;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.testing.NoLeaks;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.OptionalDouble;
import java.util.SplittableRandom;
import java.util.stream.LongStream;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

@ExtendWith(NoLeaks.class)
class ShuffleQualityTest {
  private static final double EPS = 1e-12;

  private static long[] identity(int n) {
    return LongStream.range(0, n).toArray();
  }

  private static long[] permutation(int n, long seed) {
    long[] a = identity(n);
    SplittableRandom r = new SplittableRandom(seed);
    for (int i = n - 1; i > 0; i--) {
      int j = r.nextInt(i + 1);
      long t = a[i];
      a[i] = a[j];
      a[j] = t;
    }
    return a;
  }

  private static double spearman(long[] rows) {
    return ShuffleQuality.of(List.of(rows)).epochs().get(0).spearman().orElseThrow();
  }

  private static double jaccard(long[] first, long[] second) {
    return ShuffleQuality.of(List.of(first, second)).epochs().get(1).jaccard().orElseThrow();
  }

  @Test
  void fileOrderCorrelatesOneAndReverseOrderMinusOne() {
    assertEquals(1.0, spearman(identity(1000)), EPS);
    long[] reversed = LongStream.range(0, 1000).map(i -> 999 - i).toArray();
    assertEquals(-1.0, spearman(reversed), EPS);
    // only the order of the row indices counts, not their values
    assertEquals(1.0, spearman(new long[] {3, 70, 71, 9_000_000_000L}), EPS);
  }

  @Test
  void aSeededRandomPermutationHardlyCorrelates() {
    int n = 10_000;
    for (long seed = 1; seed <= 5; seed++) {
      double rho = spearman(permutation(n, seed));
      // the standard deviation of rho under a uniform permutation is 1 / sqrt(n - 1)
      assertTrue(Math.abs(rho) < 4 / Math.sqrt(n - 1), "seed " + seed + ": rho " + rho);
    }
  }

  @Test
  void jaccardComparesConsecutiveEpochsAsSets() {
    assertEquals(1.0, jaccard(identity(100), permutation(100, 7)), EPS); // same set, other order
    assertEquals(0.0, jaccard(identity(50), LongStream.range(50, 100).toArray()), EPS); // disjoint
    assertEquals(5.0 / 15, jaccard(identity(10), LongStream.range(5, 15).toArray()), EPS);
    // repeats do not count twice
    assertEquals(1.0, jaccard(new long[] {1, 2, 2, 3}, new long[] {3, 3, 1, 2}), EPS);

    ShuffleQuality q = ShuffleQuality.of(List.of(identity(10), identity(10), LongStream.range(10, 20).toArray()));
    assertFalse(q.epochs().get(0).jaccard().isPresent(), "the first epoch has no previous one");
    assertEquals(List.of(OptionalDouble.empty(), OptionalDouble.of(1.0), OptionalDouble.of(0.0)),
        q.epochs().stream().map(ShuffleQuality.Epoch::jaccard).toList());
    assertEquals(1.0, q.maxJaccard().orElseThrow(), EPS);
    assertEquals(List.of(0L, 1L, 2L), q.epochs().stream().map(ShuffleQuality.Epoch::epoch).toList());
  }

  @Test
  void freshRandomQuartersEveryEpochScoreAboutOneSeventh() {
    int n = 40_000;
    int k = 4;
    ShuffleQuality.Builder b = ShuffleQuality.builder();
    for (long epoch = 0; epoch < 4; epoch++) {
      b.epoch(Arrays.copyOf(permutation(n, 100 + epoch), n / k));
    }
    ShuffleQuality q = b.build();
    double expected = ShuffleQuality.randomSubsetJaccard(1.0 / k);
    assertEquals(1.0 / (2 * k - 1), expected, EPS);
    for (ShuffleQuality.Epoch e : q.epochs().subList(1, 4)) {
      assertEquals(expected, e.jaccard().orElseThrow(), 0.01, "epoch " + e.epoch());
    }
    assertTrue(q.maxAbsSpearman().orElseThrow() < 0.05, q.toString());
  }

  @Test
  void paddedRowsAreTiesWithTheAverageRankOfTheirCopies() {
    // positions 1..4 against average ranks 1.5, 1.5, 3.5, 3.5: cov 4, var 5 and 4
    ShuffleQuality.Epoch e = ShuffleQuality.of(List.<long[]>of(new long[] {0, 0, 1, 1})).epochs().get(0);
    assertEquals(4 / Math.sqrt(20), e.spearman().orElseThrow(), EPS);
    assertEquals(4, e.rows());
    assertEquals(2, e.distinctRows());
    // every row once, then the first again (a pad wrapping to the start): still one row set
    ShuffleQuality.Epoch padded = ShuffleQuality.of(List.<long[]>of(new long[] {4, 1, 3, 0, 2, 4})).epochs().get(0);
    assertEquals(6, padded.rows());
    assertEquals(5, padded.distinctRows());
  }

  @Property(tries = 200, seed = "42")
  void spearmanIsPearsonOfAverageRanks(@ForAll @Size(min = 2, max = 40) List<@IntRange(min = 0, max = 9) Integer> values) {
    long[] rows = values.stream().mapToLong(Integer::longValue).toArray();
    OptionalDouble rho = ShuffleQuality.of(List.of(rows)).epochs().get(0).spearman();
    double[] ranks = new double[rows.length];
    for (int i = 0; i < rows.length; i++) { // quadratic reference: 1 + (rows below) + (other equal rows) / 2
      int below = 0;
      int equal = 0;
      for (long r : rows) {
        below += r < rows[i] ? 1 : 0;
        equal += r == rows[i] ? 1 : 0;
      }
      ranks[i] = 1 + below + (equal - 1) / 2.0;
    }
    double[] positions = new double[rows.length];
    Arrays.setAll(positions, i -> i + 1);
    double expected = pearson(positions, ranks);
    if (Double.isNaN(expected)) {
      assertFalse(rho.isPresent(), "all rows equal: no correlation");
    } else {
      assertEquals(expected, rho.orElseThrow(), 1e-9);
    }
  }

  private static double pearson(double[] x, double[] y) {
    double mx = Arrays.stream(x).average().orElseThrow();
    double my = Arrays.stream(y).average().orElseThrow();
    double sxy = 0;
    double sxx = 0;
    double syy = 0;
    for (int i = 0; i < x.length; i++) {
      sxy += (x[i] - mx) * (y[i] - my);
      sxx += (x[i] - mx) * (x[i] - mx);
      syy += (y[i] - my) * (y[i] - my);
    }
    return syy == 0 ? Double.NaN : sxy / Math.sqrt(sxx * syy);
  }

  @Test
  void degenerateEpochsHaveNoCorrelation() {
    ShuffleQuality q = ShuffleQuality.of(List.of(new long[0], new long[] {5, 5, 5}, new long[] {7}));
    assertFalse(q.maxAbsSpearman().isPresent());
    assertFalse(q.epochs().get(1).spearman().isPresent());
    assertEquals(0.0, q.epochs().get(1).jaccard().orElseThrow(), EPS); // empty then {5}
    assertEquals(0.0, q.epochs().get(2).jaccard().orElseThrow(), EPS);
    assertFalse(ShuffleQuality.of(List.of(new long[0], new long[0])).maxJaccard().isPresent());
    assertFalse(ShuffleQuality.of(List.of()).maxJaccard().isPresent());
  }

  @Test
  void theBuilderTakesRowsOneAtATimeAndKeepsEmptyEpochs() {
    ShuffleQuality.Builder b = ShuffleQuality.builder(3);
    for (long i = 0; i < 10; i++) {
      b.row(i);
    }
    b.endEpoch().endEpoch(); // epoch 4 delivered nothing
    for (long i = 9; i >= 0; i--) {
      b.row(i);
    }
    ShuffleQuality q = b.build(); // ends epoch 5
    assertEquals(List.of(3L, 4L, 5L), q.epochs().stream().map(ShuffleQuality.Epoch::epoch).toList());
    assertEquals(List.of(10L, 0L, 10L), q.epochs().stream().map(ShuffleQuality.Epoch::rows).toList());
    assertEquals(-1.0, q.epochs().get(2).spearman().orElseThrow(), EPS);
    assertEquals(1.0, q.maxAbsSpearman().orElseThrow(), EPS);
    assertThrows(IllegalStateException.class, () -> ShuffleQuality.builder().row(1).epoch(new long[] {2}));
    assertThrows(IllegalArgumentException.class, () -> ShuffleQuality.builder(-1));
    assertThrows(IllegalArgumentException.class, () -> ShuffleQuality.randomSubsetJaccard(1.5));
  }

  @Test
  void aMillionRowsPerEpochAreMeasuredInSortTime() {
    int n = 1_000_000;
    long[] first = permutation(n, 1);
    long[] second = permutation(n, 2);
    ShuffleQuality q = assertTimeoutPreemptively(Duration.ofSeconds(30), () -> ShuffleQuality.of(List.of(first, second)));
    assertEquals(1.0, q.maxJaccard().orElseThrow(), EPS);
    assertTrue(q.maxAbsSpearman().orElseThrow() < 0.01, q.toString());
  }

  @Test
  void measuresWhatAPipelineDeliversToOneRank() {
    int n = 20_000;
    PipelineContext ctx = PipelineContext.defaults().withSeed(9).withRank(0, 4);
    Pipeline<Batch> shuffled = Pipeline.from(Datasets.range(n)).shuffle().shard(4, 0).batch(64);
    ShuffleQuality q = ShuffleQuality.measure(shuffled, ctx, 3);
    assertEquals(3, q.epochs().size());
    for (ShuffleQuality.Epoch e : q.epochs()) {
      assertEquals(n / 4, e.rows());
      assertEquals(n / 4, e.distinctRows());
    }
    assertEquals(ShuffleQuality.randomSubsetJaccard(0.25), q.maxJaccard().orElseThrow(), 0.03);
    assertTrue(q.maxAbsSpearman().orElseThrow() < 0.06, q.toString());

    // the same rows as examples on the element path: the same report
    Pipeline<Example> elements = Pipeline.from(TestSources.streaming(Datasets.range(n))).shard(4, 0);
    ShuffleQuality inOrder = ShuffleQuality.measure(elements, ctx, 2);
    assertEquals(1.0, inOrder.maxJaccard().orElseThrow(), EPS);
    assertEquals(1.0, inOrder.maxAbsSpearman().orElseThrow(), EPS);
    assertEquals(inOrder.epochs(), ShuffleQuality.measure(Pipeline.from(Datasets.range(n)).shard(4, 0).batch(7), ctx, 2)
        .epochs());
  }

  @Test
  void refusesElementsWithoutARowIndex() {
    Pipeline<String> strings = Pipeline.from(Datasets.range(3)).map(e -> "row " + e.index());
    RuntimeException e = assertThrows(RuntimeException.class,
        () -> ShuffleQuality.measure(strings, PipelineContext.defaults(), 1));
    Throwable cause = e;
    while (!(cause instanceof IllegalArgumentException) && cause.getCause() != null) {
      cause = cause.getCause();
    }
    assertTrue(cause.getMessage().contains("Batch or Example"), cause.getMessage());
  }
}
