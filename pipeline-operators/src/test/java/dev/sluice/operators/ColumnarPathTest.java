package dev.sluice.operators;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.core.Batch;
import dev.sluice.core.DatasetFormatException;
import dev.sluice.core.Example;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.Split;
import dev.sluice.core.spi.BufferPool;
import dev.sluice.core.spi.ColumnBuilder;
import dev.sluice.core.spi.ColumnCursor;
import dev.sluice.core.testing.BatchContents;
import dev.sluice.core.testing.NoLeaks;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import reactor.core.publisher.Flux;
import reactor.test.StepVerifier;

/**
 * The columnar path ({@code readBatches} re-cut into batches) against the element path over the same
 * rows: same batches, same indices, same values, for shuffle / shard / take / skip / batch /
 * dropRemainder combinations over splits of uneven sizes (one empty) with nulls and strings.
 */
@ExtendWith(NoLeaks.class)
class ColumnarPathTest {
  private static final long[] SIZES = {7, 0, 13, 20, 1, 9};

  static List<List<String>> contents(Flux<Batch> batches) {
    return BatchContents.of(batches);
  }

  static String render(Batch b, int r) {
    return BatchContents.render(b, r);
  }

  /** The rendering of row {@code i} as the source defines it. */
  static String expected(long i) {
    Example e = MemoryBatchSplits.row(i);
    StringBuilder s = new StringBuilder().append(i);
    for (String name : List.of("id", "x", "s", "f")) {
      s.append(' ').append(e.isNull(name) ? "null" : Arrays.toString(e.tensor(name).toByteArray()));
    }
    return s.toString();
  }

  /** A random plan: shuffle?, shard?, cuts, batch, cuts after. */
  private record Plan(boolean shuffle, int k, int r, EqualLength policy, long[] cuts, int batch, boolean drop,
      long[] batchCuts, int parallel) {
    <T> Pipeline<Batch> apply(Pipeline<T> p) {
      if (shuffle) {
        p = p.shuffle();
      }
      if (k > 0) {
        p = p.shard(k, r, policy);
      }
      p = cut(p, cuts);
      return cut(p.batch(batch, drop, parallel), batchCuts);
    }

    private static <T> Pipeline<T> cut(Pipeline<T> p, long[] cuts) {
      for (long c : cuts) {
        p = c >= 0 ? p.take(c) : p.skip(-c);
      }
      return p;
    }

    boolean hasCuts() {
      return cuts.length > 0 || batchCuts.length > 0 || drop;
    }
  }

  private static Plan randomPlan(SplittableRandom random) {
    int k = random.nextInt(4); // 0: no shard
    long[][] cutChoices = {{}, {17}, {-5}, {-3, 30}, {0}, {-60}, {45, -2}};
    long[][] batchCutChoices = {{}, {2}, {-1}, {-1, 1}};
    int[] batches = {1, 3, 4, 16, 64};
    return new Plan(random.nextBoolean(), k, k == 0 ? 0 : random.nextInt(k),
        EqualLength.values()[random.nextInt(3)], cutChoices[random.nextInt(cutChoices.length)],
        batches[random.nextInt(batches.length)], random.nextBoolean(),
        batchCutChoices[random.nextInt(batchCutChoices.length)], random.nextInt(3) == 0 ? 3 : 1);
  }

  @Test
  void unshuffledPlansEqualTheElementPath() {
    MemoryBatchSplits source = new MemoryBatchSplits(SIZES);
    SplittableRandom random = new SplittableRandom(41);
    PipelineContext ctx = PipelineContext.defaults().withSeed(5).withEpoch(2);
    for (int trial = 0; trial < 400; trial++) {
      Plan plan = randomPlan(random);
      plan = new Plan(false, plan.k, plan.r, plan.policy, plan.cuts, plan.batch, plan.drop, plan.batchCuts,
          plan.parallel);
      Pipeline<Batch> columnar = plan.apply(Pipeline.from(source));
      Pipeline<Batch> element = plan.apply(Pipeline.from(source.rowsOnly()));
      assertTrue(columnar.toString().contains("[columnar]"), columnar.toString());
      assertTrue(!element.toString().contains("[columnar]"), element.toString());
      List<List<String>> expected = contents(element.flux(ctx));
      assertEquals(expected, contents(columnar.flux(ctx)), plan + " " + columnar);
    }
  }

