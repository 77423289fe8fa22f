package dev.sluice.operators;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.core.Batch;
import dev.sluice.core.Datasets;
import dev.sluice.core.Example;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.testing.NoLeaks;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import reactor.core.publisher.Flux;

/**
 * Properties of shuffle → shard → batch on the index plan, over seeded random configurations
 * (n, numShards, seed, epoch, batchSize, numParallelCalls, prefetch), n including 0, 1, primes and
 * n &lt; numShards.
 */
@ExtendWith(NoLeaks.class)
class IndexPlanPropertiesTest {
  private static final long[] SIZES = {0, 1, 2, 3, 5, 7, 11, 13, 31, 64, 97, 100, 257};
  private static final int[] SHARDS = {1, 2, 3, 4, 7, 8, 16};

  /** The indices of one rank's pass, read through batches. */
  private static List<Long> rank(long n, int k, int r, EqualLength policy, PipelineContext ctx, int batchSize,
      int parallel, int prefetch) {
    Pipeline<Batch> p = Pipeline.from(Datasets.range(n)).shuffle().shard(k, r, policy).batch(batchSize, false, parallel);
    if (prefetch > 0) {
      p = p.prefetch(prefetch);
    }
    List<Long> out = new ArrayList<>();
    p.flux(ctx).doOnNext(b -> {
      try (b) {
        assertTrue(b.size() <= batchSize);
        for (long v : b.column("value").values().toLongArray()) {
          out.add(v);
        }
      }
    }).blockLast();
    return out;
  }

  /** The shuffled order of all of range(n), one element at a time. */
  private static List<Long> permutation(long n, PipelineContext ctx) {
    return Pipeline.from(Datasets.range(n)).shuffle().flux(ctx).map(Example::index).collectList().block();
  }

  @Test
  void shardPoliciesOverManyConfigurations() {
    SplittableRandom random = new SplittableRandom(20261122);
    int configurations = 0;
    for (long n : SIZES) {
      for (int k : SHARDS) {
        long seed = random.nextLong();
        long epoch = random.nextInt(1000);
        int batchSize = 1 + random.nextInt(9);
        int parallel = 1 + random.nextInt(3);
        int prefetch = random.nextInt(3);
        PipelineContext ctx = PipelineContext.defaults().withSeed(seed).withEpoch(epoch);
        String where = "n=" + n + " k=" + k + " seed=" + seed + " epoch=" + epoch + " batch=" + batchSize
            + " parallel=" + parallel + " prefetch=" + prefetch;
        List<Long> perm = permutation(n, ctx);
        List<Long> all = new ArrayList<>();
        Set<Long> covered = new HashSet<>();
        Set<Long> dropped = new HashSet<>();
        for (int r = 0; r < k; r++) {
          List<Long> uneven = rank(n, k, r, EqualLength.UNEVEN, ctx, batchSize, parallel, prefetch);
          List<Long> drop = rank(n, k, r, EqualLength.DROP, ctx, batchSize, parallel, prefetch);
          List<Long> pad = rank(n, k, r, EqualLength.PAD, ctx, batchSize, parallel, prefetch);
          assertEquals(EqualLength.UNEVEN.count(n, k, r), uneven.size(), where);
          assertEquals(n / k, drop.size(), "DROP gives floor(n/k): " + where);
          assertEquals(n == 0 ? 0 : (n + k - 1) / k, pad.size(), "PAD gives ceil(n/k): " + where);
          for (int j = 0; j < uneven.size(); j++) {
            assertEquals(perm.get(j * k + r), uneven.get(j), "rank takes its stride of the shared permutation: " + where);
          }
          assertEquals(uneven.subList(0, drop.size()), drop, where);
          assertEquals(uneven, pad.subList(0, uneven.size()), where);
          all.addAll(uneven);
          covered.addAll(pad);
          for (Long d : drop) {
            assertTrue(dropped.add(d), "DROP ranks are disjoint: " + d + " twice, " + where);
          }
        }
        assertEquals(LongStream.range(0, n).boxed().toList(), all.stream().sorted().toList(),
            "UNEVEN yields every index exactly once: " + where);
        assertEquals(n, covered.size(), "PAD covers every index: " + where);
        configurations++;
      }
    }
    assertEquals(SIZES.length * SHARDS.length, configurations);
  }

  @Test
  void orderDoesNotDependOnParallelismOrPrefetch() {
    SplittableRandom random = new SplittableRandom(7);
    for (int trial = 0; trial < 12; trial++) {
      long n = 1 + random.nextInt(600);
      int k = 1 + random.nextInt(5);
      int r = random.nextInt(k);
      int batchSize = 1 + random.nextInt(40);
      PipelineContext ctx = PipelineContext.defaults().withSeed(random.nextLong()).withEpoch(random.nextInt(50));
      List<Long> reference = rank(n, k, r, EqualLength.PAD, ctx, batchSize, 1, 0);
      for (int parallel : new int[] {1, 2, 4}) {
        for (int prefetch : new int[] {0, 1, 3}) {
          assertEquals(reference, rank(n, k, r, EqualLength.PAD, ctx, batchSize, parallel, prefetch),
              "n=" + n + " k=" + k + " r=" + r + " parallel=" + parallel + " prefetch=" + prefetch);
        }
      }
    }
  }

  @Test
  void consecutiveEpochsDiffer() {
    for (long n : new long[] {11, 12, 13, 31, 100, 1000, 65_537}) {
      for (long seed : new long[] {0, 1, 42, -7}) {
        PipelineContext ctx = PipelineContext.defaults().withSeed(seed);
        List<Long> previous = permutation(n, ctx);
        for (int epoch = 1; epoch < 6; epoch++) {
          List<Long> next = permutation(n, ctx.withEpoch(epoch));
          assertNotEquals(previous, next, "n=" + n + " seed=" + seed + " epoch=" + epoch);
          previous = next;
        }
      }
    }
  }

  @Test
  void aRankReadsOnlyItsOwnRows() {
    TestSources.Counting source = new TestSources.Counting(Datasets.range(1001));
    long rows = Pipeline.from(source).shuffle().shard(4, 3, EqualLength.DROP).batch(16).flux()
        .doOnNext(Batch::close).map(Batch::size).reduce(0, Integer::sum).block();
    assertEquals(250, rows);
    assertEquals(250, source.rows.get(), "rows of other ranks are never read");
  }

  @Test
  void largePermutationIsABijection() {
    long n = 1_000_003;
    BitSet seen = new BitSet((int) n);
    Flux<Batch> batches = Pipeline.from(Datasets.range(n)).shuffle().batch(4096, false, 2).flux(PipelineContext.defaults().withSeed(3));
    batches.doOnNext(b -> {
      try (b) {
        for (long v : b.column("value").values().toLongArray()) {
          assertTrue(!seen.get((int) v), "index " + v + " twice");
          seen.set((int) v);
        }
      }
    }).blockLast();
    assertEquals(n, seen.cardinality());
  }
}
