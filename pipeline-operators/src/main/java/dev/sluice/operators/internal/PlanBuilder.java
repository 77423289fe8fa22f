package dev.sluice.operators.internal;

import dev.sluice.core.Access;
import dev.sluice.core.BatchSplitDataset;
import dev.sluice.core.Dataset;
import dev.sluice.core.Options;
import dev.sluice.core.RandomAccessDataset;
import dev.sluice.core.Schema;
import dev.sluice.core.SplitDataset;
import dev.sluice.core.spi.StageCounters;
import dev.sluice.operators.internal.Plan.Element;
import dev.sluice.operators.internal.Plan.Head;
import dev.sluice.operators.internal.Plan.Path;
import dev.sluice.operators.internal.Plan.Pushdown;
import dev.sluice.operators.internal.Plan.Step;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.function.LongUnaryOperator;

/**
 * Builds a pipeline's {@link Plan} (docs/architecture.md, the plan): the one place that tells
 * sources and stages apart; everything else reads the plan. Sources are told apart by their declared
 * {@link Access} and by {@code instanceof} tests of the interfaces they implement (random access,
 * splits, batch splits, mixes, samples). Stages are told apart by {@code switch}es over
 * {@link Stage.Kind} (switch expressions, which the compiler checks cover every kind, and one
 * switch statement, which fails on a kind it does not handle), by {@code instanceof} chains over
 * their classes (to find the batch and shard stages, and to tell apart the element stages that one
 * kind covers: rebatch, unbatch, interleave, prefetch, padded batch), and by the stages' own
 * properties.
 *
 * <p>The head is chosen in this order: a {@code repeat} (the last one) heads the plan and runs
 * everything before it once per epoch; else a {@link Access#RANDOM} source runs its leading
 * shuffle / shard / take / skip, an optional {@code batch} and the take / skip after it on the
 * index path; else a {@link Access#BLOCKS} source that decodes into batches and knows its row counts
 * runs shuffle / shard / take / skip / a buffer shuffle before {@code batch} on the columnar path;
 * else a {@code BLOCKS} source reads the rank's row ranges of its leading shuffle and shard as
 * elements (the split plan); else nothing is fused. Every stage after the head runs on the element
 * path.
 */
public final class PlanBuilder {
  private PlanBuilder() {}

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

  /** The plan of {@code source} through {@code stages} (in the order the user wrote them) with {@code options}. */
  public static Plan build(Dataset<?> source, List<Stage> stages, Options options) {
    return plan(source, List.copyOf(normalize(stages)), options);
  }

