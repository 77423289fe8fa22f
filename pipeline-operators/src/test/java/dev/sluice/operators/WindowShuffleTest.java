package dev.sluice.operators;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.core.Batch;
import dev.sluice.core.Column;
import dev.sluice.core.Example;
import dev.sluice.core.MemoryManager;
import dev.sluice.core.Options;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.Split;
import dev.sluice.core.testing.BatchContents;
import dev.sluice.core.testing.NoLeaks;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import reactor.core.publisher.Flux;

/** The window shuffle of the columnar path, tested as the buffer shuffle is. */
@ExtendWith(NoLeaks.class)
class WindowShuffleTest {
  private static final PipelineContext CTX = PipelineContext.defaults().withSeed(3);

  private static List<Long> order(Pipeline<Batch> p, PipelineContext ctx) {
    List<Long> out = new ArrayList<>();
    p.flux(ctx).doOnNext(b -> {
      try (b) {
        for (long i : b.indices()) {
          out.add(i);
        }
      }
    }).blockLast();
    return out;
  }

  /**
   * Position of each row within a window of 8: two windows (a 16-row source in splits of 5 and 11),
   * 4,000 seeds, batches of 3 that span the windows. Every row stays in its window, and for each
   * window the position table passes Pearson's test at α = 0.001 ({@link PermutationStats}).
   */
  @Test
  void everyRowIsEquallyLikelyAtEveryPositionOfItsWindow() {
    int n = 8;
    int trials = 4000;
    MemoryBatchSplits source = new MemoryBatchSplits(5, 11);
    long[][][] tables = new long[2][n][n];
    for (int seed = 0; seed < trials; seed++) {
      List<Long> p = order(Pipeline.from(source).shuffle(n).batch(3), CTX.withSeed(seed));
      assertEquals(2 * n, p.size());
      for (int pos = 0; pos < 2 * n; pos++) {
        long row = p.get(pos);
        assertEquals(pos / n, row / n, "a row stays in its window");
        tables[pos / n][(int) (row % n)][pos % n]++;
      }
    }
    for (long[][] table : tables) {
      double chi2 = PermutationStats.scaledChiSquare(table, trials);
      assertTrue(chi2 < PermutationStats.critical0001(49), "scaled chi-square " + chi2);
    }
  }

  @Test
  void theOrderIsAFunctionOfSeedEpochAndRankOnly() {
    MemoryBatchSplits source = new MemoryBatchSplits(40, 25, 0, 35);
    List<Long> base = order(Pipeline.from(source).shuffle(16).batch(5), CTX);
    assertEquals(LongStream.range(0, 100).boxed().toList(), base.stream().sorted().toList());
    assertNotEquals(LongStream.range(0, 100).boxed().toList(), base);
    assertEquals(base, order(Pipeline.from(source).shuffle(16).batch(5), CTX), "same context, same order");
    for (int b : new int[] {1, 7, 64}) {
      assertEquals(base, order(Pipeline.from(source).shuffle(16).batch(b, false, 3), CTX),
          "whatever the batch size and decode parallelism");
    }
    assertNotEquals(base, order(Pipeline.from(source).shuffle(16).batch(5), CTX.nextEpoch()), "reshuffled per epoch");
    assertNotEquals(base, order(Pipeline.from(source).shuffle(16).batch(5), CTX.withSeed(4)), "another seed");
    List<Long> fixed = order(Pipeline.from(source).shuffle(16, 9, false).batch(5), CTX);
    assertEquals(fixed, order(Pipeline.from(source).shuffle(16, 9, false).batch(5), CTX.withEpoch(5).withSeed(1)),
        "the shuffle's own seed, the same order every epoch");
    // the rank: two ranks with the same rows (shard of 1 vs another index of a 1-row-per-rank layout
    // is not possible), so compare the permutations of rank 0 and 1 over their own halves
    List<Long> r0 = order(Pipeline.from(source).shard(2, 0).shuffle(50).batch(5), CTX);
    List<Long> r1 = order(Pipeline.from(source).shard(2, 1).shuffle(50).batch(5), CTX);
    List<Long> r1Shifted = r1.stream().map(i -> i - 50).toList();
    assertNotEquals(r0, r1Shifted, "each rank has its own permutations");
  }

