package dev.sluice.operators;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.core.Batch;
import dev.sluice.core.Example;
import dev.sluice.core.MemoryManager;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.Split;
import dev.sluice.operators.internal.ShardStage;
import dev.sluice.operators.internal.SplitPlan;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The block shuffle of split sources: exactly-once per epoch across ranks whatever the layout, and
 * its quality measured (a rank's rows change every epoch; output order uncorrelated with row index).
 */
class BlockShuffleTest {

  /** A split source whose reads may start cheaply only at the given rows of each split (its "pages"). */
  private static final class PagedSplits extends MemorySplits {
    private final long page;

    PagedSplits(long page, long... sizes) {
      super(true, sizes);
      this.page = page;
    }

    @Override
    public long[] blockStarts(Split split) {
      if (page <= 0) {
        return null;
      }
      long n = split.rowCount();
      long[] starts = new long[(int) ((n + page - 1) / page)];
      for (int i = 0; i < starts.length; i++) {
        starts[i] = i * page;
      }
      return starts;
    }
  }

  /** The rows of one rank's pass, from the plan's row ranges. */
  private static List<Long> rows(MemorySplits source, SplitPlan.Order order) {
    List<Long> out = new ArrayList<>();
    Map<Split, Long> base = new HashMap<>();
    for (int i = 0; i < source.splits.size(); i++) {
      base.put(source.splits.get(i), source.offsets.get(i));
    }
    for (SplitPlan.Segment s : SplitPlan.sequence(source, order)) {
      for (long r = s.fromRow(); r < s.toRow(); r++) {
        out.add(base.get(s.split()) + r);
      }
    }
    return out;
  }

  @Test
  void everyRankTakesItsCountsAndTogetherEveryRowOnceUnderUnevenForRandomLayouts() {
    SplittableRandom random = new SplittableRandom(41);
    for (int trial = 0; trial < 400; trial++) {
      int numSplits = 1 + random.nextInt(7);
      long[] sizes = new long[numSplits];
      for (int i = 0; i < numSplits; i++) {
        sizes[i] = switch (random.nextInt(4)) {
          case 0 -> random.nextInt(2);            // empty and one-row splits
          case 1 -> random.nextInt(40);
          default -> random.nextInt(6000);        // many blocks
        };
      }
      int k = 1 + random.nextInt(trial % 7 == 0 ? 40 : 9); // world > splits, world > rows
      long page = random.nextBoolean() ? 0 : 1 + random.nextInt(3000);
      long window = random.nextInt(3) == 0 ? 0 : 1 + random.nextInt(4000);
      long seed = random.nextLong();
      long epoch = random.nextInt(5);
      PagedSplits source = new PagedSplits(page, sizes);
      long n = source.size();
      String what = "sizes " + Arrays.toString(sizes) + " k " + k + " page " + page + " window " + window;
      for (EqualLength policy : EqualLength.values()) {
        Map<Long, Integer> seen = new HashMap<>();
        for (int r = 0; r < k; r++) {
          List<Long> part = rows(source, new SplitPlan.Order(SplitShuffle.BLOCKS, seed, epoch,
              new ShardStage(k, r, policy), window));
          assertEquals(policy.count(n, k, r), part.size(), what + " " + policy + " rank " + r);
          part.forEach(i -> seen.merge(i, 1, Integer::sum));
        }
        switch (policy) {
          case UNEVEN -> {
            assertEquals(n, seen.size(), what + " UNEVEN covers every row");
            assertTrue(seen.values().stream().allMatch(c -> c == 1), what + " UNEVEN: every row once");
          }
          case DROP -> {
            assertTrue(seen.values().stream().allMatch(c -> c == 1), what + " DROP is disjoint");
            assertEquals(k * (n / k), seen.size(), what + " DROP drops only the remainder");
          }
          case PAD -> {
            assertEquals(n, seen.size(), what + " PAD covers every row");
            int extra = seen.values().stream().mapToInt(c -> c - 1).sum();
            assertEquals(n == 0 ? 0 : k * ((n + k - 1) / k) - n, extra, what + " PAD repeats exactly the padding");
          }
        }
      }
    }
  }

  @Test
  void theSequenceIsAFunctionOfSeedEpochAndLayout() {
    PagedSplits source = new PagedSplits(0, 30_000);
    SplitPlan.Order order = new SplitPlan.Order(SplitShuffle.BLOCKS, 5, 2, new ShardStage(4, 1, EqualLength.PAD), 10_000);
    assertEquals(rows(source, order), rows(new PagedSplits(0, 30_000), order));
    assertNotEquals(rows(source, order), rows(source, new SplitPlan.Order(SplitShuffle.BLOCKS, 5, 3,
        new ShardStage(4, 1, EqualLength.PAD), 10_000)));
  }

  @Test
  void blocksStartOnTheSourcesCheapRowsWhenTheyAreCloseEnough() {
    // 1,000,000 rows in one split with 20,000-row pages, one rank: every block is one whole page
    PagedSplits source = new PagedSplits(20_000, 1_000_000);
    List<SplitPlan.Segment> seq = SplitPlan.sequence(source,
        new SplitPlan.Order(SplitShuffle.BLOCKS, 1, 0, null, 10_000));
    assertEquals(50, seq.size());
    seq.forEach(s -> assertTrue(s.fromRow() % 20_000 == 0 && s.rows() == 20_000, s.toString()));
    // 200,000 rows for 4 ranks: pages are cut so that every rank draws at least 64 blocks
    PagedSplits small = new PagedSplits(20_000, 200_000);
    List<SplitPlan.Segment> mine = SplitPlan.sequence(small,
        new SplitPlan.Order(SplitShuffle.BLOCKS, 1, 0, new ShardStage(4, 1, EqualLength.PAD), 0));
    assertTrue(mine.size() >= 64, mine.size() + " blocks");
  }

  /** Spearman's rank correlation of output position and row index, measured by {@link ShuffleQuality}. */
  static double spearman(List<Long> out) {
    return ShuffleQuality.of(List.of(rows(out))).epochs().get(0).spearman().getAsDouble();
  }

  /** The Jaccard similarity of the row sets of two epochs, measured by {@link ShuffleQuality}. */
  static double jaccard(List<Long> a, List<Long> b) {
    return ShuffleQuality.of(List.of(rows(a), rows(b))).epochs().get(1).jaccard().getAsDouble();
  }

  private static long[] rows(List<Long> rows) {
    return rows.stream().mapToLong(Long::longValue).toArray();
  }

  private static List<Long> batchIndices(Pipeline<Batch> p, PipelineContext ctx) {
    List<Long> out = new ArrayList<>();
    p.flux(ctx).doOnNext(b -> {
      for (int i = 0; i < b.size(); i++) {
        out.add(b.index(i));
      }
      b.close();
    }).blockLast();
    return out;
  }

  /**
   * One rank of 4 over 3 epochs on one split, four splits and ten splits of 200,000 rows: a fresh
   * random quarter every epoch (Jaccard of consecutive epochs near 1/7, at most 0.25) and output
   * order uncorrelated with row index (|Spearman| at most 0.05), on the columnar path (window
   * shuffle) and on the element path (buffer shuffle).
   */
  @ParameterizedTest
  @ValueSource(ints = {1, 4, 10})
  void aRanksRowsChangeEveryEpochAndAreWellMixed(int splits) {
    long[] sizes = new long[splits];
    Arrays.fill(sizes, 200_000 / splits);
    MemoryBatchSplits source = MemoryBatchSplits.byColumns(sizes);
    Pipeline<Batch> columnar = Pipeline.from(source).shuffle().shard(4, 1).batch(64);
    Pipeline<Example> element = Pipeline.from(source).shuffle().shard(4, 1);
    PipelineContext ctx = PipelineContext.defaults().withSeed(7);
    List<Long> previousColumnar = null;
    List<Long> previousElement = null;
    for (int epoch = 0; epoch < 3; epoch++) {
      List<Long> c = batchIndices(columnar, ctx.withEpoch(epoch));
      List<Long> e = element.flux(ctx.withEpoch(epoch)).map(Example::index).collectList().block();
      assertEquals(50_000, c.size());
      assertEquals(50_000, e.size());
      assertTrue(Math.abs(spearman(c)) <= 0.05, "columnar epoch " + epoch + " spearman " + spearman(c));
      assertTrue(Math.abs(spearman(e)) <= 0.05, "element epoch " + epoch + " spearman " + spearman(e));
      if (previousColumnar != null) {
        assertTrue(jaccard(previousColumnar, c) <= 0.25, "columnar jaccard " + jaccard(previousColumnar, c));
        assertTrue(jaccard(previousElement, e) <= 0.25, "element jaccard " + jaccard(previousElement, e));
      }
      previousColumnar = c;
      previousElement = e;
    }
    assertEquals(0, source.pool.outstandingBytes());
    assertEquals(0, MemoryManager.shared().pool("batch").outstandingBytes());
  }

  /** The split-order shuffle, asked for by name, keeps its cheaper order: a one-split file gives a rank the same rows. */
  @Test
  void theSplitOrderShuffleStaysAvailableByName() {
    MemoryBatchSplits source = MemoryBatchSplits.byColumns(20_000);
    Pipeline<Batch> p = Pipeline.from(source).shuffle(SplitShuffle.SPLITS).shard(4, 1).batch(64);
    PipelineContext ctx = PipelineContext.defaults().withSeed(7);
    assertEquals(1.0, jaccard(batchIndices(p, ctx), batchIndices(p, ctx.withEpoch(1))));
    assertTrue(p.explain().contains("split order shuffled"), p.explain());
    assertTrue(Pipeline.from(source).shuffle().shard(4, 1).batch(64).explain().contains("blocks of every split"));
  }

  /**
   * A row's output position is uniform: over 600 epochs the position of each of a few rows of a
   * 4,000-row split read through a 512-row window shuffle falls into each tenth of the epoch about
   * equally often (chi-square with 9 degrees of freedom below its 0.1% point, 27.88).
   */
  @Test
  void aRowsOutputPositionIsUniformOverEpochs() {
    MemoryBatchSplits source = MemoryBatchSplits.byColumns(4_000);
    Pipeline<Batch> p = Pipeline.from(source).shuffle().shuffle(512).batch(100);
    assertPositionsUniform(p, 600);
  }

  /**
   * A shuffled epoch over a source whose blocks align to its chunks decodes each chunk exactly once
   * and delivers every row once, with or without a window shuffle after it, and the block order
   * still changes with the epoch.
   */
  @ParameterizedTest
  @ValueSource(ints = {0, 1024, 8192})
  void aShuffledEpochDecodesEachAlignedChunkOnce(int window) {
    ChunkedBatchSplits source = new ChunkedBatchSplits(4096, 12_288, 8_192, 3_000, 4_096);
    Pipeline<Batch> p = window == 0 ? Pipeline.from(source).shuffle().batch(256)
        : Pipeline.from(source).shuffle().shuffle(window).batch(256);
    PipelineContext ctx = PipelineContext.defaults().withSeed(11);
    List<Long> previous = null;
    for (int epoch = 0; epoch < 3; epoch++) {
      source.decodes.clear();
      List<Long> out = batchIndices(p, ctx.withEpoch(epoch));
      assertEquals(source.size(), out.size());
      assertEquals(source.size(), new java.util.HashSet<>(out).size(), "every row once");
      assertEquals(source.chunks(), source.decodes.size(), "every chunk read: " + source.decodes);
      for (Map.Entry<String, Integer> e : source.decodes.entrySet()) {
        assertEquals(1, e.getValue(), "chunk " + e.getKey() + " decoded once in epoch " + epoch);
      }
      if (previous != null) {
        assertNotEquals(previous, out, "the order changes with the epoch");
      }
      previous = out;
    }
    assertEquals(0, source.pool.outstandingBytes());
    assertEquals(0, MemoryManager.shared().pool("batch").outstandingBytes());
  }

  /** Aligned blocks hold whole chunks, at least one, and the same plan comes out for the same (seed, epoch). */
  @Test
  void alignedBlocksHoldWholeChunksAndAreDeterministic() {
    ChunkedBatchSplits source = new ChunkedBatchSplits(300, 1_000_000, 650);
    SplitPlan.Order order = new SplitPlan.Order(SplitShuffle.BLOCKS, 5, 2, null, 0);
    List<SplitPlan.Segment> plan = SplitPlan.sequence(source, order);
    assertEquals(plan, SplitPlan.sequence(source, order));
    long rows = 0;
    for (SplitPlan.Segment s : plan) {
      assertEquals(0, s.fromRow() % 300, s.toString());
      assertTrue(s.toRow() == s.split().rowCount() || s.toRow() % 300 == 0, s.toString());
      rows += s.rows();
    }
    assertEquals(source.size(), rows);
    assertTrue(plan.size() >= 64, "blocks of the target size, not whole splits: " + plan.size());
  }

  /**
   * At the default settings ({@code shuffle()} and its window), a source whose blocks align to
   * chunks of 1,024 to 16,384 rows (200,000 rows, splits of whole chunks) is mixed as well as the
   * other split sources: over 3 epochs, for one rank of 4 and for a single rank, output order is
   * uncorrelated with row index (|Spearman| at most 0.05), each rank reads its part's rows once and
   * each chunk once per epoch, and where a rank draws many chunks (1,024-row chunks: about 49) its
   * epochs overlap as random quarters do (Jaccard at most 0.25). Nothing stays outstanding.
   */
  @ParameterizedTest
  @ValueSource(ints = {1024, 4096, 16384})
  void anAlignedSourceAtDefaultSettingsIsWellMixedAndReadsEachChunkOncePerEpoch(int chunk) {
    ChunkedBatchSplits source = ChunkedBatchSplits.of(chunk, Math.max(1, 8192 / chunk), 200_000);
    PipelineContext ctx = PipelineContext.defaults().withSeed(7);
    for (int world : new int[] {1, 4}) {
      Pipeline<Batch> p = Pipeline.from(source).shuffle().shard(world, 1 % world).batch(64);
      List<Long> previous = null;
      for (int epoch = 0; epoch < 3; epoch++) {
        source.decodes.clear();
        List<Long> out = batchIndices(p, ctx.withEpoch(epoch));
        String what = "chunk " + chunk + ", world " + world + ", epoch " + epoch;
        assertEquals(EqualLength.PAD.count(source.size(), world, 1 % world), out.size(), what);
        assertEquals(out.size(), new java.util.HashSet<>(out).size(), what + ": every row once");
        for (Map.Entry<String, Integer> e : source.decodes.entrySet()) {
          assertEquals(1, e.getValue(), what + ": chunk " + e.getKey() + " read once");
        }
        if (world == 1) {
          assertEquals(source.chunks(), source.decodes.size(), what + ": every chunk read");
        }
        assertTrue(Math.abs(spearman(out)) <= 0.05, what + ": spearman " + spearman(out));
        if (previous != null && world == 4 && chunk == 1024) {
          assertTrue(jaccard(previous, out) <= 0.25, what + ": jaccard " + jaccard(previous, out));
        }
        previous = out;
      }
    }
    assertEquals(0, source.pool.outstandingBytes());
    assertEquals(0, MemoryManager.shared().pool("batch").outstandingBytes());
  }

  /**
   * Over an aligned source a row's output position is uniform too: over 400 epochs of 4,000 rows in
   * 512-row chunks, each watched row falls into each tenth of the epoch about equally often
   * (chi-square with 9 degrees of freedom below its 0.1% point, 27.88).
   */
  @Test
  void anAlignedRowsOutputPositionIsUniformOverEpochs() {
    ChunkedBatchSplits source = ChunkedBatchSplits.of(512, 2, 4_000);
    Pipeline<Batch> p = Pipeline.from(source).shuffle().batch(100);
    assertPositionsUniform(p, 400);
  }

  /**
   * Asserts that over {@code epochs} epochs (seed 3) of {@code p}, whose passes hold the rows
   * 0..3,999, each of a few watched rows falls into each tenth of the epoch about equally often:
   * chi-square with 9 degrees of freedom below its 0.1% point, 27.88.
   */
  private static void assertPositionsUniform(Pipeline<Batch> p, int epochs) {
    long[] watched = {0, 1_999, 3_999, 1_234};
    int[][] counts = new int[watched.length][10];
    PipelineContext ctx = PipelineContext.defaults().withSeed(3);
    for (int epoch = 0; epoch < epochs; epoch++) {
      List<Long> out = batchIndices(p, ctx.withEpoch(epoch));
      for (int w = 0; w < watched.length; w++) {
        counts[w][out.indexOf(watched[w]) * 10 / out.size()]++;
      }
    }
    for (int w = 0; w < watched.length; w++) {
      double chi = 0;
      double expected = epochs / 10.0;
      for (int c : counts[w]) {
        chi += (c - expected) * (c - expected) / expected;
      }
      assertTrue(chi < 27.88, "row " + watched[w] + ": " + Arrays.toString(counts[w]) + " chi-square " + chi);
    }
  }

  /**
   * A rank's aligned blocks are paired first with last around the middle of its rows: whole blocks
   * (none cut), the same ones as before pairing, and every pair of consecutive blocks in the
   * sequence balances around the middle when the blocks are of one size.
   */
  @Test
  void alignedBlocksArePairedAroundTheMiddleOfTheRanksRows() {
    ChunkedBatchSplits source = ChunkedBatchSplits.of(1000, 1, 40_000);
    SplitPlan.Order order = new SplitPlan.Order(SplitShuffle.BLOCKS, 9, 1, null, 10_000);
    List<SplitPlan.Segment> plan = SplitPlan.sequence(source, order);
    assertEquals(40, plan.size());
    java.util.Set<String> seen = new java.util.HashSet<>();
    for (int i = 0; i < plan.size(); i += 2) {
      SplitPlan.Segment a = plan.get(i);
      SplitPlan.Segment b = plan.get(i + 1);
      assertEquals(1000, a.rows());
      assertEquals(1000, b.rows());
      long ai = source.splits.indexOf(a.split());
      long bi = source.splits.indexOf(b.split());
      assertEquals(39, ai + bi, "block " + ai + " is paired with its mirror, not " + bi);
      seen.add(a.split().id());
      seen.add(b.split().id());
    }
    assertEquals(40, seen.size());
    assertNotEquals(plan, SplitPlan.sequence(source, new SplitPlan.Order(SplitShuffle.BLOCKS, 9, 2, null, 10_000)));
  }

  /** {@code explain} says why the window over aligned blocks holds the rank's rows. */
  @Test
  void explainNamesTheWindowOverAlignedBlocks() {
    String plan = Pipeline.from(ChunkedBatchSplits.of(4096, 1, 20_000)).shuffle().batch(64).explain();
    assertTrue(plan.contains("window shuffle of the rank's rows, up to 32 MiB"), plan);
    assertTrue(plan.contains("whole units of 4096 rows"), plan);
  }
}