  @Test
  void shuffledPlansHoldTheElementPathsRowsInWindowOrder() {
    MemoryBatchSplits source = new MemoryBatchSplits(SIZES);
    SplittableRandom random = new SplittableRandom(43);
    for (int trial = 0; trial < 300; trial++) {
      Plan plan = randomPlan(random);
      plan = new Plan(true, plan.k, plan.r, plan.policy, plan.cuts, plan.batch, plan.drop, plan.batchCuts,
          plan.parallel);
      PipelineContext ctx = PipelineContext.defaults().withSeed(trial).withEpoch(trial % 3);
      Pipeline<Batch> columnar = plan.apply(Pipeline.from(source));
      assertTrue(columnar.toString().contains("shuffle() [columnar]"), columnar.toString());
      List<List<String>> got = contents(columnar.flux(ctx));
      List<List<String>> element = contents(plan.apply(Pipeline.from(source.rowsOnly())).flux(ctx));
      assertEquals(sizes(element), sizes(got), plan + ": the same batch sizes");
      for (List<String> batch : got) {
        for (String row : batch) {
          assertEquals(expected(Long.parseLong(row.substring(0, row.indexOf(' ')))), row, "a row holds its own values");
        }
      }
      if (!plan.hasCuts()) {
        assertEquals(sorted(element), sorted(got), plan + ": the same rows");
      }
    }
  }

  private static List<Integer> sizes(List<List<String>> batches) {
    return batches.stream().map(List::size).toList();
  }

  private static List<String> sorted(List<List<String>> batches) {
    return batches.stream().flatMap(List::stream).sorted().toList();
  }

  @Test
  void aRankDecodesOnlyItsRowRanges() {
    MemoryBatchSplits source = new MemoryBatchSplits(10, 10, 10, 10);
    List<List<String>> out = contents(Pipeline.from(source).shard(3, 1, EqualLength.UNEVEN).batch(4).flux());
    assertEquals(List.of(4, 4, 4, 1), sizes(out));
    // UNEVEN: 40 rows, ranks get 14, 13, 13; rank 1 holds sequence rows [14, 27)
    assertEquals(List.of("s1[4,10)", "s2[0,7)"), source.reads);
  }

  @Test
  void aBatchSpansSplitsAndAlignedBatchesAreHandedOnUncopied() {
    MemoryBatchSplits source = new MemoryBatchSplits(600, 1000);
    BufferPool batchPool = dev.sluice.core.MemoryManager.shared().pool("batch");
    List<Batch> batches = Pipeline.from(source).batch(256).flux().collectList().block();
    try {
      assertEquals(List.of(256, 256, 256, 256, 256, 256, 64), batches.stream().map(Batch::size).toList());
      assertEquals(LongStream.range(512, 768).boxed().toList(), Arrays.stream(batches.get(2).indices()).boxed().toList());
      assertEquals(List.of("s0[0,600)", "s1[0,1000)"), source.reads);
      // batch 2 takes rows [512, 600) of split 0 and [0, 168) of split 1 (decoded as a 168-row batch)
      // and is the only copy: the others are the source's decoded batches, handed on
      long copied = batchPool.outstandingBytes();
      assertTrue(copied > 0 && source.pool.outstandingBytes() > 5 * copied, copied + " " + source.pool);
    } finally {
      batches.forEach(Batch::close);
    }
  }

  @Test
  void parallelDecodeKeepsTheOrder() {
    MemoryBatchSplits source = new MemoryBatchSplits(SIZES);
    MemoryBatchSplits parallel = new MemoryBatchSplits(dev.sluice.core.MemoryManager.shared(), 4, SIZES);
    for (int b : new int[] {1, 5, 16}) {
      List<List<String>> one = contents(Pipeline.from(source).shuffle().shard(2, 1).batch(b).flux());
      assertEquals(one, contents(Pipeline.from(source).shuffle().shard(2, 1).batch(b, false, 3).flux()));
      assertEquals(one, contents(Pipeline.from(parallel).shuffle().shard(2, 1).batch(b).flux()),
          "the source's own decode parallelism");
    }
  }

