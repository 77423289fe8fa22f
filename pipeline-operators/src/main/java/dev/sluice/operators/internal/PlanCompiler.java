package dev.sluice.operators.internal;

import dev.sluice.core.BatchSplitDataset;
import dev.sluice.core.BatchBuilder;
import dev.sluice.core.Dataset;
import dev.sluice.core.Example;
import dev.sluice.core.HasSchema;
import dev.sluice.core.Options;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.RandomAccessDataset;
import dev.sluice.core.Schema;
import dev.sluice.core.SplitDataset;
import dev.sluice.core.StageCounters;
import dev.sluice.core.internal.metrics.FluxStageProbe;
import dev.sluice.core.internal.metrics.PassMetrics;
import dev.sluice.core.internal.metrics.SelfMeasured;
import dev.sluice.core.internal.metrics.StageMeter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import reactor.core.publisher.Flux;

/**
 * Turns a source and its stages into one pass (docs/architecture.md, the planner). The leading stages run
 * on one of three paths:
 *
 * <ul>
 *   <li><b>index</b> ({@link IndexPlan}): on a {@link RandomAccessDataset}, shuffle / shard / take /
 *       skip, an optional {@code batch} and take / skip after it become per-batch index arrays
 *       handed to the source's {@code gather};
 *   <li><b>columnar</b> ({@link ColumnarPlan}): on a {@link BatchSplitDataset} with known row
 *       counts, shuffle / shard / take / skip before {@code batch} become row ranges decoded with
 *       {@code readBatches} and re-cut into batches (a shuffle within the rank is a window shuffle);
 *   <li><b>element</b>: everything else, as Flux transformers over the elements; on a
 *       {@link SplitDataset} the leading shuffle and shard still read only the rank's row ranges
 *       ({@link SplitStages}).
 * </ul>
 *
 * Every stage after the first one its path cannot express runs on the element path. {@code repeat}
 * runs everything before it once per epoch.
 */
