package dev.sluice.operators.internal;

import dev.sluice.core.Access;
import dev.sluice.core.Dataset;
import dev.sluice.core.Options;
import dev.sluice.core.RandomAccessDataset;
import dev.sluice.core.Schema;
import dev.sluice.core.SplitDataset;
import dev.sluice.core.spi.StageCounters;
import java.util.List;
import java.util.Locale;
import java.util.function.LongUnaryOperator;

/**
 * The physical plan of a pipeline: which path runs its leading stages (the head), what each later
 * stage does on the element path, and every property of the pass that follows from the source's
 * declared {@link Access} and the stages alone. Built once per pipeline (per pass of a cache, whose
 * dataset is opened per pass) by {@link PlanBuilder}, and only read afterwards: compiling a pass
 * ({@link PlanCompiler}), its cardinality, {@code explain}, the resume pushdown, the re-partition
 * check, the global shuffle's check, the checkpoint's record of the source, the thread count and
 * the metric probes all read it. What depends on the pass's context (row counts, the epoch's
 * order) is computed from the plan per pass.
 *
 * @param source the source
 * @param access the source's declared access
 * @param random the source when its access is {@link Access#RANDOM}, else null
 * @param splits the source when it is a split source (whatever its access), else null
 * @param counted the source when it counts outside its subscription, else null
 * @param options the pipeline's options
 * @param ordered the stages in execution order ({@link PlanBuilder#normalize})
 * @param head the path of the leading stages
 * @param next the index in {@code ordered} of the first stage after the head
 * @param inner the plan of the stages before the {@code repeat} that heads this plan, else null
 * @param repeatCount passes of that {@code repeat} (-1: forever)
 * @param columnar the columnar plan of the head, else null
 * @param prefix the split source's leading run of the head, else null
 * @param headBatch the {@code batch} the head gathers or decodes, else null
 * @param headPositional whether the head's output is addressable by position (index path without a
 *     batch; split plan without a buffer shuffle)
 * @param stages what each stage at {@code i >= next} does on the element path (null before {@code next})
 * @param probes the operator name each measured position reports under: the head at {@code next},
 *     stage {@code i} at {@code i + 1}; null where nothing is measured (inside the head)
 * @param threads the threads a pass may keep busy at once: the consumer, each prefetch's producer,
 *     the workers of each parallel stage and of the source's decode
 * @param emitsBatches whether the pass emits {@link dev.sluice.core.Batch}es
 * @param acceptsShuffle whether a global {@code shuffle()} appended to the stages is planned (index
 *     path, or the split source's leading run)
 * @param shard the first {@code shard} in execution order, else null
 * @param shapeKeys the stages as a checkpoint records them ({@link Stage#shapeKey()})
 * @param unresumable why a position in the output cannot be resumed exactly, or null
 * @param notRepartitionable why the rest of an epoch cannot be re-partitioned among another number
 *     of shards, or null when it can
 * @param shardAt the index of the {@code shard} a re-partition cuts at (-1 when not re-partitionable)
 * @param elementsPerOutput elements at the shard's output per output element (re-partitionable plans)
 * @param steps each stage in execution order with its path, for {@code explain}
 * @param foldedAhead the batches each parallel gather worker may hold when the {@code prefetch} at
 *     {@code next} is folded into the index path's parallel gather ({@link IndexPlan#foldedAhead}),
 *     else 0
 * @param blocks the random-access source seen as a split source, which its block shuffle reads
 *     ({@link ShuffleChoice}), else null
 */