  @Test
  void explainSaysWhichPathEachStageRunsOn() {
    MemoryBatchSplits source = new MemoryBatchSplits(SIZES);
    String plan = Pipeline.from(source).shard(2, 0).shuffle().batch(8).prefetch(2).explain();
    String[] lines = plan.split("\\R");
    assertEquals(5, lines.length, plan);
    assertTrue(lines[0].startsWith("Pipeline over memory-batch-splits"), plan);
    assertTrue(lines[1].matches("  shuffle\\(\\) +columnar .*window shuffle of 10000 rows"), plan);
    assertTrue(lines[2].matches("  shard\\(2, 0, PAD\\) +columnar .*"), plan);
    assertTrue(lines[3].matches("  batch\\(8, false, 1\\) +columnar readBatches .*"), plan);
    assertTrue(lines[4].matches("  prefetch\\(2\\) +element"), plan);
    String mapped = Pipeline.from(source).shuffle().map(x -> x).batch(8).toString();
    assertEquals("Pipeline(memory-batch-splits[7, 0, 13, 20, 1, 9] -> shuffle() [element] -> map(1) [element]"
        + " -> batch(8, false, 1) [element])", mapped);
    assertTrue(Pipeline.from(dev.sluice.core.Datasets.range(10)).shuffle().batch(4).toString()
        .endsWith("shuffle() [index] -> batch(4, false, 1) [index])"));
  }

  @Test
  void aSplitThatDeliversFewerRowsIsAnErrorAndNothingLeaks() {
    MemoryBatchSplits source = new MemoryBatchSplits(5, 5) {
      @Override
      public Flux<Batch> readBatches(Split split, long fromRow, long toRow, int first, int size) {
        return super.readBatches(split, fromRow, split.id().equals("s1") ? toRow - 2 : toRow, first, size);
      }
    };
    StepVerifier.create(Pipeline.from(source).batch(3).flux())
        .consumeNextWith(Batch::close)
        .consumeNextWith(Batch::close)
        .expectErrorSatisfies(e -> {
          assertTrue(e instanceof DatasetFormatException, e.toString());
          assertTrue(e.getMessage().contains("s1") && e.getMessage().contains("expected 5 rows")
              && e.getMessage().contains("found 3"), e.getMessage());
        })
        .verify();
  }

  @Test
  void aWindowDecodedAColumnAtATimeThatFailsMidwayReleasesEverything() {
    MemoryBatchSplits source = new MemoryBatchSplits(8, 8, 8, 8) {
      {
        columns = true;
      }

      @Override
      void decodeField(int field, ColumnBuilder into, int at, long first, int rows) {
        if (field == 2 && first + rows > 20) {
          throw new DatasetFormatException("f", "row 20", "bad");
        }
        super.decodeField(field, into, at, first, rows);
      }
    };
    StepVerifier.create(Pipeline.from(source).shuffle(8).batch(3).flux().doOnNext(Batch::close))
        .thenConsumeWhile(b -> true)
        .expectErrorMatches(e -> e instanceof DatasetFormatException && e.getMessage().contains("bad"))
        .verify();
    TestSources.awaitNoOutstanding();
    assertEquals(0, source.openCursors.get(), "every cursor closed");
  }

  @Test
  void aSplitWhoseCursorHoldsFewerRowsIsAnError() {
    MemoryBatchSplits source = new MemoryBatchSplits(5, 5) {
      {
        columns = true;
      }

      @Override
      public ColumnCursor openColumns(Split split, long fromRow, long toRow) {
        return super.openColumns(split, fromRow, split.id().equals("s1") ? toRow - 2 : toRow);
      }
    };
    StepVerifier.create(Pipeline.from(source).shuffle(4).batch(3).flux().doOnNext(Batch::close))
        .thenConsumeWhile(b -> true)
        .expectErrorSatisfies(e -> {
          assertTrue(e instanceof DatasetFormatException, e.toString());
          assertTrue(e.getMessage().contains("s1") && e.getMessage().contains("expected 5 rows")
              && e.getMessage().contains("found 3"), e.getMessage());
        })
        .verify();
    TestSources.awaitNoOutstanding();
    assertEquals(0, source.openCursors.get(), "every cursor closed");
  }