  private static Plan plan(Dataset<?> source, List<Stage> ordered, Options options) {
    Access access = source.access();
    RandomAccessDataset<?> random = null;
    if (access == Access.RANDOM) {
      if (!(source instanceof RandomAccessDataset<?> r)) {
        throw new IllegalStateException(source + " declares random access but is not a RandomAccessDataset");
      }
      random = r;
    }
    if (access == Access.BLOCKS && !(source instanceof SplitDataset)) {
      throw new IllegalStateException(source + " declares block access but is not a SplitDataset");
    }
    SplitDataset<?> splits = source instanceof SplitDataset<?> s ? s : null;
    int repeatAt = lastRepeat(ordered);
    // under a repeat the choice is the inner plan's, recorded here for the checkpoint's shape
    ShuffleChoice choice = random == null ? null
        : ShuffleChoice.of(random, repeatAt < 0 ? ordered : ordered.subList(0, repeatAt), options);
    boolean blocks = repeatAt < 0 && choice != null && choice.blocks();
    RandomAccessBlocks<?> view = null;
    StageCounters.Source counted = source instanceof StageCounters.Source c ? c : null;

    int repeat = lastRepeat(ordered);
    Head head;
    int next;
    Plan inner = null;
    long repeatCount = 0;
    ColumnarPlan columnar = null;
    SplitStages.Prefix prefix = null;
    if (repeat >= 0) {
      head = Head.REPEAT;
      next = repeat + 1;
      inner = plan(source, List.copyOf(ordered.subList(0, repeat)), options);
      repeatCount = ((RepeatStage) ordered.get(repeat)).count();
    } else if (source instanceof MixSource<?>) {
      head = Head.MIX;
      next = 0;
    } else if (blocks) {
      view = RandomAccessBlocks.of(random, options.memory().pool("batch"), options.shuffleBlockBytes());
      view.announcesTo(splits);
      List<Stage> asBlocks = choice.asBlocks(ordered);
      if (view instanceof BatchSplitDataset<?> b && (columnar = ColumnarPlan.of(b, asBlocks)) != null) {
        head = Head.COLUMNAR;
        next = columnar.next();
      } else {
        head = Head.SPLIT;
        prefix = SplitStages.prefix(asBlocks);
        next = prefix.next();
      }
    } else if (access == Access.RANDOM) {
      head = Head.INDEX;
      next = IndexPlan.planned(ordered);
    } else if (access == Access.BLOCKS && (columnar = columnar(source, ordered)) != null) {
      head = Head.COLUMNAR;
      next = columnar.next();
    } else if (access == Access.BLOCKS) {
      head = Head.SPLIT;
      // a source that decodes into batches: the element stages receive views of its batches' rows
      prefix = SplitStages.prefix(ordered).readingBatches(source instanceof BatchSplitDataset<?> b ? b : null);
      next = prefix.next();
    } else {
      head = Head.PLAIN;
      next = 0;
    }
    List<Stage> headStages = ordered.subList(0, next);
    BatchStage headBatch = head == Head.INDEX || head == Head.COLUMNAR ? firstBatch(headStages) : null;
    boolean headPositional = switch (head) {
      case INDEX -> headBatch == null;
      case SPLIT -> prefix.buffers().isEmpty();
      case REPEAT, COLUMNAR, MIX, PLAIN -> false;
    };

    Schema schema = switch (head) {
      case REPEAT -> schemaAfter(Schemas.declared(source), ordered.subList(0, repeat));
      case INDEX -> headBatch == null ? Schemas.declared(source) : null;
      case COLUMNAR -> null;
      case SPLIT, MIX, PLAIN -> Schemas.declared(source);
    };
    List<Element> elements = new ArrayList<>(Collections.nCopies(ordered.size(), null));
    for (int i = next; i < ordered.size(); i++) {
      Stage s = ordered.get(i);
      elements.set(i, element(s, schema, options, batchRows(ordered, next, headBatch, i)));
      schema = schemaAfter(schema, s);
    }

    List<String> probes = new ArrayList<>(Collections.nCopies(ordered.size() + 1, null));
    probes.set(next, switch (head) {
      case REPEAT -> ordered.get(repeat).operator();
      case INDEX -> SourceNames.of(source) + (headBatch != null ? " gather" : " read");
      case COLUMNAR -> SourceNames.of(source) + " decode";
      case SPLIT, PLAIN -> SourceNames.of(source) + " read";
      case MIX -> ((MixSource<?>) source).operator();
    });
    for (int i = next; i < ordered.size(); i++) {
      probes.set(i + 1, ordered.get(i).operator());
    }

    ShardStage shard = firstShard(ordered);
    if (shard == null && source instanceof MixSource<?> mix) {
      shard = mix.shard(); // the rank a mix's sources read, which a checkpoint records
    }
    String notRepartitionable = blocks ? "re-partitioning the rest of an epoch needs the global shuffle, and " + source
        + " is block-shuffled; resume with the same number of ranks, or at an epoch boundary"
        : notRepartitionable(source, access, ordered, options);
    int shardAt = notRepartitionable == null ? ordered.indexOf(shard) : -1;
    List<Step> steps = new ArrayList<>();
    int foldedAhead = head == Head.INDEX && headBatch != null && headBatch.numParallelCalls() > 1
        && next < ordered.size() && ordered.get(next) instanceof PrefetchStage p && p.bufferSize() > 0
        ? IndexPlan.foldedAhead(p.bufferSize(), headBatch.numParallelCalls()) : 0;
    explain(ordered, head, next, inner, columnar, prefix, foldedAhead, choice, steps);
    return new Plan(source, access, random, splits, counted, options, ordered, head, next, inner, repeatCount,
        columnar, prefix, headBatch, headPositional, Collections.unmodifiableList(elements),
        Collections.unmodifiableList(probes), threads(source, ordered), emitsBatches(ordered),
        acceptsShuffle(access, ordered), shard, shapeKeys(source, ordered, choice),
        unresumable(source, ordered, options),
        notRepartitionable, shardAt, notRepartitionable == null ? elementsPerOutput(ordered, options) : 0,
        List.copyOf(steps), foldedAhead, view);
  }

