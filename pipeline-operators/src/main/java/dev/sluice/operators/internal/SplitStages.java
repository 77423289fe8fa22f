package dev.sluice.operators.internal;

import dev.sluice.operators.SplitShuffle;

import dev.sluice.core.BatchSplitDataset;
import dev.sluice.core.Options;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.SplitDataset;
import java.util.ArrayList;
import java.util.List;
import reactor.core.publisher.Flux;

/**
 * The leading stages of a pipeline over a {@link SplitDataset} (docs/architecture.md, the planner):
 * whatever order the user wrote them in, {@code shuffle()} shuffles the split order per epoch
 * (shared by every rank), {@code shard} takes the rank's contiguous range of that split sequence
 * ({@link SplitPlan}), and then the buffer shuffles run within the rank's stream: {@code shuffle()}'s {@value #SPLIT_SHUFFLE_BUFFER}-element
 * buffer, or instead the buffer of an explicit {@code shuffle(bufferSize)} in the same run
 * ({@code shuffle().shuffle(1000)} is a split-order shuffle plus a 1,000-element buffer). On the
 * element path the buffers are buffer shuffles; on the columnar path ({@link ColumnarPlan}) a
 * buffer of {@code W} elements is a window shuffle of {@code W} rows.
 */
public final class SplitStages {
  /** The buffer of {@code shuffle()} on a split source. */
  public static final int SPLIT_SHUFFLE_BUFFER = 10_000;

  private SplitStages() {}

  /**
   * The leading run of stages a split source plans.
   *
   * @param shuffle how {@code shuffle()} orders the rows, or null when the run has no {@code shuffle()}
   * @param splitSeed the split shuffle's own seed, or null for the context's
   * @param shard the shard of the run (the first one), or null
   * @param buffers the buffer shuffles of the run, in order, applied after the shard
   * @param next the index of the first stage after the run
   * @param batches the source read as decoded batches whose rows the element stages receive as
   *     views ({@link BatchRows}), or null to read the source's rows with {@link SplitDataset#read}
   */
  public record Prefix(SplitShuffle shuffle, Long splitSeed, ShardStage shard, List<BufferShuffleStage> buffers,
      int next, BatchSplitDataset<?> batches) {
    /** This run read as decoded batches of {@code source}, each row a view of its batch, when {@code source} is not null. */
    public Prefix readingBatches(BatchSplitDataset<?> source) {
      return new Prefix(shuffle, splitSeed, shard, buffers, next, source);
    }

    /** Whether the run shuffles the split source ({@code shuffle()}). */
    public boolean shuffleSplits() {
      return shuffle != null;
    }

    /** The seed of the split-order shuffle for {@code context}. */
    public long seed(PipelineContext context) {
      return splitSeed != null ? splitSeed : context.seed();
    }

    /** The order of a pass for {@code context}, followed by a shuffle window of {@code windowRows} rows (0: none). */
    public SplitPlan.Order order(PipelineContext context, long windowRows) {
      return new SplitPlan.Order(shuffle, seed(context), context.epoch(), shard, windowRows);
    }

    /** The window of the element path's first buffer shuffle, 0 when there is none. */
    long elementWindow() {
      return buffers.isEmpty() ? 0 : buffers.get(0).bufferSize();
    }
  }

  /** The leading run of {@code stages} (normalized) that a split source plans. */
  public static Prefix prefix(List<Stage> stages) {
    PrefixScan scan = new PrefixScan();
    int i = 0;
    while (i < stages.size() && stages.get(i).accept(scan)) {
      i++;
    }
    List<BufferShuffleStage> buffers = new ArrayList<>(scan.buffers);
    if (scan.shuffle != null && buffers.size() > 1) {
      // An explicit buffer shuffle replaces shuffle()'s default 10,000-element buffer.
      buffers.removeIf(BufferShuffleStage::isSplitDefault);
    }
    return new Prefix(scan.shuffle, scan.splitSeed, scan.shard, List.copyOf(buffers), i, null);
  }

