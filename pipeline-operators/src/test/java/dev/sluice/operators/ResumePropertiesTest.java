package dev.sluice.operators;

import static dev.sluice.operators.ResumeRuns.assertResumesExactly;

import dev.sluice.core.Dataset;
import dev.sluice.core.Datasets;
import dev.sluice.core.Example;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.Tensor;
import java.util.List;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.DoubleRange;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;

/**
 * For random cut points (one, two or three in a row, each resumed from the previous state's JSON),
 * the elements before the cuts followed by the resumed elements equal the uninterrupted run, on
 * every path: the index path (global shuffle, shard under each policy, batch, parallel gather), a
 * buffer shuffle over it and over a stream, a stream's shard under each policy, split sources with known and unknown counts, the
 * columnar path with its window shuffle, parallel maps, filter, interleave, unbatch, take, skip,
 * repeat, and several epochs.
 */
class ResumePropertiesTest {
  /** An ordered map that changes the element (so a skipped map would show). */
  static Example twice(Example e) {
    return Example.of(e.index(), "twice", Tensor.scalar(2 * e.index()));
  }

  static PipelineContext ctx(long seed, long epoch) {
    return PipelineContext.defaults().withSeed(seed).withEpoch(epoch);
  }

  @Property(tries = 40)
  void indexPathBatches(@ForAll @IntRange(min = 0, max = 700) int n, @ForAll @IntRange(min = 1, max = 5) int world,
      @ForAll @IntRange(min = 0, max = 4) int rank, @ForAll EqualLength policy,
      @ForAll @IntRange(min = 1, max = 40) int batch, @ForAll boolean drop, @ForAll @IntRange(min = 1, max = 3) int par,
      @ForAll @IntRange(min = 1, max = 3) int epochs, @ForAll long seed,
      @ForAll @Size(min = 1, max = 3) List<@DoubleRange(min = 0, max = 1) Double> cuts) {
    Pipeline<?> p = Pipeline.from(Datasets.range(n)).shuffle().shard(world, rank % world, policy)
        .batch(batch, drop, par).prefetch(2);
    assertResumesExactly(p, ctx(seed, 1), epochs, cuts);
  }

  @Property(tries = 30)
  void indexPathElementsThroughParallelMap(@ForAll @IntRange(min = 0, max = 900) int n,
      @ForAll @IntRange(min = 1, max = 4) int world, @ForAll @IntRange(min = 0, max = 3) int rank,
      @ForAll EqualLength policy, @ForAll @IntRange(min = 1, max = 4) int par, @ForAll @IntRange(min = 0, max = 50) int skip,
      @ForAll @IntRange(min = 1, max = 2) int epochs, @ForAll long seed,
      @ForAll @Size(min = 1, max = 3) List<@DoubleRange(min = 0, max = 1) Double> cuts) {
    Pipeline<?> p = Pipeline.from(Datasets.range(n)).skip(skip).shuffle().shard(world, rank % world, policy)
        .map(ResumePropertiesTest::twice, par, true).prefetch(3).take(n / 2 + 1);
    assertResumesExactly(p, ctx(seed, 0), epochs, cuts);
  }

  @Property(tries = 30)
  void bufferShuffleOverTheIndexPath(@ForAll @IntRange(min = 0, max = 900) int n,
      @ForAll @IntRange(min = 1, max = 3) int world, @ForAll @IntRange(min = 0, max = 2) int rank,
      @ForAll EqualLength policy, @ForAll @IntRange(min = 1, max = 300) int buffer,
      @ForAll @IntRange(min = 1, max = 4) int par, @ForAll @IntRange(min = 1, max = 16) int batch,
      @ForAll @IntRange(min = 1, max = 3) int epochs, @ForAll long seed,
      @ForAll @Size(min = 1, max = 3) List<@DoubleRange(min = 0, max = 1) Double> cuts) {
    Pipeline<?> p = Pipeline.from(Datasets.range(n)).shard(world, rank % world, policy).map(ResumePropertiesTest::twice, par, true)
        .shuffle(buffer).batch(batch, false, par).prefetch(2);
    assertResumesExactly(p, ctx(seed, 2), epochs, cuts);
  }