  @Test
  void everyRowOnceEachEpochAcrossRanks() {
    MemoryBatchSplits source = new MemoryBatchSplits(17, 3, 40, 9, 31);
    long n = source.size();
    for (int k : new int[] {1, 2, 3, 7}) {
      for (long epoch = 0; epoch < 3; epoch++) {
        PipelineContext ctx = CTX.withEpoch(epoch);
        for (EqualLength policy : EqualLength.values()) {
          Map<Long, Integer> seen = new HashMap<>();
          for (int r = 0; r < k; r++) {
            List<Long> mine = order(Pipeline.from(source).shuffle().shuffle(12).shard(k, r, policy).batch(4), ctx);
            assertEquals(policy.count(n, k, r), mine.size(), k + " " + policy + " rank " + r);
            mine.forEach(i -> seen.merge(i, 1, Integer::sum));
          }
          if (policy != EqualLength.DROP) {
            assertEquals(LongStream.range(0, n).boxed().toList(), seen.keySet().stream().sorted().toList());
          }
          if (policy != EqualLength.PAD) {
            assertTrue(seen.values().stream().allMatch(c -> c == 1), "disjoint: " + seen);
          }
        }
      }
    }
  }

  @Test
  void gatheredRowsKeepTheirValuesAndNulls() {
    MemoryBatchSplits source = new MemoryBatchSplits(100, 57, 300);
    Pipeline.from(source).shuffle(64).batch(10).flux(CTX).doOnNext(b -> {
      try (b) {
        for (int r = 0; r < b.size(); r++) {
          assertEquals(ColumnarPathTest.expected(b.index(r)), ColumnarPathTest.render(b, r));
        }
        Column s = b.column("s");
        assertEquals(s.offsets().getLong(b.size()), s.values().byteSize(), "offsets end at the last value");
      }
    }).blockLast();
  }

  /**
   * Memory: the source counts the rows it decoded that are not closed yet (at most the window being
   * decoded: a decoded window is gathered into output batches in the pipeline's memory and closed),
   * and the pipeline's own pool holds the batches of the window being served, those of the next one
   * and the batches in flight. The
   * consumer holds its first batch until the source has decoded past the first window: the next
   * window is decoded while the current one is served.
   */
  @Test
  void decodesTheNextWindowWhileOneIsServedAndHoldsAboutTwo() throws InterruptedException {
    int window = 5000;
    MemoryManager memory = new MemoryManager();
    AtomicLong live = new AtomicLong();
    AtomicLong decoded = new AtomicLong();
    AtomicLong maxLive = new AtomicLong();
    AtomicLong maxPipeline = new AtomicLong();
    CountDownLatch nextWindow = new CountDownLatch(1);
    MemoryBatchSplits source = new MemoryBatchSplits(7000, 13000, 10000) {
      @Override
      public Flux<Batch> readBatches(Split split, long fromRow, long toRow, int first, int size) {
        return super.readBatches(split, fromRow, toRow, first, size).map(b -> {
          int n = b.size();
          maxLive.accumulateAndGet(live.addAndGet(n), Math::max);
          maxPipeline.accumulateAndGet(memory.outstandingBytes(), Math::max);
          if (decoded.addAndGet(n) > window) {
            nextWindow.countDown();
          }
          List<Column> columns = new ArrayList<>();
          for (int c = 0; c < b.schema().size(); c++) {
            columns.add(b.column(c));
          }
          return Batch.of(b.schema(), columns, b.indices(), () -> {
            live.addAndGet(-n);
            b.close();
          });
        });
      }
    };
    // windows of 5,000 rows; the one of rows [5000, 10000) joins the ends of two splits
    Pipeline<Batch> p = Pipeline.from(source).shuffle(window).batch(64).prefetch(2)
        .withOptions(Options.builder().memory(memory).build());
    long[] rows = {0};
    long[] windowBytes = {0};
    boolean[] first = {true};
    p.flux(CTX).doOnNext(b -> {
      try (b) {
        if (first[0]) {
          first[0] = false;
          windowBytes[0] = b.byteSize() * (window / b.size());
          try {
            assertTrue(nextWindow.await(10, TimeUnit.SECONDS), "the next window is decoded while the first is served");
          } catch (InterruptedException e) {
            throw new IllegalStateException(e);
          }
        }
        rows[0] += b.size();
      }
    }).blockLast();
    assertEquals(30_000, rows[0]);
    assertEquals(0, live.get());
    assertTrue(maxLive.get() <= window, "at most one window decoded at a time, but " + maxLive.get() + " rows were");
    assertTrue(maxPipeline.get() <= 3 * windowBytes[0], "about two windows of batches and the batches in flight, but "
        + maxPipeline.get() + " bytes for windows of " + windowBytes[0]);
    memory.checkNoOutstanding();
  }