public record Plan(Dataset<?> source, Access access, RandomAccessDataset<?> random, SplitDataset<?> splits,
    StageCounters.Source counted, Options options, List<Stage> ordered, Head head, int next, Plan inner,
    long repeatCount, ColumnarPlan columnar, SplitStages.Prefix prefix, BatchStage headBatch, boolean headPositional,
    List<Element> stages, List<String> probes, int threads, boolean emitsBatches, boolean acceptsShuffle,
    ShardStage shard, List<String> shapeKeys, String unresumable, String notRepartitionable, int shardAt,
    long elementsPerOutput, List<Step> steps, int foldedAhead, SplitDataset<?> blocks) {

  /** The split source the split plan head reads: the block view of a block-shuffled random-access source, else the source. */
  public SplitDataset<?> splitHead() {
    return blocks != null ? blocks : splits;
  }

  /** The path of a plan's leading stages, named as the architecture names it. */
  public enum Head {
    /** {@code repeat}: everything before it once per epoch ({@link Plan#inner()}). */
    REPEAT("repeat"),
    /** Positions computed per batch, rows gathered by the source ({@link IndexPlan}). */
    INDEX("index path"),
    /** Row ranges decoded into batches and re-cut ({@link ColumnarPlan}). */
    COLUMNAR("columnar path"),
    /** The rank's row ranges of a split source read as elements ({@link SplitStages}). */
    SPLIT("split plan"),
    /** Several pipelines combined ({@code sample}, {@code choose}, {@code zip}, {@code concatenate}), each on its own plan ({@link MixSource}). */
    MIX("mix of its sources' plans"),
    /** Nothing fused: every stage on the element path. */
    PLAIN("element path");

    private final String words;

    Head(String words) {
      this.words = words;
    }

    @Override
    public String toString() {
      return words;
    }
  }

  /** The path a stage runs on. */
  public enum Path {
    /** Positions computed per batch, rows gathered by the source ({@link IndexPlan}). */
    INDEX,
    /** Row ranges decoded into batches and re-cut ({@link ColumnarPlan}). */
    COLUMNAR,
    /** A Flux transformer over the elements. */
    ELEMENT;

    @Override
    public String toString() {
      return name().toLowerCase(Locale.ROOT);
    }
  }

  /**
   * How a pass that starts after its first {@code k} outputs of a stage starts that stage's input.
   */
  public enum Pushdown {
    /** A {@code skip(n)}: its input starts after {@code k + n} (what is skipped is never produced). */
    ADD,
    /** A {@code take(n)}: its input starts after {@code k}, and it takes {@code n - k}. */
    TAKE,
    /** {@code n} inputs per output (batch ×B, paddedBatch ×B, ordered map, prefetch): the input starts after {@code k × n}. */
    SCALE,
    /** An unbatch of batches of {@code n} rows: the input starts after {@code k / n} batches, then {@code k mod n} rows are dropped. */
    UNBATCH,
    /** A one-to-one stage that counts positions ({@code enumerate}): its input starts after {@code k}, and it counts from {@code k}. */
    POSITION,
    /** A {@code rebatch(m)} of batches of {@code n} rows: the input starts after {@code k·m / n} batches, then {@code k·m mod n} rows are dropped. */
    REBATCH,
    /** A buffer shuffle: recomputed from positions when its input is addressable, else replayed. */
    BUFFER,
    /** A deterministic interleave: its cycle recomputed from the datasets' lengths ({@link InterleaveResume}). */
    INTERLEAVE,
    /** Replayed: its input read from the start of the pass, its first {@code k} outputs dropped. */
    REPLAY
  }

  /**
   * What a stage does on the element path.
   *
   * @param stage the stage
   * @param schemaBefore the schema of the examples it receives, null when unknown (or not examples)
   * @param pushdown how a resume skip passes through it
   * @param factor the {@code n} of its pushdown (count, inputs per output, rows per batch), else 0
   * @param oneToOne whether one input gives exactly one output in order, so that an addressable
   *     input stays addressable through it
   * @param count its output count from its input count (-1 in: -1 out; -1: only running it tells)
   * @param batch the stage as an element-path {@code batch} whose size the pass checks, else null
   * @param buffer the stage as a buffer shuffle, else null
   * @param interleave the stage as a deterministic interleave, else null
   */
  public record Element(Stage stage, Schema schemaBefore, Pushdown pushdown, long factor, boolean oneToOne,
      LongUnaryOperator count, BatchStage batch, BufferShuffleStage buffer, InterleaveStage interleave) {}

  /**
   * What runs a stage: its path and what that path does with it ({@code what} may be empty).
   *
   * @param stage the stage
   * @param path the path it runs on
   * @param what a few words on what the path does with it
   */
  public record Step(Stage stage, Path path, String what) {
    @Override
    public String toString() {
      String head = String.format(Locale.ROOT, "%-24s %-8s", stage.describe(), path);
      return (what.isEmpty() ? head : head + " " + what).stripTrailing();
    }
  }

  /**
   * The plan's path in the architecture's words: {@code "index path"}, {@code "columnar path"},
   * {@code "split plan"} or {@code "element path"}; under a {@code repeat}, the path of the stages
   * before it, run once per epoch.
   */
  public String path() {
    return head == Head.REPEAT ? inner.path() + ", repeated once per epoch" : head.toString();
  }

  /** Whether the head gathers or decodes batches (index or columnar path with a {@code batch}). */
  public boolean headBatches() {
    return headBatch != null;
  }

  /** Whether the pass's elements can be re-partitioned mid-epoch ({@link #notRepartitionable()} is null). */
  public boolean repartitionable() {
    return notRepartitionable == null;
  }
}