  @Property(tries = 25)
  void bufferShuffleOverAStream(@ForAll @IntRange(min = 0, max = 600) int n, @ForAll @IntRange(min = 1, max = 200) int buffer,
      @ForAll @IntRange(min = 1, max = 4) int par, @ForAll @IntRange(min = 1, max = 2) int epochs, @ForAll long seed,
      @ForAll @Size(min = 1, max = 3) List<@DoubleRange(min = 0, max = 1) Double> cuts) {
    Dataset<Example> stream = TestSources.streaming(Datasets.range(n));
    Pipeline<?> p = Pipeline.from(stream).shuffle(buffer).map(ResumePropertiesTest::twice, par, true).shuffle(buffer / 2 + 1, 9, false);
    assertResumesExactly(p, ctx(seed, 0), epochs, cuts);
  }

  @Property(tries = 20)
  void shardOfAStream(@ForAll @IntRange(min = 0, max = 400) int n, @ForAll @IntRange(min = 1, max = 4) int world,
      @ForAll @IntRange(min = 0, max = 3) int rank, @ForAll EqualLength policy, @ForAll @IntRange(min = 1, max = 60) int buffer,
      @ForAll @IntRange(min = 1, max = 3) int par, @ForAll @IntRange(min = 1, max = 9) int batch,
      @ForAll @IntRange(min = 1, max = 2) int epochs, @ForAll long seed,
      @ForAll @Size(min = 1, max = 3) List<@DoubleRange(min = 0, max = 1) Double> cuts) {
    Dataset<Example> stream = TestSources.streaming(Datasets.range(n));
    Pipeline<?> p = Pipeline.from(stream).shard(world, rank % world, policy).shuffle(buffer)
        .map(ResumePropertiesTest::twice, par, true).batch(batch, false, par);
    assertResumesExactly(p, ctx(seed, 0), epochs, cuts);
  }

  @Property(tries = 30)
  void splitSources(@ForAll @Size(min = 1, max = 6) List<@IntRange(min = 0, max = 120) Integer> sizes,
      @ForAll boolean knownCounts, @ForAll @IntRange(min = 1, max = 3) int world, @ForAll @IntRange(min = 0, max = 2) int rank,
      @ForAll EqualLength policy, @ForAll @IntRange(min = 1, max = 100) int buffer, @ForAll boolean shuffle,
      @ForAll @IntRange(min = 1, max = 3) int par, @ForAll @IntRange(min = 1, max = 2) int epochs, @ForAll long seed,
      @ForAll @Size(min = 1, max = 3) List<@DoubleRange(min = 0, max = 1) Double> cuts) {
    MemorySplits source = new MemorySplits(knownCounts, sizes.stream().mapToLong(Integer::longValue).toArray());
    Pipeline<Example> p = Pipeline.from(source);
    p = shuffle ? p.shuffle() : p;
    Pipeline<?> q = p.shard(world, rank % world, policy).shuffle(buffer).map(ResumePropertiesTest::twice, par, true);
    assertResumesExactly(q, ctx(seed, 0), epochs, cuts);
  }

  @Property(tries = 25)
  void columnarPathAndItsWindowShuffle(@ForAll @Size(min = 1, max = 5) List<@IntRange(min = 0, max = 150) Integer> sizes,
      @ForAll @IntRange(min = 1, max = 3) int world, @ForAll @IntRange(min = 0, max = 2) int rank,
      @ForAll EqualLength policy, @ForAll @IntRange(min = 1, max = 90) int window, @ForAll boolean shuffle,
      @ForAll @IntRange(min = 1, max = 20) int batch, @ForAll boolean drop, @ForAll @IntRange(min = 1, max = 3) int par,
      @ForAll @IntRange(min = 1, max = 2) int epochs, @ForAll long seed,
      @ForAll @Size(min = 1, max = 3) List<@DoubleRange(min = 0, max = 1) Double> cuts) {
    MemoryBatchSplits source = new MemoryBatchSplits(sizes.stream().mapToLong(Integer::longValue).toArray());
    Pipeline<Example> p = Pipeline.from(source);
    p = shuffle ? p.shuffle().shuffle(window) : p;
    Pipeline<?> q = p.shard(world, rank % world, policy).batch(batch, drop, par).prefetch(2);
    assertResumesExactly(q, ctx(seed, 0), epochs, cuts);
  }