public final class PlanCompiler {
  private PlanCompiler() {}

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
   * The stages in execution order: a shuffle written after {@code shard} moves before it, so every
   * rank takes its stride of the one permutation all ranks share (DistributedSampler's order).
   */
  public static List<Stage> normalize(List<Stage> stages) {
    List<Stage> out = new ArrayList<>(stages);
    for (int i = 1; i < out.size(); i++) {
      if (out.get(i).kind() == Stage.Kind.SHUFFLE) {
        for (int j = i; j > 0 && out.get(j - 1).kind() == Stage.Kind.SHARD; j--) {
          Stage t = out.get(j - 1);
          out.set(j - 1, out.get(j));
          out.set(j, t);
        }
      }
    }
    return out;
  }

  /** True when a global shuffle appended to {@code stages} runs on the index plan. */
  public static boolean isIndexPlan(Dataset<?> source, List<Stage> stages) {
    return source instanceof RandomAccessDataset && stages.stream().allMatch(IndexPlan::isIndexStage);
  }

  /** The index of the last {@code repeat} in {@code ordered}, or -1. */
  private static int lastRepeat(List<Stage> ordered) {
    int repeat = -1;
    for (int i = 0; i < ordered.size(); i++) {
      if (ordered.get(i).kind() == Stage.Kind.REPEAT) {
        repeat = i;
      }
    }
    return repeat;
  }

  /**
   * One pass of {@code source} through {@code stages} for {@code context}. When the options carry a
   * metrics registry, or a flight recording enables Sluice's events, each measured stage's output
   * is measured (by the stage itself when it can, {@link SelfMeasured}, else through a
   * {@link FluxStageProbe}): the leading stages a path fuses (index, columnar, split read) as one
   * stage named after the path, then every element-path stage; otherwise nothing is added to the
   * pass.
   */
  public static Flux<?> compile(Dataset<?> source, List<Stage> stages, Options options, PipelineContext context) {
    return compile(source, stages, options, context, 0, 0);
  }

  /**
   * One pass of {@code source} through {@code stages} for {@code context} without its first
   * {@code skip} elements, computed as cheaply as each path allows ({@link Pass}): the elements are
   * exactly those of the whole pass from position {@code skip} on.
   *
   * @param offset positions of the epoch's shared order that an earlier world of ranks consumed
   *     before the index path's {@code shard} partitions the rest (0 but after a resume with another
   *     number of ranks)
   */
  public static Flux<?> compile(Dataset<?> source, List<Stage> stages, Options options, PipelineContext context,
      long skip, long offset) {
    return new Pass(source, normalize(stages), options, context, offset).from(stages.size(), skip);
  }

  /**
   * The number of elements of the pass for {@code context}, when the planner knows it without
   * reading (the index and columnar paths, split sources with known row counts, and the stages
   * after them whose counts follow: take, skip, batch, ordered map, prefetch, buffer shuffle), or -1.
   */
  public static long length(Dataset<?> source, List<Stage> stages, Options options, PipelineContext context,
      long offset) {
    return new Pass(source, normalize(stages), options, context, offset).length(stages.size());
  }

  /**
   * One pass, planned: the leading stages one path runs (the head), then the element path's
   * stages. A pass that starts after its first {@code k} elements ({@link #from}) pushes {@code k}
   * back through the element stages to the head wherever a count of outputs fixes a count of
   * inputs (take, skip, batch ×B, paddedBatch ×B, ordered map, prefetch, unbatch after a batch):
   * the head then starts at that position without reading what comes before (the index path
   * computes from a position, the columnar path decodes from a row, a split source reads from a
   * row). A buffer shuffle over an addressable stream is recomputed from positions
   * ({@link BufferShuffleResume}). A deterministic interleave whose datasets' lengths are known runs
   * its cycle on counts and resumes each open dataset from its offset ({@link InterleaveResume}).
   * Any other stage (filter, an interleave over datasets of unknown length, a shard or a buffer
   * shuffle over a stream that is not addressable) is replayed: its input is read from the start of
   * the pass and its first outputs are dropped.
   */
  private static final class Pass {
    private enum Head { REPEAT, INDEX, COLUMNAR, SPLIT, PLAIN }

    private final Dataset<?> source;
    private final List<Stage> ordered;
    private final Options options;
    private final PipelineContext ctx;
    private final long offset;
    private final Head head;
    private final int next;
    private final boolean headBatches; // the head emits batches
    private final ColumnarPlan columnar;
    private final SplitStages.Prefix prefix;
    private final Schema[] schemaBefore; // the element path's schema before stage i (i >= next)
    private final PassMetrics metrics; // null: the pass measures nothing
    private final int busy; // the threads the pass may keep busy ({@link #busyThreads})

    Pass(Dataset<?> source, List<Stage> ordered, Options options, PipelineContext ctx, long offset) {
      this.source = source;
      this.ordered = ordered;
      this.options = options;
      this.ctx = ctx;
      this.offset = offset;
      this.metrics = PassMetrics.of(options, ordered.size() + 1);
      this.busy = busyThreads(source, ordered);
      int repeat = lastRepeat(ordered);
      ColumnarPlan c = null;
      SplitStages.Prefix p = null;
      Schema schema;
      if (repeat >= 0) {
        head = Head.REPEAT;
        next = repeat + 1;
        schema = schemaAfter(Schemas.declared(source), ordered.subList(0, repeat));
      } else if (source instanceof RandomAccessDataset) {
        head = Head.INDEX;
        next = IndexPlan.planned(ordered);
        schema = ordered.subList(0, next).stream().anyMatch(s -> s.kind() == Stage.Kind.BATCH) ? null
            : Schemas.declared(source);
      } else if ((c = ColumnarPlan.of(source, ordered)) != null) {
        head = Head.COLUMNAR;
        next = c.next();
        schema = null;
      } else if (source instanceof SplitDataset) {
        head = Head.SPLIT;
        p = SplitStages.prefix(ordered);
        next = p.next();
        schema = Schemas.declared(source);
      } else {
        head = Head.PLAIN;
        next = 0;
        schema = Schemas.declared(source);
      }
      this.columnar = c;
      this.prefix = p;
      this.headBatches = schema == null && head != Head.REPEAT && ordered.subList(0, next).stream()
          .anyMatch(s -> s.kind() == Stage.Kind.BATCH);
      this.schemaBefore = new Schema[ordered.size() + 1];
      for (int i = next; i <= ordered.size(); i++) {
        schemaBefore[i] = schema;
        if (i < ordered.size()) {
          schema = schemaAfter(schema, ordered.get(i));
        }
      }
    }

    /** The output of stages {@code [0, end)} without its first {@code skip} elements. */
    Flux<?> from(int end, long skip) {
      if (end <= next) {
        return head(skip);
      }
      int i = end - 1;
      Stage s = ordered.get(i);
      if (s.kind() == Stage.Kind.SKIP) {
        return from(i, saturatedAdd(skip, ((SkipStage) s).count())); // what is skipped is never produced
      }
      if (skip == 0) {
        return apply(from(i, 0), s, i);
      }
      switch (s.kind()) {
        case TAKE -> {
          return apply(from(i, skip), new TakeStage(Math.max(0, ((TakeStage) s).count() - skip)), i);
        }
        case BATCH -> {
          return apply(from(i, saturatedMultiply(skip, ((BatchStage) s).batchSize())), s, i);
        }
        case BUFFER_SHUFFLE -> {
          Positional in = positional(i);
          if (in != null) {
            return probe(BufferShuffleResume.resume(in, (BufferShuffleStage) s, ctx, skip), metrics, i + 1, s.operator());
          }
        }
        case ELEMENT -> {
          long per = ((FluxStage) s).inputsPerOutput(options);
          if (per > 0) {
            return apply(from(i, saturatedMultiply(skip, per)), s, i);
          }
          int rows = s instanceof UnbatchStage ? batchRows(i) : 0;
          if (rows > 0) {
            return apply(from(i, skip / rows), s, i).skip(skip % rows);
          }
          if (s instanceof InterleaveStage interleave && interleave.deterministic()) {
            return InterleaveResume.resume(from(i, 0), n -> from(i, n), interleave, ctx, options, skip,
                () -> from(end, 0).skip(skip), out -> probe(out, metrics, end, s.operator()));
          }
        }
        case SKIP, SHUFFLE, SHARD, REPEAT -> {
          // skip is pushed down above; the others are replayed below
        }
      }
      return from(end, 0).skip(skip);
    }

    /** Stage {@code i} applied on the element path to {@code flux}. */
    private Flux<?> apply(Flux<?> flux, Stage s, int i) {
      checkBatches(i);
      return probe(s.accept(new ElementPath(flux, schemaBefore[i], options, ctx, busy)), metrics, i + 1, s.operator());
    }

    /**
     * The rows of the batches that stage {@code i} receives, when every batch but the last has that
     * many (a {@code batch} or {@code paddedBatch} before it, through prefetch stages only), or 0.
     */
    private int batchRows(int i) {
      int j = i - 1;
      while (j >= next && ordered.get(j) instanceof PrefetchStage) {
        j--;
      }
      if (j >= next) {
        Stage s = ordered.get(j);
        return s instanceof BatchStage b ? b.batchSize() : s instanceof PaddedBatchStage p ? p.batchSize() : 0;
      }
      if (!headBatches) {
        return 0;
      }
      for (int k = next - 1; k >= 0; k--) {
        if (ordered.get(k) instanceof BatchStage b) {
          return b.batchSize();
        }
      }
      return 0;
    }

    /** The output of stages {@code [0, end)} as a positional stream, or null when it is not one. */
    private Positional positional(int end) {
      if (end <= next) {
        return switch (head) {
          case INDEX -> headBatches ? null : IndexPlan.positional((RandomAccessDataset<?>) source, ordered, ctx, offset);
          case SPLIT -> prefix.buffers().isEmpty() ? SplitStages.positional((SplitDataset<?>) source, prefix, ctx) : null;
          case REPEAT, COLUMNAR, PLAIN -> null;
        };
      }
      Stage s = ordered.get(end - 1);
      if (s.kind() != Stage.Kind.ELEMENT || ((FluxStage) s).inputsPerOutput(options) != 1) {
        return null;
      }
      Positional in = positional(end - 1);
      if (in == null) {
        return null;
      }
      int i = end - 1;
      return new Positional() {
        @Override
        public long length() {
          return in.length();
        }

        @Override
        public Flux<?> from(long position) {
          return apply(in.from(position), s, i);
        }

        @Override
        public Flux<?> at(long[] positions) {
          return apply(in.at(positions), s, i);
        }
      };
    }

    /**
     * Fails the pass before any work when the batches of the head (index or columnar path;
     * {@code i} = -1), or of the {@code batch} stage at {@code i} on the element path, cannot be built: a buffer larger
     * than a buffer can be, or one batch's buffers more than the memory limit. The one place the
     * planner checks sizes; the largest batch is the batch size, or fewer rows when the pass has
     * fewer ({@link BatchBuilder#checkFits}).
     */
    private void checkBatches(int i) {
      BatchStage b;
      Schema schema;
      long rows;
      if (i < 0) {
        if (!headBatches) {
          return;
        }
        b = (BatchStage) ordered.subList(0, next).stream().filter(s -> s.kind() == Stage.Kind.BATCH).findFirst()
            .orElseThrow();
        if (source instanceof RandomAccessDataset<?> ra) {
          schema = Schemas.of(ra);
          rows = IndexPlan.sequence(ra, ordered, ctx, offset).seq().length();
        } else if (columnar != null && source instanceof HasSchema h) {
          schema = h.schema();
          rows = columnar.rows(ctx);
        } else {
          return;
        }
      } else {
        if (i < next || i >= ordered.size() || !(ordered.get(i) instanceof BatchStage stage) || schemaBefore[i] == null) {
          return;
        }
        b = stage;
        schema = schemaBefore[i];
        rows = length(i);
      }
      if (rows >= 0 && schema != null) {
        BatchBuilder.checkFits("batch(" + b.batchSize() + ")", schema, Math.min(b.batchSize(), rows), options.memory());
      }
    }

    /** The head's output without its first {@code skip} elements. */
    private Flux<?> head(long skip) {
      checkBatches(-1);
      return switch (head) {
        case REPEAT -> probe(repeat(skip), metrics, next, ordered.get(next - 1).operator());
        case INDEX -> probeSource(source, IndexPlan.plan((RandomAccessDataset<?>) source, ordered, options, ctx, skip, offset)
            .flux(), metrics, next, SourceNames.of(source) + (headGathers() ? " gather" : " read"));
        case COLUMNAR -> probeSource(source, columnar.flux(options, ctx, skip), metrics, next,
            SourceNames.of(source) + " decode");
        case SPLIT -> probeSource(source, SplitStages.plan((SplitDataset<?>) source, prefix, options, ctx, skip).flux(),
            metrics, next, SourceNames.of(source) + " read");
        case PLAIN -> probeSource(source, skip == 0 ? source.flux(ctx) : source.flux(ctx).skip(skip), metrics, next,
            SourceNames.of(source) + " read");
      };
    }

    /** Whether the index path's head gathers batches. */
    private boolean headGathers() {
      return ordered.subList(0, next).stream().anyMatch(s -> s.kind() == Stage.Kind.BATCH);
    }

    /** The number of elements of the head's output, or -1 when only reading tells. */
    private long headLength() {
      return switch (head) {
        case INDEX -> IndexPlan.length((RandomAccessDataset<?>) source, ordered, ctx, offset);
        case COLUMNAR -> columnar.length(ctx);
        case SPLIT -> SplitStages.length((SplitDataset<?>) source, prefix, ctx);
        case REPEAT, PLAIN -> -1;
      };
    }

    /** The number of elements of the output of stages {@code [0, end)}, or -1 when only reading tells. */
    long length(int end) {
      if (end <= next) {
        return headLength();
      }
      long in = length(end - 1);
      if (in < 0) {
        return -1;
      }
      Stage s = ordered.get(end - 1);
      return switch (s.kind()) {
        case TAKE -> Math.min(in, ((TakeStage) s).count());
        case SKIP -> Math.max(0, in - ((SkipStage) s).count());
        case BATCH -> batches(in, ((BatchStage) s).batchSize(), ((BatchStage) s).dropRemainder());
        case BUFFER_SHUFFLE -> in;
        case ELEMENT -> {
          long per = ((FluxStage) s).inputsPerOutput(options);
          if (per == 1) {
            yield in;
          }
          yield s instanceof PaddedBatchStage p ? batches(in, p.batchSize(), p.dropRemainder()) : -1;
        }
        case SHUFFLE, SHARD, REPEAT -> -1;
      };
    }

    private static long batches(long rows, int size, boolean dropRemainder) {
      return dropRemainder ? rows / size : (rows + size - 1) / size;
    }

    /**
     * The {@code repeat} head without its first {@code skip} elements: whole passes whose lengths
     * the planner knows are skipped without reading; the pass holding position {@code skip} starts
     * inside; with a pass of unknown length, the passes are read from the first one.
     */
    private Flux<?> repeat(long skip) {
      int r = next - 1;
      List<Stage> inner = List.copyOf(ordered.subList(0, r));
      long count = ((RepeatStage) ordered.get(r)).count();
      long end = count < 0 ? Long.MAX_VALUE : count;
      long i = 0;
      long k = skip;
      while (k > 0 && i < end) {
        long length = new Pass(source, inner, options, ctx.withEpoch(ctx.epoch() + i), 0).length(inner.size());
        if (length < 0 || (length == 0 && count < 0)) {
          return passes(inner, 0, end).skip(skip);
        }
        if (k < length) {
          break;
        }
        k -= length;
        i++;
      }
      if (i >= end) {
        return Flux.empty();
      }
      Flux<?> first = new Pass(source, inner, options, ctx.withEpoch(ctx.epoch() + i), 0).from(inner.size(), k);
      return Flux.concat(first, passes(inner, i + 1, end));
    }

    /** The passes of {@code inner} for epochs {@code ctx.epoch() + from ..} up to {@code + to}, one after another. */
    private Flux<?> passes(List<Stage> inner, long from, long to) {
      return longRange(from, to).concatMap(i -> compile(source, inner, options, ctx.withEpoch(ctx.epoch() + i)), 0);
    }
  }

  /**
   * Why the rest of an epoch of this pipeline cannot be re-partitioned among another number of
   * shards, or null when it can: that needs the index path with exactly one {@code shard}, no take
   * or skip after it (they cut each rank's part), and after it only stages whose counts follow
   * exactly (batch, paddedBatch, ordered map, prefetch), so that the elements every rank consumed
   * are a prefix of the shared order.
   */
  static String repartitionable(Dataset<?> source, List<Stage> ordered, Options options) {
    if (!(source instanceof RandomAccessDataset)) {
      return "re-partitioning the rest of an epoch needs the index path (a random-access source), and the source is "
          + source + "; resume with the same number of ranks, or at an epoch boundary";
    }
    if (lastRepeat(ordered) >= 0) {
      return "re-partitioning the rest of an epoch is not supported with repeat; resume with the same number of ranks";
    }
    int next = IndexPlan.planned(ordered);
    int shardAt = -1;
    for (int i = 0; i < ordered.size(); i++) {
      if (ordered.get(i).kind() == Stage.Kind.SHARD) {
        if (shardAt >= 0) {
          return "re-partitioning the rest of an epoch needs exactly one shard stage";
        }
        shardAt = i;
      }
    }
    if (shardAt < 0 || shardAt >= next) {
      return "re-partitioning the rest of an epoch needs the shard on the index path";
    }
    for (int i = shardAt + 1; i < ordered.size(); i++) {
      Stage s = ordered.get(i);
      boolean follows = switch (s.kind()) {
        case BATCH -> true;
        case ELEMENT -> ((FluxStage) s).inputsPerOutput(options) > 0;
        case TAKE, SKIP, SHUFFLE, SHARD, BUFFER_SHUFFLE, REPEAT -> false;
      };
      if (!follows) {
        return "re-partitioning the rest of an epoch needs the elements every rank consumed to be a prefix of the "
            + "shared order, and " + s.describe() + " after the shard changes that; resume with the same number of "
            + "ranks, or at an epoch boundary";
      }
    }
    return null;
  }

  /** The elements at the shard's output per element of the pipeline's output ({@link #repartitionable} pipelines). */
  static long elementsPerOutput(List<Stage> ordered, Options options) {
    long per = 1;
    boolean after = false;
    for (Stage s : ordered) {
      if (after) {
        per = saturatedMultiply(per, switch (s.kind()) {
          case BATCH -> ((BatchStage) s).batchSize();
          case ELEMENT -> ((FluxStage) s).inputsPerOutput(options);
          case TAKE, SKIP, SHUFFLE, SHARD, BUFFER_SHUFFLE, REPEAT -> 0;
        });
      }
      after |= s.kind() == Stage.Kind.SHARD;
    }
    return per;
  }

  private static long saturatedAdd(long a, long b) {
    long r = a + b;
    return ((a ^ r) & (b ^ r)) < 0 ? Long.MAX_VALUE : r;
  }

  private static long saturatedMultiply(long a, long b) {
    long hi = Math.multiplyHigh(a, b);
    long lo = a * b;
    return (hi == 0 && lo >= 0) ? lo : Long.MAX_VALUE;
  }

  /**
   * The threads a pass of {@code ordered} over {@code source} may keep busy at once: the consumer,
   * the producer of each prefetch, the workers of each parallel stage and of the source's decode.
   */
  static int busyThreads(Dataset<?> source, List<Stage> ordered) {
    int n = 1;
    for (Stage s : ordered) {
      n += switch (s.kind()) {
        case BATCH -> parallel(((BatchStage) s).numParallelCalls());
        case SHUFFLE, BUFFER_SHUFFLE, SHARD, TAKE, SKIP, REPEAT -> 0;
        case ELEMENT -> s instanceof PrefetchStage ? 1
            : s instanceof MapStage m ? parallel(m.numParallelCalls())
            : s instanceof InterleaveStage i ? parallel(i.numParallelCalls())
            : 0;
      };
    }
    if (source instanceof BatchSplitDataset<?> b && b.decodeParallelism() > 1) {
      n += b.decodeParallelism();
    }
    return n;
  }

  /** Workers of a stage with {@code numParallelCalls}: none when it runs on its caller's thread. */
  private static int parallel(int numParallelCalls) {
    int n = numParallelCalls < 0 ? Runtime.getRuntime().availableProcessors() : numParallelCalls;
    return n > 1 ? n : 0;
  }

  /** {@code flux} measured as the stage at {@code position}, or as it is when the pass measures nothing. */
  private static Flux<?> probe(Flux<?> flux, PassMetrics metrics, int position, String operator) {
    return metrics == null ? flux : measured(flux, metrics.stage(position, operator));
  }

  /** {@code flux} reporting its output to {@code meter}: by itself when it can ({@link SelfMeasured}), else through a probe. */
  private static Flux<?> measured(Flux<?> flux, StageMeter meter) {
    return flux instanceof SelfMeasured self ? self.measuredBy(meter) : new FluxStageProbe<>(flux, meter);
  }

  /**
   * {@code flux}, the output of the stage at {@code position} that reads {@code source}, measured as
   * {@link #probe} does; a source that counts outside its subscription ({@link StageCounters.Source})
   * reports to that stage.
   */
  private static Flux<?> probeSource(Dataset<?> source, Flux<?> flux, PassMetrics metrics, int position,
      String operator) {
    if (metrics == null) {
      return flux;
    }
    StageMeter meter = metrics.stage(position, operator);
    if (source instanceof StageCounters.Source counted) {
      counted.countInto(meter);
    }
    return measured(flux, meter);
  }

  /**
   * Whether a pass of {@code stages} emits {@link dev.sluice.core.Batch}es: a {@code batch} or
   * {@code paddedBatch} that no later stage turns back into other elements.
   */
  public static boolean emitsBatches(List<Stage> stages) {
    boolean batches = false;
    for (Stage s : normalize(stages)) {
      batches = switch (s.kind()) {
        case BATCH -> true;
        case SHUFFLE, BUFFER_SHUFFLE, SHARD, TAKE, SKIP, REPEAT -> batches;
        case ELEMENT -> s instanceof PaddedBatchStage || (batches && (s instanceof PrefetchStage || s instanceof FilterStage));
      };
    }
    return batches;
  }

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

  /** The stages in execution order, each with the path it runs on. */
  public static List<Step> explain(Dataset<?> source, List<Stage> stages) {
    List<Step> steps = new ArrayList<>();
    explain(source, normalize(stages), steps);
    return steps;
  }

  private static void explain(Dataset<?> source, List<Stage> ordered, List<Step> steps) {
    int repeat = lastRepeat(ordered);
    int next;
    if (repeat >= 0) {
      explain(source, ordered.subList(0, repeat), steps);
      steps.add(new Step(ordered.get(repeat), Path.ELEMENT, "runs the stages before it once per epoch"));
      next = repeat + 1;
    } else if (source instanceof RandomAccessDataset) {
      next = IndexPlan.planned(ordered);
      for (int i = 0; i < next; i++) {
        Stage s = ordered.get(i);
        steps.add(new Step(s, Path.INDEX, switch (s.kind()) {
          case SHUFFLE -> "global permutation per (seed, epoch)";
          case SHARD -> "the rank's stride of the positions";
          case TAKE, SKIP -> "position range";
          case BATCH -> "the source's gather into " + ((BatchStage) s).batchSize() + "-row batches";
          case BUFFER_SHUFFLE, REPEAT, ELEMENT -> "";
        }));
      }
    } else {
      ColumnarPlan columnar = ColumnarPlan.of(source, ordered);
      if (columnar != null) {
        next = columnar.next();
        for (int i = 0; i < next; i++) {
          Stage s = ordered.get(i);
          steps.add(new Step(s, Path.COLUMNAR, columnar.isBatchCut(s) ? "batch range" : columnar.explain(s)));
        }
      } else if (source instanceof SplitDataset) {
        SplitStages.Prefix prefix = SplitStages.prefix(ordered);
        next = prefix.next();
        for (int i = 0; i < next; i++) {
          Stage s = ordered.get(i);
          steps.add(new Step(s, Path.ELEMENT, switch (s.kind()) {
            case SHUFFLE -> SplitStages.explainShuffle((ShuffleStage) s) + ", then a buffer shuffle";
            case SHARD -> "reads " + SplitStages.explainShard(prefix) + " as examples";
            case BUFFER_SHUFFLE -> "buffer shuffle after the shard";
            case TAKE, SKIP, BATCH, REPEAT, ELEMENT -> "";
          }));
        }
      } else {
        next = 0;
      }
    }
    for (int i = next; i < ordered.size(); i++) {
      steps.add(new Step(ordered.get(i), Path.ELEMENT, ""));
    }
  }

  /** The schema of the examples after {@code stages} when it is {@code schema} before (null: unknown). */
  private static Schema schemaAfter(Schema schema, List<Stage> stages) {
    for (Stage s : stages) {
      schema = schemaAfter(schema, s);
    }
    return schema;
  }

  /** The schema after one stage on the element path when it is {@code in} before (null: unknown). */
  private static Schema schemaAfter(Schema in, Stage s) {
    return switch (s.kind()) {
      case SHUFFLE, SHARD, TAKE, SKIP -> in;
      case BATCH, REPEAT -> null;
      case BUFFER_SHUFFLE, ELEMENT -> ((FluxStage) s).schemaAfter(in);
    };
  }

  /** A stage on the element path: its Flux transformer. */
  private record ElementPath(Flux<?> flux, Schema schema, Options options, PipelineContext ctx, int busyThreads)
      implements Stage.Visitor<Flux<?>> {
    @Override
    public Flux<?> shuffle(ShuffleStage s) {
      throw new UnsupportedOperationException(s.describe() + " is the global shuffle of a random-access source and "
          + "must come before any element operator; a streaming source needs the buffer shuffle shuffle(bufferSize)");
    }

    @Override
    public Flux<?> bufferShuffle(BufferShuffleStage s) {
      return s.apply(flux, ctx, options);
    }

    @Override
    @SuppressWarnings("unchecked")
    public Flux<?> shard(ShardStage s) {
      return ((Flux<Object>) flux).transform(ShardOperator.of(s.numShards(), s.index(), s.policy()));
    }

    @Override
    public Flux<?> take(TakeStage s) {
      return flux.take(s.count());
    }

    @Override
    public Flux<?> skip(SkipStage s) {
      return flux.skip(s.count());
    }

    @Override
    @SuppressWarnings("unchecked")
    public Flux<?> batch(BatchStage b) {
      Flux<Example> examples = (Flux<Example>) flux; // collate checks each element is an Example
      return examples.transform(BatchOperator.of(b.batchSize(), b.dropRemainder(), schema, options.memory().pool("batch"),
          b.numParallelCalls()));
    }

    @Override
    public Flux<?> repeat(RepeatStage s) {
      throw new IllegalStateException("repeat is compiled before the element path: " + s.describe());
    }

    @Override
    public Flux<?> element(FluxStage s) {
      return s instanceof PrefetchStage p ? p.apply(flux, busyThreads) : s.apply(flux, ctx, options);
    }
  }

  /** {@code from, from+1, .., to-1} as a lazy flux. */
  public static Flux<Long> longRange(long from, long to) {
    return Flux.generate(() -> from, (i, sink) -> {
      if (i < to) {
        sink.next(i);
      } else {
        sink.complete();
      }
      return i + 1;
    });
  }
}
