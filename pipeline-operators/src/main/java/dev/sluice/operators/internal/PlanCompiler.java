package dev.sluice.operators.internal;

import dev.sluice.core.BatchSplitDataset;
import dev.sluice.core.Dataset;
import dev.sluice.core.Example;
import dev.sluice.core.Options;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.RandomAccessDataset;
import dev.sluice.core.Schema;
import dev.sluice.core.SplitDataset;
import dev.sluice.core.StageCounters;
import dev.sluice.core.internal.metrics.FluxStageProbe;
import dev.sluice.core.internal.metrics.PassMetrics;
import dev.sluice.core.internal.metrics.StageMeter;
import dev.sluice.operators.Batching;
import dev.sluice.operators.Shard;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import reactor.core.publisher.Flux;

/**
 * Turns a source and its stages into one pass (docs/design.md, the planner). The leading stages run
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
   * goes through a {@link FluxStageProbe}: the leading stages a path fuses (index, columnar, split
   * read) as one stage named after the path, then every element-path stage; otherwise nothing is
   * added to the pass.
   */
  public static Flux<?> compile(Dataset<?> source, List<Stage> stages, Options options, PipelineContext context) {
    List<Stage> ordered = normalize(stages);
    PassMetrics metrics = PassMetrics.of(options, ordered.size() + 1);
    int repeat = lastRepeat(ordered);
    Flux<?> flux;
    Schema schema;
    int next;
    ColumnarPlan columnar;
    if (repeat >= 0) {
      List<Stage> inner = List.copyOf(ordered.subList(0, repeat));
      long count = ((RepeatStage) ordered.get(repeat)).count();
      flux = probe(longRange(0, count < 0 ? Long.MAX_VALUE : count)
          .concatMap(i -> compile(source, inner, options, context.withEpoch(context.epoch() + i)), 0),
          metrics, repeat + 1, ordered.get(repeat).operator());
      schema = schemaAfter(Schemas.declared(source), inner);
      next = repeat + 1;
    } else if (source instanceof RandomAccessDataset<?> ra) {
      IndexPlan.Planned planned = IndexPlan.plan(ra, ordered, options, context);
      boolean gathers = ordered.subList(0, planned.next()).stream().anyMatch(s -> s.kind() == Stage.Kind.BATCH);
      flux = probeSource(source, planned.flux(), metrics, planned.next(), SourceNames.of(source) + (gathers ? " gather" : " read"));
      schema = planned.schema();
      next = planned.next();
    } else if ((columnar = ColumnarPlan.of(source, ordered)) != null) {
      flux = probeSource(source, columnar.flux(options, context), metrics, columnar.next(),
          SourceNames.of(source) + " decode");
      schema = null;
      next = columnar.next();
    } else if (source instanceof SplitDataset<?> split) {
      SplitStages.Planned planned = SplitStages.plan(split, SplitStages.prefix(ordered), options, context);
      flux = probeSource(source, planned.flux(), metrics, planned.next(), SourceNames.of(source) + " read");
      schema = Schemas.declared(source);
      next = planned.next();
    } else {
      flux = probeSource(source, source.flux(context), metrics, 0, SourceNames.of(source) + " read");
      schema = Schemas.declared(source);
      next = 0;
    }
    int busy = busyThreads(source, ordered);
    for (int i = next; i < ordered.size(); i++) {
      Stage s = ordered.get(i);
      flux = probe(s.accept(new ElementPath(flux, schema, options, context, busy)), metrics, i + 1, s.operator());
      schema = schemaAfter(schema, s);
    }
    return flux;
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
    return metrics == null ? flux : new FluxStageProbe<>(flux, metrics.stage(position, operator));
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
    return new FluxStageProbe<>(flux, meter);
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
        next = SplitStages.prefix(ordered).next();
        for (int i = 0; i < next; i++) {
          Stage s = ordered.get(i);
          steps.add(new Step(s, Path.ELEMENT, switch (s.kind()) {
            case SHUFFLE -> "split order shuffled per (seed, epoch), then a buffer shuffle";
            case SHARD -> "reads the rank's contiguous rows of the split sequence as examples";
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
      return ((Flux<Object>) flux).transform(Shard.of(s.numShards(), s.index(), s.policy()));
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
      return examples.transform(Batching.of(b.batchSize(), b.dropRemainder(), schema, options.memory().pool("batch"),
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
  static Flux<Long> longRange(long from, long to) {
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