  /**
   * The schema of the examples a pass of {@code plan} emits when the source declares one and the
   * stages keep it known, else null (batches, or a stage that does not say).
   */
  public static Schema outputSchema(Plan plan) {
    if (plan.headBatch() != null) {
      return null;
    }
    if (plan.head() == Head.REPEAT) {
      return schemaAfter(outputSchema(plan.inner()), plan.ordered().subList(plan.next(), plan.ordered().size()));
    }
    return schemaAfter(Schemas.declared(plan.source()), plan.ordered());
  }

  /** How the pipelines a mix source combines run, for {@code explain}, each line indented; empty for any other source. */
  public static String explainSources(Dataset<?> source, String indent) {
    return source instanceof MixSource<?> mix ? mix.explainSources(indent) : "";
  }

  /**
   * Refuses a {@code shard(numShards, index)} appended to a pipeline over a {@code sample}: each rank
   * draws its own mix, so striding it would partition nothing; each source is sharded instead.
   */
  public static void checkShard(Dataset<?> source, int numShards, int index) {
    if (source instanceof SampleSource<?>) {
      String shard = "shard(" + numShards + ", " + index + ")";
      throw new IllegalArgumentException(shard + " after sample: each rank draws its own mix (from seed, epoch and "
          + "rank), so striding it partitions nothing; shard each source instead: sample(List.of(a." + shard + ", b."
          + shard + "), weights)");
    }
  }

  /** The number of rows of {@code source} when its access is {@link Access#RANDOM}, else -1. */
  static long size(Dataset<?> source) {
    return source.access() == Access.RANDOM && source instanceof RandomAccessDataset<?> r ? r.size() : -1;
  }

