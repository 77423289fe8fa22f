package dev.sluice.operators;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.core.Batch;
import dev.sluice.core.CheckpointException;
import dev.sluice.core.DatasetFormatException;
import dev.sluice.core.Datasets;
import dev.sluice.core.Example;
import dev.sluice.core.MemoryManager;
import dev.sluice.core.Options;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.PipelineIterator;
import dev.sluice.core.PipelineState;
import dev.sluice.core.RandomAccessDataset;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The block shuffle of random-access sources ({@link RandomAccessShuffle#BLOCKS}, or
 * {@code shuffle()} above the threshold): every row once per epoch across ranks, exact resume,
 * the threshold's choice and its explanation, the quality of the order, and every pooled byte back
 * on complete, error and cancel.
 */
class RandomAccessBlockShuffleTest {

  @AfterEach
  void nothingOutstanding() {
    TestSources.awaitNoOutstanding();
    MemoryManager.shared().checkNoOutstanding();
  }

  private static List<Long> batchIndices(Pipeline<Batch> p, PipelineContext ctx) {
    List<Long> out = new ArrayList<>();
    p.flux(ctx).doOnNext(b -> {
      try (b) {
        for (int i = 0; i < b.size(); i++) {
          out.add(b.index(i));
          assertEquals(b.index(i), b.column("value").values().getLong(i), "row " + b.index(i) + " holds its own value");
        }
      }
    }).blockLast();
    return out;
  }

  @Test
  void everyRowOncePerEpochAcrossFourRanksForRandomSizes() {
    SplittableRandom random = new SplittableRandom(17);
    for (int trial = 0; trial < 40; trial++) {
      long n = switch (trial % 4) {
        case 0 -> random.nextInt(5);
        case 1 -> random.nextInt(300);
        default -> random.nextInt(40_000);
      };
      int batch = 1 + random.nextInt(300);
      long seed = random.nextLong();
      RandomAccessDataset<Example> data = Datasets.range(n);
      for (int epoch = 0; epoch < 2; epoch++) {
        PipelineContext ctx = PipelineContext.defaults().withSeed(seed).withEpoch(epoch);
        List<Long> all = new ArrayList<>();
        List<Long> allElements = new ArrayList<>();
        for (int rank = 0; rank < 4; rank++) {
          Pipeline<Example> ranked = Pipeline.from(data).shuffle(RandomAccessShuffle.BLOCKS)
              .shard(4, rank, EqualLength.UNEVEN);
          List<Long> mine = batchIndices(ranked.batch(batch), ctx);
          assertEquals(EqualLength.UNEVEN.count(n, 4, rank), mine.size(), "n " + n + " rank " + rank);
          all.addAll(mine);
          if (trial % 4 != 3) {
            allElements.addAll(ranked.flux(ctx).map(Example::index).collectList().block());
          }
        }
        Set<Long> distinct = new HashSet<>(all);
        assertEquals(n, all.size(), "n " + n);
        assertEquals(n, distinct.size(), "n " + n + ": every row once");
        assertTrue(distinct.stream().allMatch(i -> i >= 0 && i < n));
        if (trial % 4 != 3) {
          assertEquals(distinct, new HashSet<>(allElements), "element path, n " + n);
          assertEquals(n, allElements.size());
        }
      }
    }
  }

  @Test
  void padGivesEveryRankTheSameCountAndDeterministicOrder() {
    RandomAccessDataset<Example> data = Datasets.range(10_007);
    PipelineContext ctx = PipelineContext.defaults().withSeed(3);
    Set<Long> seen = new HashSet<>();
    for (int rank = 0; rank < 4; rank++) {
      Pipeline<Batch> p = Pipeline.from(data).shuffle(RandomAccessShuffle.BLOCKS).shard(4, rank, EqualLength.PAD)
          .batch(100);
      List<Long> a = batchIndices(p, ctx);
      assertEquals(EqualLength.PAD.count(10_007, 4, rank), a.size());
      assertEquals(a, batchIndices(p, ctx), "the same order for the same (seed, epoch, rank)");
      assertNotEquals(a, batchIndices(p, ctx.withEpoch(1)), "another order next epoch");
      seen.addAll(a);
    }
    assertEquals(10_007, seen.size());
  }

  @Test
  void resumingMidEpochGivesTheRestOfTheSameRun() {
    Options small = Options.builder().blockShuffleThreshold(0).build();
    RandomAccessDataset<Example> data = Datasets.range(30_011);
    PipelineContext ctx = PipelineContext.defaults().withSeed(11);
    Pipeline<Batch> batches = Pipeline.from(data).withOptions(small).shuffle().shard(4, 2).batch(64);
    List<String> whole = ResumeRuns.whole(batches, ctx, 2);
    assertEquals(whole, ResumeRuns.cut(batches, ctx, 2, new long[] {1, 57, 118, 150}));
    Pipeline<Example> elements = Pipeline.from(data).shuffle(RandomAccessShuffle.BLOCKS).shard(4, 1).take(3000);
    List<String> wholeElements = ResumeRuns.whole(elements, ctx, 2);
    assertEquals(wholeElements, ResumeRuns.cut(elements, ctx, 2, new long[] {5, 2999, 4100}));
  }

  @Test
  void aStateRecordsTheChosenShuffleAndABlockShuffleResumesWithTheSameWorldOnly() {
    RandomAccessDataset<Example> data = Datasets.range(5_000);
    Options blocks = Options.builder().blockShuffleThreshold(0).build();
    PipelineState global;
    try (PipelineIterator<Example> it = Pipeline.from(data).shuffle().shard(2, 0).iterate(PipelineContext.defaults())) {
      it.next();
      global = it.state();
    }
    CheckpointException other = assertThrows(CheckpointException.class,
        () -> Pipeline.from(data).withOptions(blocks).shuffle().shard(2, 0).resume(global));
    assertTrue(other.getMessage().contains("taken on another pipeline"), other.getMessage());

    PipelineState blocked;
    try (PipelineIterator<Example> it = Pipeline.from(data).withOptions(blocks).shuffle().shard(2, 0)
        .iterate(PipelineContext.defaults())) {
      it.next();
      blocked = it.state();
    }
    CheckpointException world = assertThrows(CheckpointException.class,
        () -> Pipeline.from(data).withOptions(blocks).shuffle().shard(3, 0).resume(blocked));
    assertTrue(world.getMessage().contains("needs the global shuffle"), world.getMessage());
  }

  @Test
  void shuffleChoosesBlocksAboveTheThresholdAndExplainSaysWhy() {
    RandomAccessDataset<Example> data = Datasets.range(50_000); // 8 bytes a row: 390.6 KiB
    Options small = Options.builder().blockShuffleThreshold(100_000).build();
    Options large = Options.builder().blockShuffleThreshold(1L << 30).build();
    Pipeline<Batch> auto = Pipeline.from(data).withOptions(small).shuffle().batch(128);
    Pipeline<Batch> asked = Pipeline.from(data).withOptions(large).shuffle(RandomAccessShuffle.BLOCKS).batch(128);
    Pipeline<Batch> global = Pipeline.from(data).withOptions(large).shuffle().batch(128);
    Pipeline<Batch> globalAsked = Pipeline.from(data).withOptions(small).shuffle(RandomAccessShuffle.GLOBAL)
        .batch(128);

    assertTrue(auto.explain().contains("block shuffle: dataset 390.6 KiB > threshold 97.7 KiB"), auto.explain());
    assertTrue(auto.explain().contains("columnar"), auto.explain());
    assertTrue(asked.explain().contains("block shuffle, as asked: blocks of at least"), asked.explain());
    assertTrue(global.explain().contains("global permutation per (seed, epoch): dataset 390.6 KiB <= threshold "
        + "1.0 GiB"), global.explain());
    assertTrue(global.explain().contains("index"), global.explain());
    assertTrue(globalAsked.explain().contains("global permutation per (seed, epoch), as asked"),
        globalAsked.explain());

    PipelineContext ctx = PipelineContext.defaults().withSeed(5);
    List<Long> blocks = batchIndices(auto, ctx);
    assertEquals(blocks, batchIndices(asked, ctx), "shuffle() above the threshold is the block shuffle");
    assertEquals(batchIndices(global, ctx), batchIndices(globalAsked, ctx),
        "an explicit global shuffle stays global past the threshold");
    assertNotEquals(blocks, batchIndices(global, ctx));
    assertEquals(50_000, new HashSet<>(blocks).size());
  }

  @Test
  void theBlockSizeIsAnOptionThatExplainNames() {
    RandomAccessDataset<Example> data = Datasets.range(1_000_000); // 8 bytes a row: a run is at most 3906 rows
    Options blocks = Options.builder().blockShuffleThreshold(0).build();
    String small = Pipeline.from(data).withOptions(blocks.toBuilder().shuffleBlockBytes(8192).build()).shuffle()
        .batch(64).explain();
    assertTrue(small.contains("blocks of at least 1024 rows (8.0 KiB) in an order per (seed, epoch), each read whole; "
        + "block size 8.0 KiB"), small);
    String asked = Pipeline.from(data).withOptions(Options.builder().shuffleBlockBytes(16_384).build())
        .shuffle(RandomAccessShuffle.BLOCKS).explain();
    assertTrue(asked.contains("block shuffle, as asked: blocks of at least 2048 rows (16.0 KiB)"), asked);
    String byDefault = Pipeline.from(data).withOptions(blocks).shuffle().batch(64).explain();
    assertTrue(byDefault.contains("blocks of at least 3906 rows (30.5 KiB)") && byDefault.contains("block size 2.0 MiB"),
        byDefault);
  }

  @Test
  void everyRowOncePerEpochAcrossRanksForAnyBlockSize() {
    SplittableRandom random = new SplittableRandom(23);
    for (long blockBytes : new long[] {1, 8, 1000, 4096, 1L << 20}) {
      long n = 1000 + random.nextInt(60_000);
      Options options = Options.builder().shuffleBlockBytes(blockBytes).build();
      PipelineContext ctx = PipelineContext.defaults().withSeed(random.nextLong()).withEpoch(1);
      List<Long> all = new ArrayList<>();
      for (int rank = 0; rank < 3; rank++) {
        Pipeline<Batch> p = Pipeline.from(Datasets.range(n)).withOptions(options).shuffle(RandomAccessShuffle.BLOCKS)
            .shard(3, rank, EqualLength.UNEVEN).batch(97);
        List<Long> mine = batchIndices(p, ctx);
        assertEquals(EqualLength.UNEVEN.count(n, 3, rank), mine.size(), blockBytes + " bytes, rank " + rank);
        all.addAll(mine);
      }
      assertEquals(n, all.size(), blockBytes + " bytes");
      assertEquals(n, new HashSet<>(all).size(), blockBytes + " bytes: every row once");
    }
  }

  @Test
  void aStateResumesExactlyWithTheSameBlocksAndIsRefusedWithOtherBlocks() {
    RandomAccessDataset<Example> data = Datasets.range(300_000); // a run of at most 1171 rows
    PipelineContext ctx = PipelineContext.defaults().withSeed(29);
    Options runs512 = Options.builder().blockShuffleThreshold(0).shuffleBlockBytes(4096).build();
    Pipeline<Batch> p = Pipeline.from(data).withOptions(runs512).shuffle().shard(2, 1).batch(100);
    assertEquals(ResumeRuns.whole(p, ctx, 2), ResumeRuns.cut(p, ctx, 2, new long[] {3, 700, 1600, 2100}),
        "a 4 KiB block size resumes exactly");

    PipelineState state;
    try (PipelineIterator<Batch> it = p.iterate(ctx)) {
      for (int i = 0; i < 10; i++) {
        it.next().close();
      }
      state = it.state();
    }
    Options sameRuns = runs512.toBuilder().shuffleBlockBytes(4100).build(); // still 512 rows of 8 bytes
    Pipeline<Batch> same = Pipeline.from(data).withOptions(sameRuns).shuffle().shard(2, 1).batch(100);
    List<Long> resumed = new ArrayList<>();
    same.resume(state).take(5).doOnNext(b -> {
      try (b) {
        for (int i = 0; i < b.size(); i++) {
          resumed.add(b.index(i));
        }
      }
    }).blockLast();
    assertEquals(batchIndices(p, ctx).subList(1000, 1500), resumed,
        "another block size with the same runs resumes exactly");

    Pipeline<Batch> other = Pipeline.from(data).withOptions(runs512.toBuilder().shuffleBlockBytes(8192).build())
        .shuffle().shard(2, 1).batch(100);
    CheckpointException e = assertThrows(CheckpointException.class, () -> other.resume(state));
    assertTrue(e.getMessage().contains("taken on another pipeline"), e.getMessage());
    assertTrue(e.getMessage().contains("was shuffle(blocks) with shuffleBlockBytes runs of 512 rows and is now "
        + "shuffle(blocks) with shuffleBlockBytes runs of 1024 rows"), e.getMessage());
  }

  @Test
  void aBlockShuffleAfterTakeIsRefusedAndAutoStaysGlobalThere() {
    RandomAccessDataset<Example> data = Datasets.range(1000);
    UnsupportedOperationException e = assertThrows(UnsupportedOperationException.class,
        () -> Pipeline.from(data).take(10).shuffle(RandomAccessShuffle.BLOCKS));
    assertTrue(e.getMessage().contains("must come before take and skip"), e.getMessage());
    Pipeline<Example> auto = Pipeline.from(data).withOptions(Options.builder().blockShuffleThreshold(0).build())
        .take(10).shuffle();
    assertTrue(auto.explain().contains("a block shuffle needs the shuffle before take and skip"), auto.explain());
  }

  /**
   * One rank of 4 over 3 epochs of 400,000 rows, with a memory limit that makes the window shuffle
   * hold about 10,000 rows: a fresh random quarter every epoch (Jaccard of consecutive epochs at
   * most 0.25) and output order uncorrelated with row index (|Spearman| at most 0.05), the measures
   * of the split sources' block shuffle.
   */
  @Test
  void aRanksRowsChangeEveryEpochAndAreWellMixed() {
    MemoryManager memory = new MemoryManager();
    memory.setLimit(1L << 20);
    Options options = Options.builder().memory(memory).build();
    Pipeline<Batch> p = Pipeline.from(Datasets.range(400_000)).withOptions(options)
        .shuffle(RandomAccessShuffle.BLOCKS).shard(4, 1).batch(64);
    PipelineContext ctx = PipelineContext.defaults().withSeed(7);
    List<Long> previous = null;
    for (int epoch = 0; epoch < 3; epoch++) {
      List<Long> out = batchIndices(p, ctx.withEpoch(epoch));
      assertEquals(100_000, out.size());
      assertTrue(Math.abs(BlockShuffleTest.spearman(out)) <= 0.05, "epoch " + epoch + " spearman "
          + BlockShuffleTest.spearman(out));
      if (previous != null) {
        double j = BlockShuffleTest.jaccard(previous, out);
        assertTrue(j <= 0.25, "jaccard " + j);
      }
      previous = out;
    }
    memory.checkNoOutstanding();
  }

  /**
   * {@link #aRanksRowsChangeEveryEpochAndAreWellMixed} with a 4 KiB block size (runs of 512 rows,
   * a third of the default's on this dataset): the same measures hold.
   */
  @Test
  void aSmallBlockSizeStillChangesARanksRowsEveryEpochAndMixesThem() {
    MemoryManager memory = new MemoryManager();
    memory.setLimit(1L << 20);
    Options options = Options.builder().memory(memory).shuffleBlockBytes(4096).build();
    Pipeline<Batch> p = Pipeline.from(Datasets.range(400_000)).withOptions(options)
        .shuffle(RandomAccessShuffle.BLOCKS).shard(4, 1).batch(64);
    assertTrue(p.explain().contains("blocks of at least 512 rows"), p.explain());
    PipelineContext ctx = PipelineContext.defaults().withSeed(7);
    List<Long> previous = null;
    for (int epoch = 0; epoch < 3; epoch++) {
      List<Long> out = batchIndices(p, ctx.withEpoch(epoch));
      assertEquals(100_000, out.size());
      assertEquals(100_000, new HashSet<>(out).size());
      double rho = BlockShuffleTest.spearman(out);
      assertTrue(Math.abs(rho) <= 0.05, "epoch " + epoch + " spearman " + rho);
      if (previous != null) {
        double j = BlockShuffleTest.jaccard(previous, out);
        assertTrue(j <= 0.25, "jaccard " + j);
      }
      previous = out;
    }
    memory.checkNoOutstanding();
  }

  @Test
  void everyPooledByteComesBackOnErrorAndOnCancel() throws InterruptedException {
    RandomAccessDataset<Example> broken = TestSources.failingAt(20_000, 12_345);
    Pipeline<Batch> failing = Pipeline.from(broken).shuffle(RandomAccessShuffle.BLOCKS).batch(50);
    DatasetFormatException e = assertThrows(DatasetFormatException.class, () -> failing.flux().blockLast());
    assertTrue(e.getMessage().contains("row 12345"), e.getMessage());
    TestSources.awaitNoOutstanding();
    MemoryManager.shared().checkNoOutstanding();

    Pipeline<Batch> p = Pipeline.from(Datasets.range(200_000)).shuffle(RandomAccessShuffle.BLOCKS).batch(50);
    for (int taken : new int[] {1, 7, 300}) {
      CountDownLatch done = new CountDownLatch(1);
      List<Batch> got = new ArrayList<>();
      p.flux().doFinally(s -> done.countDown()).take(taken).doOnNext(got::add).blockLast();
      got.forEach(Batch::close);
      assertEquals(taken, got.size());
      assertTrue(done.await(10, TimeUnit.SECONDS));
      TestSources.awaitNoOutstanding();
      MemoryManager.shared().checkNoOutstanding();
    }
  }
}