  /** Splits large enough to be cut into many blocks, spread over windows that hold several of them. */
  @Property(tries = 12)
  void blockShuffleMidEpoch(@ForAll @Size(min = 1, max = 3) List<@IntRange(min = 0, max = 3000) Integer> sizes,
      @ForAll @IntRange(min = 1, max = 3) int world, @ForAll @IntRange(min = 0, max = 2) int rank,
      @ForAll EqualLength policy, @ForAll @IntRange(min = 512, max = 1500) int window, @ForAll boolean columnar,
      @ForAll @IntRange(min = 1, max = 2) int epochs, @ForAll long seed,
      @ForAll @Size(min = 1, max = 2) List<@DoubleRange(min = 0, max = 1) Double> cuts) {
    MemoryBatchSplits source = MemoryBatchSplits.byColumns(sizes.stream().mapToLong(Integer::longValue).toArray());
    Pipeline<Example> p = Pipeline.from(source).shuffle().shuffle(window).shard(world, rank % world, policy);
    Pipeline<?> q = columnar ? p.batch(97).prefetch(2) : p;
    assertResumesExactly(q, ctx(seed, 0), epochs, cuts);
  }

  /** Blocks aligned to chunks (whole, paired), under shuffle()'s window, which then holds the rank's rows. */
  @Property(tries = 10)
  void alignedBlockShuffleMidEpoch(@ForAll @Size(min = 1, max = 3) List<@IntRange(min = 0, max = 3000) Integer> sizes,
      @ForAll @IntRange(min = 100, max = 900) int chunk, @ForAll @IntRange(min = 1, max = 3) int world,
      @ForAll @IntRange(min = 0, max = 2) int rank, @ForAll EqualLength policy, @ForAll boolean columnar,
      @ForAll @IntRange(min = 1, max = 3) int par, @ForAll @IntRange(min = 1, max = 2) int epochs, @ForAll long seed,
      @ForAll @Size(min = 1, max = 2) List<@DoubleRange(min = 0, max = 1) Double> cuts) {
    ChunkedBatchSplits source = new ChunkedBatchSplits(chunk, sizes.stream().mapToLong(Integer::longValue).toArray());
    Pipeline<Example> p = Pipeline.from(source).shuffle().shard(world, rank % world, policy);
    Pipeline<?> q = columnar ? p.batch(97, false, par).prefetch(2) : p;
    assertResumesExactly(q, ctx(seed, 0), epochs, cuts);
  }

  @Property(tries = 25)
  void filterInterleaveUnbatchAndRepeat(@ForAll @IntRange(min = 0, max = 300) int n,
      @ForAll @IntRange(min = 1, max = 4) int cycle, @ForAll @IntRange(min = 1, max = 5) int block,
      @ForAll @IntRange(min = 1, max = 3) int par, @ForAll @IntRange(min = 1, max = 12) int batch,
      @ForAll @IntRange(min = 1, max = 3) int repeat, @ForAll @IntRange(min = 1, max = 2) int epochs, @ForAll long seed,
      @ForAll @Size(min = 1, max = 3) List<@DoubleRange(min = 0, max = 1) Double> cuts) {
    Pipeline<?> filtered = Pipeline.from(Datasets.range(n)).shuffle().filter(e -> e.index() % 3 != 1).batch(batch);
    assertResumesExactly(filtered, ctx(seed, 0), epochs, cuts);

    Pipeline<?> interleaved = Pipeline.from(Datasets.range(n % 7 + 1))
        .interleave(e -> Pipeline.from(Datasets.range(n / 4 + e.index())).shuffle()
            .map(x -> Example.of(e.index() * 1000 + x.index(), "v", Tensor.scalar(x.index()))), cycle, block, par, true)
        .batch(batch);
    assertResumesExactly(interleaved, ctx(seed, 0), epochs, cuts);

    Pipeline<?> unbatched = Pipeline.from(Datasets.range(n)).shuffle().batch(batch, false, par).prefetch(2).unbatch();
    assertResumesExactly(unbatched, ctx(seed, 0), epochs, cuts);

    Pipeline<?> repeated = Pipeline.from(Datasets.range(n)).shuffle().take(n / 2 + 3).repeat(repeat).batch(batch)
        .map(b -> b, par, true);
    assertResumesExactly(repeated, ctx(seed, 0), epochs, cuts);

    Pipeline<?> streamRepeat = Pipeline.from(TestSources.streaming(Datasets.range(n / 3))).shuffle(7).repeat(repeat).skip(2);
    assertResumesExactly(streamRepeat, ctx(seed, 0), epochs, cuts);
  }
}