  /** The columnar plan of {@code ordered} over a split source, or null when the path does not apply. */
  private static ColumnarPlan columnar(Dataset<?> source, List<Stage> ordered) {
    if (!(source instanceof BatchSplitDataset<?> batches) || !SplitPlan.knownCounts(batches.splits())) {
      return null;
    }
    return ColumnarPlan.of(batches, ordered);
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

  private static BatchStage firstBatch(List<Stage> stages) {
    for (Stage s : stages) {
      if (s instanceof BatchStage b) {
        return b;
      }
    }
    return null;
  }

  private static ShardStage firstShard(List<Stage> ordered) {
    for (Stage s : ordered) {
      if (s instanceof ShardStage sh) {
        return sh;
      }
    }
    return null;
  }

  /** What stage {@code s} does on the element path when it receives examples of {@code schema}. */
  private static Element element(Stage s, Schema schema, Options options, int batchRows) {
    Pushdown pushdown = Pushdown.REPLAY;
    long factor = 0;
    InterleaveStage interleave = null;
    LongUnaryOperator count;
    switch (s.kind()) {
      case SKIP -> {
        long n = ((SkipStage) s).count();
        pushdown = Pushdown.ADD;
        factor = n;
        count = in -> Math.max(0, in - n);
      }
      case TAKE -> {
        long n = ((TakeStage) s).count();
        pushdown = Pushdown.TAKE;
        factor = n;
        count = in -> Math.min(in, n);
      }
      case BATCH -> {
        BatchStage b = (BatchStage) s;
        pushdown = Pushdown.SCALE;
        factor = b.batchSize();
        count = in -> batches(in, b.batchSize(), b.dropRemainder());
      }
      case BUFFER_SHUFFLE -> {
        pushdown = Pushdown.BUFFER;
        count = in -> in;
      }
      case ELEMENT -> {
        FluxStage f = (FluxStage) s;
        long per = f.inputsPerOutput(options);
        if (f.countsPositions()) {
          pushdown = Pushdown.POSITION;
          factor = 1;
        } else if (per > 0) {
          pushdown = Pushdown.SCALE;
          factor = per;
        } else if (s instanceof RebatchStage && batchRows > 0) {
          pushdown = Pushdown.REBATCH;
          factor = batchRows;
        } else if (s instanceof UnbatchStage && batchRows > 0) {
          pushdown = Pushdown.UNBATCH;
          factor = batchRows;
        } else if (s instanceof InterleaveStage i && i.deterministic()) {
          pushdown = Pushdown.INTERLEAVE;
          interleave = i;
        }
        count = in -> f.outputsFor(in, options);
      }
      case SHUFFLE, SHARD, REPEAT -> count = in -> -1;
      default -> throw new IllegalStateException(s.describe());
    }
    boolean oneToOne = s.kind() == Stage.Kind.ELEMENT && ((FluxStage) s).inputsPerOutput(options) == 1
        && !((FluxStage) s).countsPositions();
    BatchStage batch = s instanceof BatchStage b && schema != null ? b : null;
    BufferShuffleStage buffer = s instanceof BufferShuffleStage b ? b : null;
    return new Element(s, schema, pushdown, factor, oneToOne, count, batch, buffer, interleave);
  }

  private static long batches(long rows, int size, boolean dropRemainder) {
    return dropRemainder ? rows / size : (rows + size - 1) / size;
  }

  /**
   * The rows of the batches that stage {@code i} receives, when every batch but the last has that
   * many (a {@code batch}, {@code paddedBatch} or {@code rebatch} before it, through prefetch stages
   * only), or 0.
   */
  private static int batchRows(List<Stage> ordered, int next, BatchStage headBatch, int i) {
    int j = i - 1;
    while (j >= next && ordered.get(j) instanceof PrefetchStage) {
      j--;
    }
    if (j >= next) {
      Stage s = ordered.get(j);
      return s instanceof BatchStage b ? b.batchSize() : s instanceof PaddedBatchStage p ? p.batchSize()
          : s instanceof RebatchStage r ? r.batchSize() : 0;
    }
    return headBatch == null ? 0 : headBatch.batchSize();
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

  /**
   * The threads a pass of {@code ordered} over {@code source} may keep busy at once: the consumer,
   * the workers of each stage ({@link Stage#workers()}) and of the source's decode.
   */
  private static int threads(Dataset<?> source, List<Stage> ordered) {
    int n = 1;
    for (Stage s : ordered) {
      n += s.workers();
    }
    if (source instanceof BatchSplitDataset<?> b && b.decodeParallelism() > 1) {
      n += b.decodeParallelism();
    }
    if (source instanceof MixSource<?> mix) {
      for (PlannedDataset<?> s : mix.sources()) {
        n += s.threads() - 1; // each source's own workers; the consumer is the mix's
      }
    }
    return n;
  }

  /** Whether a pass emits batches: a {@code batch} or {@code paddedBatch} that no later stage turns into other elements. */
  private static boolean emitsBatches(List<Stage> ordered) {
    boolean batches = false;
    for (Stage s : ordered) {
      batches = switch (s.kind()) {
        case BATCH -> true;
        case SHUFFLE, BUFFER_SHUFFLE, SHARD, TAKE, SKIP, REPEAT -> batches;
        case ELEMENT -> ((FluxStage) s).emitsBatches(batches);
      };
    }
    return batches;
  }

  /**
   * Whether {@code shuffle()} appended to {@code ordered} is planned: on a random-access source after
   * index stages only (the global permutation), on a split source after shuffles and a shard only
   * (the block or split-order shuffle).
   */
  private static boolean acceptsShuffle(Access access, List<Stage> ordered) {
    boolean index = true;
    boolean arranged = true;
    for (Stage s : ordered) {
      index &= IndexPlan.isIndexStage(s);
      arranged &= switch (s.kind()) {
        case SHUFFLE, BUFFER_SHUFFLE, SHARD -> true;
        case TAKE, SKIP, BATCH, REPEAT, ELEMENT -> false;
      };
    }
    return access == Access.RANDOM ? index : access == Access.BLOCKS && arranged;
  }

  /** The shape a state records: the stages in execution order, each as {@link Stage#shapeKey()}. */
  private static List<String> shapeKeys(Dataset<?> source, List<Stage> ordered, ShuffleChoice choice) {
    List<String> out = new ArrayList<>();
    if (source instanceof MixSource<?> mix) {
      out.add(mix.shapeKey());
    }
    for (Stage s : ordered) {
      String key = choice != null && s == choice.stage() ? choice.shapeKey() : s.shapeKey();
      if (key != null) {
        out.add(key);
      }
    }
    return List.copyOf(out);
  }

  /** Why a position in the output cannot be resumed exactly, or null when it can. */
  private static String unresumable(Dataset<?> source, List<Stage> ordered, Options options) {
    if (source instanceof MixSource<?> mix) {
      String why = mix.unresumable();
      if (why != null) {
        return why;
      }
    }
    for (Stage s : ordered) {
      String why = switch (s.kind()) {
        case ELEMENT, BUFFER_SHUFFLE -> ((FluxStage) s).unresumable(options);
        case SHUFFLE, SHARD, TAKE, SKIP, BATCH, REPEAT -> null;
      };
      if (why != null) {
        return "this pipeline cannot be resumed exactly: " + why;
      }
    }
    return null;
  }

  /**
   * Why the rest of an epoch cannot be re-partitioned among another number of shards, or null when
   * it can: that needs the index path with exactly one {@code shard}, no take or skip after it (they
   * cut each rank's part), and after it only stages whose counts follow exactly (batch,
   * paddedBatch, ordered map, prefetch), so that the elements every rank consumed are a prefix of
   * the shared order.
   */
  private static String notRepartitionable(Dataset<?> source, Access access, List<Stage> ordered, Options options) {
    if (access != Access.RANDOM) {
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

  /** The elements at the shard's output per element of the pipeline's output (re-partitionable pipelines). */
  private static long elementsPerOutput(List<Stage> ordered, Options options) {
    long per = 1;
    boolean after = false;
    for (Stage s : ordered) {
      if (after) {
        per = Saturated.multiply(per, switch (s.kind()) {
          case BATCH -> ((BatchStage) s).batchSize();
          case ELEMENT -> ((FluxStage) s).inputsPerOutput(options);
          case TAKE, SKIP, SHUFFLE, SHARD, BUFFER_SHUFFLE, REPEAT -> 0;
        });
      }
      after |= s.kind() == Stage.Kind.SHARD;
    }
    return per;
  }

  /** Each stage of the plan in execution order with the path it runs on and what that path does with it. */
  private static void explain(List<Stage> ordered, Head head, int next, Plan inner, ColumnarPlan columnar,
      SplitStages.Prefix prefix, int foldedAhead, ShuffleChoice choice, List<Step> steps) {
    for (int i = 0; i < next; i++) {
      Stage s = ordered.get(i);
      switch (head) {
        case REPEAT -> {
          if (i == next - 1) {
            steps.addAll(inner.steps());
            steps.add(new Step(s, Path.ELEMENT, "runs the stages before it once per epoch"));
          }
        }
        case INDEX -> steps.add(new Step(s, Path.INDEX, switch (s.kind()) {
          case SHUFFLE -> choice != null && s == choice.stage() ? choice.why()
              : "global permutation per (seed, epoch)";
          case SHARD -> "the rank's stride of the positions";
          case TAKE, SKIP -> "position range";
          case BATCH -> "the source's gather into " + ((BatchStage) s).batchSize() + "-row batches";
          case BUFFER_SHUFFLE, REPEAT, ELEMENT -> "";
        }));
        case COLUMNAR -> steps.add(new Step(s, Path.COLUMNAR, columnar.isBatchCut(s) ? "batch range"
            : choice != null && s == choice.stage() ? choice.why() + "; " + columnar.explainWindow()
            : columnar.explain(s)));
        case SPLIT -> steps.add(new Step(s, Path.ELEMENT, switch (s.kind()) {
          case SHUFFLE -> choice != null && s == choice.stage() ? choice.why() + ", then a buffer shuffle"
              : SplitStages.explainShuffle((ShuffleStage) s) + ", then a buffer shuffle";
          case SHARD -> "reads " + SplitStages.explainShard(prefix)
              + (prefix.batches() != null ? " as views of its decoded batches' rows" : " as examples");
          case BUFFER_SHUFFLE -> "buffer shuffle after the shard";
          case TAKE, SKIP, BATCH, REPEAT, ELEMENT -> "";
        }));
        case MIX, PLAIN -> throw new IllegalStateException("the element path fuses no stage");
      }
    }
    for (int i = next; i < ordered.size(); i++) {
      steps.add(new Step(ordered.get(i), Path.ELEMENT, i == next && foldedAhead > 0
          ? "folded into the parallel gather: each worker holds up to " + foldedAhead + " batches, no prefetch thread"
          : ""));
    }
  }
}