  @Test
  void aDecodeFailureMidwayReleasesEverything() {
    for (int parallel : new int[] {1, 3}) {
      for (boolean shuffle : new boolean[] {false, true}) {
        MemoryBatchSplits source = new MemoryBatchSplits(8, 8, 8, 8) {
          @Override
          public Flux<Batch> readBatches(Split split, long fromRow, long toRow, int first, int size) {
            Flux<Batch> ok = super.readBatches(split, fromRow, toRow, first, size);
            return split.id().equals("s2") ? ok.take(1).concatWith(Flux.error(new DatasetFormatException("f", "s2", "bad")))
                : ok;
          }
        };
        Pipeline<Example> p = Pipeline.from(source);
        Flux<Batch> batches = (shuffle ? p.shuffle(8) : p).batch(3, false, parallel).flux();
        StepVerifier.create(batches.doOnNext(Batch::close))
            .thenConsumeWhile(b -> true)
            .expectErrorMatches(e -> e instanceof DatasetFormatException && e.getMessage().contains("bad"))
            .verify();
        TestSources.awaitNoOutstanding();
      }
    }
  }

  @Test
  void cancelReleasesEverythingOnEveryVariant() throws InterruptedException {
    for (MemoryBatchSplits source : List.of(new MemoryBatchSplits(300, 200, 500, 100),
        MemoryBatchSplits.byColumns(300, 200, 500, 100))) {
      cancelReleasesEverything(source);
      assertEquals(0, source.openCursors.get(), "every cursor closed");
    }
  }

  private static void cancelReleasesEverything(MemoryBatchSplits source) throws InterruptedException {
    List<UnaryOperator<Pipeline<Example>>> heads = List.of(p -> p, p -> p.shuffle(), p -> p.shuffle(64),
        p -> p.shard(2, 1));
    for (UnaryOperator<Pipeline<Example>> head : heads) {
      for (int parallel : new int[] {1, 2}) {
        for (int taken : new int[] {1, 5, 40}) {
          CountDownLatch done = new CountDownLatch(1);
          Flux<Batch> batches = head.apply(Pipeline.from(source)).batch(7, false, parallel).flux()
              .doFinally(s -> done.countDown());
          List<Batch> got = new ArrayList<>();
          StepVerifier.create(batches.doOnNext(got::add), 0)
              .thenRequest(Math.max(1, taken))
              .expectNextCount(Math.max(1, taken))
              .thenCancel()
              .verify();
          got.forEach(Batch::close);
          assertTrue(done.await(10, TimeUnit.SECONDS));
          TestSources.awaitNoOutstanding();
        }
      }
    }
  }

  @Test
  void completeReleasesEverythingAndTheSourcesBatchesArePooled() {
    MemoryBatchSplits source = new MemoryBatchSplits(SIZES);
    for (UnaryOperator<Pipeline<Example>> head : List.<UnaryOperator<Pipeline<Example>>>of(p -> p, p -> p.shuffle(5))) {
      Map<Long, Integer> seen = new HashMap<>();
      head.apply(Pipeline.from(source)).batch(6).flux().doOnNext(b -> {
        try (b) {
          for (long i : b.indices()) {
            seen.merge(i, 1, Integer::sum);
          }
        }
      }).blockLast();
      assertEquals(source.size(), seen.size());
    }
    assertEquals(0, source.pool.outstandingBytes());
  }

  @Test
  void takeOfLongMaxValueAfterASkipKeepsTheRest() {
    MemoryBatchSplits source = new MemoryBatchSplits(SIZES);
    for (UnaryOperator<Pipeline<Example>> head : List.<UnaryOperator<Pipeline<Example>>>of(p -> p, p -> p.shuffle(8))) {
      Pipeline<Batch> columnar = head.apply(Pipeline.from(source)).skip(5).take(Long.MAX_VALUE).batch(4)
          .take(Long.MAX_VALUE).skip(1).take(Long.MAX_VALUE);
      assertEquals((source.size() - 5 + 3) / 4 - 1, contents(columnar.flux()).size());
    }
  }