  /** Takes stages into the prefix while they belong to it (the visitor answers true). */
  private static final class PrefixScan implements Stage.Visitor<Boolean> {
    SplitShuffle shuffle;
    Long splitSeed;
    ShardStage shard;
    final List<BufferShuffleStage> buffers = new ArrayList<>();

    @Override
    public Boolean shuffle(ShuffleStage s) {
      shuffle = s.splits();
      splitSeed = s.seed();
      buffers.add(BufferShuffleStage.splitDefault(SPLIT_SHUFFLE_BUFFER, s.seed()));
      return true;
    }

    @Override
    public Boolean bufferShuffle(BufferShuffleStage s) {
      buffers.add(s);
      return true;
    }

    @Override
    public Boolean shard(ShardStage s) {
      if (shard != null) {
        return false; // a second shard strides the first one's stream (element path)
      }
      shard = s;
      return true;
    }

    @Override
    public Boolean take(TakeStage s) {
      return false;
    }

    @Override
    public Boolean skip(SkipStage s) {
      return false;
    }

    @Override
    public Boolean batch(BatchStage s) {
      return false;
    }

    @Override
    public Boolean repeat(RepeatStage s) {
      return false;
    }

    @Override
    public Boolean element(FluxStage s) {
      return false;
    }
  }

  /** What {@code explain} says of a split source's {@code shuffle()}. */
  static String explainShuffle(ShuffleStage s) {
    return s.splits() == SplitShuffle.SPLITS ? "split order shuffled per (seed, epoch)"
        : "blocks of every split shuffled per (seed, epoch)";
  }

  /** What {@code explain} says of a split source's {@code shard}. */
  static String explainShard(Prefix prefix) {
    return prefix.shuffle() == SplitShuffle.BLOCKS ? "the rank's part of the block sequence"
        : "the rank's contiguous rows of the split sequence";
  }

  /** One planned pass and the index of the first stage left to the element path. */
  public record Planned(Flux<?> flux, int next) {}

  /** The element path over a split source: the prefix as {@link SplitPlan#pass} plus buffer shuffles. */
  public static Planned plan(SplitDataset<?> source, Prefix prefix, Options options, PipelineContext context) {
    Flux<?> flux = SplitPlan.pass(source, prefix.order(context, prefix.elementWindow()), prefix.batches());
    for (BufferShuffleStage b : prefix.buffers()) {
      flux = b.apply(flux, context, options);
    }
    return new Planned(flux, prefix.next());
  }

  /**
   * {@link #plan} without its first {@code skip} elements. With known row counts the rank's rows
   * are addressable: without a buffer shuffle the rows before {@code skip} are not read; with one,
   * its buffer is recomputed from positions ({@link BufferShuffleResume}) and only the rows it holds
   * and the rows after it are read. Otherwise (unknown counts, two buffers) the pass is read from
   * its start and the first {@code skip} elements dropped.
   */
  static Planned plan(SplitDataset<?> source, Prefix prefix, Options options, PipelineContext context, long skip) {
    if (skip == 0) {
      return plan(source, prefix, options, context);
    }
    Positional rows = positional(source, prefix, context);
    if (rows == null || prefix.buffers().size() > 1) {
      return new Planned(plan(source, prefix, options, context).flux().skip(skip), prefix.next());
    }
    Flux<?> flux = prefix.buffers().isEmpty() ? rows.from(skip)
        : BufferShuffleResume.resume(rows, prefix.buffers().get(0), context, skip);
    return new Planned(flux, prefix.next());
  }

  /** The rank's rows of the prefix's split sequence as a positional stream, or null when a split's count is unknown. */
  static Positional positional(SplitDataset<?> source, Prefix prefix, PipelineContext context) {
    List<SplitPlan.Segment> sequence = SplitPlan.sequence(source, prefix.order(context, prefix.elementWindow()));
    return sequence == null ? null : SplitPlan.positional(source, sequence, prefix.batches());
  }

  /** The number of rows of the prefix's pass, or -1 when a split's count is unknown. */
  static long length(SplitDataset<?> source, Prefix prefix, PipelineContext context) {
    Positional rows = positional(source, prefix, context);
    return rows == null ? -1 : rows.length();
  }
}
