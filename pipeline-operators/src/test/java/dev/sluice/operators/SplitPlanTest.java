package dev.sluice.operators;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.core.DatasetFormatException;
import dev.sluice.core.Example;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.Split;
import dev.sluice.operators.internal.ShardStage;
import dev.sluice.operators.internal.SplitPlan;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.test.StepVerifier;

class SplitPlanTest {

  private static List<Long> pass(MemorySplits source, SplitShuffle shuffle, PipelineContext ctx, int k, int r,
      EqualLength policy) {
    return pass(source, shuffle, ctx, k, r, policy, 0);
  }

  private static List<Long> pass(MemorySplits source, SplitShuffle shuffle, PipelineContext ctx, int k, int r,
      EqualLength policy, long window) {
    return SplitPlan.pass(source, new SplitPlan.Order(shuffle, ctx.seed(), ctx.epoch(), new ShardStage(k, r, policy),
        window)).map(Example::index).collectList().block();
  }

  /** The sequence of indices of the epoch's split order. */
  private static List<Long> sequence(MemorySplits source, SplitShuffle shuffle, PipelineContext ctx) {
    return SplitPlan.pass(source, new SplitPlan.Order(shuffle, ctx.seed(), ctx.epoch(), null, 0))
        .map(Example::index).collectList().block();
  }

  @Test
  void shardingKeepsEqualLengthGuaranteesForAnySplitsAndRanks() {
    SplittableRandom random = new SplittableRandom(17);
    for (int trial = 0; trial < 300; trial++) {
      int numSplits = 1 + random.nextInt(6);
      long[] sizes = new long[numSplits];
      for (int i = 0; i < numSplits; i++) {
        sizes[i] = random.nextInt(trial % 5 == 0 ? 3 : 12); // includes empty splits and n < k
      }
      int k = 1 + random.nextInt(8);
      boolean known = random.nextBoolean();
      SplitShuffle shuffle = new SplitShuffle[] {null, SplitShuffle.SPLITS, SplitShuffle.BLOCKS}[random.nextInt(3)];
      long window = random.nextBoolean() ? 0 : 1 + random.nextInt(40);
      PipelineContext ctx = PipelineContext.defaults().withSeed(random.nextLong()).withEpoch(random.nextInt(4));
      MemorySplits source = new MemorySplits(known, sizes);
      long n = source.size();
      List<Long> seq = sequence(source, shuffle, ctx);
      String what = "sizes " + java.util.Arrays.toString(sizes) + " k " + k + " known " + known + " " + shuffle
          + " window " + window;
      for (EqualLength policy : EqualLength.values()) {
        Map<Long, Integer> seen = new HashMap<>();
        for (int r = 0; r < k; r++) {
          List<Long> part = pass(source, shuffle, ctx, k, r, policy, window);
          assertEquals(policy.count(n, k, r), part.size(), what + " " + policy + " rank " + r);
          part.forEach(i -> seen.merge(i, 1, Integer::sum));
        }
        Set<Long> all = new HashSet<>(seq);
        switch (policy) {
          case UNEVEN -> {
            assertEquals(all, seen.keySet(), what + " UNEVEN covers everything");
            assertTrue(seen.values().stream().allMatch(c -> c == 1), what + " UNEVEN exactly once");
          }
          case DROP -> assertTrue(seen.values().stream().allMatch(c -> c == 1), what + " DROP is disjoint");
          case PAD -> {
            assertEquals(all, seen.keySet(), what + " PAD covers everything");
            int extra = seen.values().stream().mapToInt(c -> c - 1).sum();
            assertEquals(n == 0 ? 0 : k * ((n + k - 1) / k) - n, extra, what + " PAD duplicates exactly the padding");
          }
        }
      }
    }
  }

  @Test
  void knownCountsReadOnlyTheRanksSplitsAndRows() {
    MemorySplits source = new MemorySplits(true, 10, 10, 10, 10);
    List<Long> part = pass(source, null, PipelineContext.defaults(), 3, 1, EqualLength.UNEVEN);
    // 40 rows, 3 ranks: 14, 13, 13; rank 1 holds rows [14, 27).
    assertEquals(13, part.size());
    assertEquals(14L, part.get(0));
    assertEquals(List.of("s1[4,10)", "s2[0,7)"), source.reads);
  }

  @Test
  void fewerSplitsThanRanksSplitTheRowRanges() {
    MemorySplits source = new MemorySplits(true, 5);
    List<List<String>> expected = List.of(List.of("s0[0,2)"), List.of("s0[2,4)"), List.of("s0[4,5)", "s0[0,1)"),
        List.of("s0[1,3)"));
    for (int r = 0; r < 4; r++) {
      source.reads.clear();
      List<Long> part = pass(source, null, PipelineContext.defaults(), 4, r, EqualLength.PAD);
      assertEquals(2, part.size());
      assertEquals(expected.get(r), source.reads, "reads of rank " + r);
    }
    // PAD: rank 3 takes rows 6, 7 of 5, wrapping to rows 1, 2.
    assertEquals(List.of(1L, 2L), pass(source, null, PipelineContext.defaults(), 4, 3, EqualLength.PAD));
  }

  @Test
  void unknownCountsReadEverythingAndKeepTheStride() {
    MemorySplits source = new MemorySplits(false, 4, 3);
    List<Long> part = pass(source, null, PipelineContext.defaults(), 3, 1, EqualLength.UNEVEN);
    assertEquals(List.of(1L, 4L), part);
    assertEquals(List.of("s0[0,end)", "s1[0,end)"), source.reads);
  }

  @Test
  void splitOrderIsShuffledPerEpochAndSharedByRanks() {
    MemorySplits source = new MemorySplits(true, 3, 3, 3, 3, 3, 3, 3, 3);
    PipelineContext ctx = PipelineContext.defaults().withSeed(3);
    List<Long> e0 = sequence(source, SplitShuffle.SPLITS, ctx);
    assertEquals(e0, sequence(source, SplitShuffle.SPLITS, ctx));
    assertNotEquals(e0, sequence(source, SplitShuffle.SPLITS, ctx.nextEpoch()));
    // Within a split the rows keep their order: the split is the unit of the shuffle.
    for (int i = 0; i < e0.size(); i += 3) {
      assertEquals(e0.get(i) + 1, e0.get(i + 1));
    }
    List<Long> ranks = new ArrayList<>();
    for (int r = 0; r < 4; r++) {
      ranks.addAll(pass(source, SplitShuffle.SPLITS, ctx, 4, r, EqualLength.UNEVEN));
    }
    assertEquals(e0, ranks);
  }

  @Test
  void aSplitThatDeliversFewerRowsThanDeclaredIsAnError() {
    MemorySplits liar = new MemorySplits(true, 5, 5) {
      @Override
      public Flux<Example> read(Split split, long fromRow, long toRow) {
        return super.read(split, fromRow, toRow).take(2);
      }
    };
    StepVerifier.create(SplitPlan.pass(liar, new SplitPlan.Order(null, 0, 0, null, 0)))
        .expectNextCount(2)
        .expectErrorSatisfies(e -> {
          assertTrue(e instanceof DatasetFormatException);
          assertEquals("s0, rows [0, 5): expected 5 rows (the split declares 5) but found 2", e.getMessage());
        })
        .verify();
  }
}