  @Test
  void emptySourcesAndEmptyRanges() {
    assertEquals(List.of(), contents(Pipeline.from(new MemoryBatchSplits()).shuffle().batch(4).flux()));
    assertEquals(List.of(), contents(Pipeline.from(new MemoryBatchSplits(0, 0)).batch(4).flux()));
    assertEquals(List.of(), contents(Pipeline.from(new MemoryBatchSplits(3)).skip(5).batch(4).flux()));
    assertEquals(List.of(), contents(Pipeline.from(new MemoryBatchSplits(3)).batch(4, true).flux()));
    assertEquals(List.of(1), sizes(contents(Pipeline.from(new MemoryBatchSplits(3)).shard(5, 4).batch(4).flux())),
        "PAD wraps around");
    assertNotEquals(List.of(), contents(Pipeline.from(new MemoryBatchSplits(1)).shuffle().batch(4).flux()));
  }

  /**
   * Cancel racing the decode, the re-cut and the serving of windows on other threads: every decoded
   * and copied batch is released, and nothing fails after the cancel (no dropped error, such as a
   * gather reading a window that a cancel released under it).
   */
  @Test
  void cancelRacingTheColumnarPathReleasesEverythingAndDropsNoError() throws InterruptedException {
    MemoryBatchSplits batches = new MemoryBatchSplits(700, 300, 500);
    MemoryBatchSplits columns = MemoryBatchSplits.byColumns(700, 300, 500);
    List<Throwable> dropped = java.util.Collections.synchronizedList(new ArrayList<>());
    reactor.core.publisher.Hooks.onErrorDropped(dropped::add);
    try {
      for (int r = 0; r < 150; r++) {
        int round = r;
        java.util.concurrent.CountDownLatch done = new java.util.concurrent.CountDownLatch(1);
        int parallel = 1 + round % 2;
        MemoryBatchSplits source = round % 4 < 2 ? batches : columns;
        reactor.core.publisher.BaseSubscriber<Batch> sub = new reactor.core.publisher.BaseSubscriber<>() {
          @Override
          protected void hookOnSubscribe(org.reactivestreams.Subscription s) {
            s.request(1 + round % 3);
          }

          @Override
          protected void hookOnNext(Batch b) {
            b.close();
          }
        };
        Pipeline<Example> head = round % 3 == 0 ? Pipeline.from(source).shard(2, round % 2)
            : Pipeline.from(source).shuffle(64 + round % 5 * 40);
        head.batch(16, false, parallel).flux(PipelineContext.defaults().withSeed(3).withEpoch(round))
            .doFinally(signal -> done.countDown())
            .subscribe(sub);
        reactor.test.util.RaceTestUtils.race(sub::cancel, () -> sub.request(round % 7));
        assertTrue(done.await(10, java.util.concurrent.TimeUnit.SECONDS));
        TestSources.awaitNoOutstanding();
      }
    } finally {
      reactor.core.publisher.Hooks.resetOnErrorDropped();
    }
    assertEquals(List.of(), dropped);
    assertEquals(0, columns.openCursors.get(), "every cursor closed");
  }

  @Test
  void workersDecodeLargeBatchesThatAreRecutIntoTheSameRows() {
    List<Integer> asked = java.util.Collections.synchronizedList(new ArrayList<>());
    MemoryBatchSplits source = new MemoryBatchSplits(20_000, 30_000) {
      @Override
      public Flux<Batch> readBatches(Split split, long fromRow, long toRow, int first, int size) {
        asked.add(size);
        return super.readBatches(split, fromRow, toRow, first, size);
      }
    };
    PipelineContext ctx = PipelineContext.defaults();
    List<List<String>> expected = contents(Pipeline.from(source.rowsOnly()).batch(16).flux(ctx));
    assertEquals(expected, contents(Pipeline.from(source).batch(16, false, 2).flux(ctx)));
    assertEquals(2, asked.size(), asked.toString());
    for (int size : asked) {
      // a worker decodes ahead a whole range: batches of the smallest size classes would hold it in
      // thousands of buffers, beyond what the pool keeps
      assertTrue(size >= 8192 && size % 16 == 0, "decoded batch rows " + size);
    }
    asked.clear();
    assertEquals(expected, contents(Pipeline.from(source).batch(16).flux(ctx)));
    assertEquals(List.of(256, 256), asked, "one worker decodes as batches are asked for");
  }
}