  /** A batch larger than the window takes its rows from several windows, each row once. */
  @Test
  void aBatchLargerThanTheWindowSpansSeveralWindows() {
    MemoryBatchSplits source = new MemoryBatchSplits(23, 30);
    List<Integer> sizes = new ArrayList<>();
    List<Long> out = new ArrayList<>();
    Pipeline.from(source).shuffle(8).batch(20).flux(CTX).doOnNext(b -> {
      try (b) {
        sizes.add(b.size());
        for (int r = 0; r < b.size(); r++) {
          out.add(b.index(r));
          assertEquals(ColumnarPathTest.expected(b.index(r)), ColumnarPathTest.render(b, r));
        }
      }
    }).blockLast();
    assertEquals(List.of(20, 20, 13), sizes);
    assertEquals(LongStream.range(0, 53).boxed().toList(), out.stream().sorted().toList());
    for (int p = 0; p < out.size(); p++) {
      assertEquals(p / 8, out.get(p) / 8, "position " + p + " holds a row of its own window: " + out);
    }
  }

  /**
   * A source that decodes a column at a time: each window is decoded field by field, each field
   * gathered as it is decoded, and the batches, their indices and values are those of the same
   * windows decoded in batches; the same row ranges are opened, and every cursor is closed.
   */
  @Test
  void aWindowDecodedAColumnAtATimeServesWhatOneDecodedInBatchesServes() {
    long[] sizes = {40, 25, 0, 35, 1, 64};
    int[] windows = {1, 8, 33, 100, 10_000};
    int[] batchSizes = {1, 7, 32, 200};
    SplittableRandom random = new SplittableRandom(5);
    for (int trial = 0; trial < 40; trial++) {
      int window = windows[random.nextInt(windows.length)];
      int k = random.nextInt(3);
      int rank = k == 0 ? 0 : random.nextInt(k);
      long skip = random.nextInt(3) == 0 ? random.nextInt(80) : 0;
      long take = random.nextInt(3) == 0 ? random.nextInt(120) : Long.MAX_VALUE;
      int batch = batchSizes[random.nextInt(batchSizes.length)];
      boolean drop = random.nextBoolean();
      PipelineContext ctx = CTX.withEpoch(trial % 3);
      MemoryBatchSplits byColumns = MemoryBatchSplits.byColumns(sizes);
      MemoryBatchSplits inBatches = new MemoryBatchSplits(sizes);
      List<List<List<String>>> out = new ArrayList<>();
      for (MemoryBatchSplits source : List.of(byColumns, inBatches)) {
        Pipeline<Example> p = Pipeline.from(source).shuffle();
        if (k > 0) {
          p = p.shard(k, rank);
        }
        Pipeline<Batch> b = p.shuffle(window).skip(skip).take(take).batch(batch, drop);
        assertEquals(source == byColumns, b.explain().contains("decoded and gathered a column at a time"), b.explain());
        out.add(BatchContents.of(b.flux(ctx)));
      }
      String what = "trial " + trial + ": window " + window + ", shard " + k + "/" + rank + ", skip " + skip
          + ", take " + take + ", batch " + batch + (drop ? " drop" : "");
      assertEquals(out.get(1), out.get(0), what);
      assertEquals(inBatches.reads, byColumns.reads, what);
      assertEquals(0, byColumns.openCursors.get(), what);
    }
  }

  @Test
  void takeAfterTheShuffleDecodesOnlyTheWindowsItNeeds() {
    MemoryBatchSplits source = new MemoryBatchSplits(30, 30, 30, 30);
    List<Long> out = order(Pipeline.from(source).shuffle(40).take(10).batch(4), CTX);
    assertEquals(10, out.size());
    assertTrue(out.stream().allMatch(i -> i < 40), "the first window: " + out);
    assertEquals(List.of("s0[0,30)", "s1[0,10)"), source.reads);
    List<Long> skipped = order(Pipeline.from(source).shuffle(40).skip(45).batch(4).take(2), CTX);
    assertEquals(8, skipped.size());
    assertTrue(skipped.stream().allMatch(i -> i >= 40 && i < 80), "the second window: " + skipped);
    List<Example> none = Pipeline.from(source).shuffle(40).skip(500).flux().collectList().block();
    assertEquals(List.of(), none);
  }

  @Test
  void aSourceWithoutRowCountsTakesTheElementPath() {
    MemoryBatchSplits known = new MemoryBatchSplits(5, 7);
    MemoryBatchSplits unknown = new MemoryBatchSplits(5, 7) {
      @Override
      public List<dev.sluice.core.Split> splits() {
        return super.splits().stream().map(sp -> new dev.sluice.core.Split(sp.id(), dev.sluice.core.Split.UNKNOWN_ROWS))
            .toList();
      }
    };
    assertTrue(Pipeline.from(known).shard(2, 1).batch(4).toString().contains("batch(4, false, 1) [columnar]"));
    String plan = Pipeline.from(unknown).shard(2, 1).batch(4).toString();
    assertTrue(plan.contains("shard(2, 1, PAD) [element] -> batch(4, false, 1) [element]"), plan);
  }
}
