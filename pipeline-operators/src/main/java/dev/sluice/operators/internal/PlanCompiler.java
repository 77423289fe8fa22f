package dev.sluice.operators.internal;

import dev.sluice.core.Batch;
import dev.sluice.core.Dataset;
import dev.sluice.core.Example;
import dev.sluice.core.Options;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.Schema;
import dev.sluice.core.internal.metrics.FluxStageProbe;
import dev.sluice.core.internal.metrics.PassMetrics;
import dev.sluice.core.internal.metrics.SelfMeasured;
import dev.sluice.core.internal.metrics.StageMeter;
import dev.sluice.core.spi.BatchBuilder;
import java.util.List;
import reactor.core.publisher.Flux;

/**
 * Turns a {@link Plan} into one pass (docs/architecture.md, the plan): the head's path
 * ({@link IndexPlan}, {@link ColumnarPlan}, {@link SplitStages}, the source's own pass, or the
 * passes of a {@code repeat}), then each later stage as a Flux transformer on the element path. It
 * decides nothing about paths: the plan says which head runs, how a resume skip passes each stage,
 * which positions are measured and how many threads the pass may keep busy.
 */
public final class PlanCompiler {
  private PlanCompiler() {}

  /**
   * One pass of {@code source} through {@code stages} for {@code context}, planned for this pass
   * ({@link PlanBuilder#build}).
   */
  public static Flux<?> compile(Dataset<?> source, List<Stage> stages, Options options, PipelineContext context) {
    return compile(PlanBuilder.build(source, stages, options), context, 0, 0);
  }

  /**
   * One pass of {@code plan} for {@code context} without its first {@code skip} elements, computed
   * as cheaply as each path allows ({@link Pass}): the elements are exactly those of the whole pass
   * from position {@code skip} on. When the options carry a metrics registry, or a flight recording
   * enables Sluice's events, each of the plan's probes measures its position's output (by the stage
   * itself when it can, {@link SelfMeasured}, else through a {@link FluxStageProbe}); otherwise
   * nothing is added to the pass.
   *
   * @param offset positions of the epoch's shared order that an earlier world of ranks consumed
   *     before the index path's {@code shard} partitions the rest (0 but after a resume with another
   *     number of ranks)
   */
  public static Flux<?> compile(Plan plan, PipelineContext context, long skip, long offset) {
    return new Pass(plan, context, offset).from(plan.ordered().size(), skip);
  }

  /**
   * The number of elements of the pass of {@code plan} for {@code context}, when the planner knows it
   * without reading (the index and columnar paths, split sources with known row counts, and the
   * stages after them whose counts follow: take, skip, batch, ordered map, prefetch, buffer
   * shuffle), or -1.
   */
  public static long length(Plan plan, PipelineContext context, long offset) {
    return length(plan, context, offset, plan.ordered().size());
  }

  /** The number of elements of the output of the plan's stages {@code [0, end)}, or -1 when only reading tells. */
  private static long length(Plan plan, PipelineContext ctx, long offset, int end) {
    long n = switch (plan.head()) {
      case INDEX -> IndexPlan.length(plan.random(), plan.ordered(), ctx, offset);
      case COLUMNAR -> plan.columnar().length(ctx);
      case SPLIT -> SplitStages.length(plan.splitHead(), plan.prefix(), ctx);
      case MIX -> ((MixSource<?>) plan.source()).cardinality(ctx);
      case REPEAT, PLAIN -> -1;
    };
    for (int i = plan.next(); i < end && n >= 0; i++) {
      n = plan.stages().get(i).count().applyAsLong(n);
    }
    return n;
  }

  /**
   * One pass, compiled from its plan: the head, then the element path's stages. A pass that starts
   * after its first {@code k} elements ({@link #from}) pushes {@code k} back through the element
   * stages to the head as each stage's {@link Plan.Pushdown} says (take, skip, batch ×B, paddedBatch
   * ×B, ordered map, prefetch, unbatch or rebatch after a batch, enumerate counting from {@code k}): the head
   * then starts at that position without reading what comes before (the index path computes from a position, the columnar path decodes
   * from a row, a split source reads from a row). A buffer shuffle over an addressable stream is
   * recomputed from positions ({@link BufferShuffleResume}). A deterministic interleave whose
   * datasets' lengths are known runs its cycle on counts and resumes each open dataset from its
   * offset ({@link InterleaveResume}). Any other stage is replayed: its input is read from the start
   * of the pass and its first outputs are dropped.
   */
  private static final class Pass {
    private final Plan plan;
    private final List<Stage> ordered;
    private final Options options;
    private final PipelineContext ctx;
    private final long offset;
    private final int next;
    private final PassMetrics metrics; // null: the pass measures nothing

    Pass(Plan plan, PipelineContext ctx, long offset) {
      this.plan = plan;
      this.ordered = plan.ordered();
      this.options = plan.options();
      this.ctx = ctx;
      this.offset = offset;
      this.next = plan.next();
      this.metrics = PassMetrics.of(options, ordered.size() + 1);
    }

    /** The output of stages {@code [0, end)} without its first {@code skip} elements. */
    Flux<?> from(int end, long skip) {
      if (end <= next) {
        return head(skip);
      }
      int i = end - 1;
      Plan.Element e = plan.stages().get(i);
      Stage s = e.stage();
      if (e.pushdown() == Plan.Pushdown.ADD) {
        return from(i, Saturated.add(skip, e.factor())); // what is skipped is never produced
      }
      if (i == next && plan.foldedAhead() > 0) { // the prefetch is folded into the parallel gather
        checkBatches(-1);
        return probe(probeSource(IndexPlan.plan(plan.random(), ordered, options, ctx, skip, offset,
            plan.foldedAhead()).flux()), i + 1);
      }
      if (s.kind() == Stage.Kind.BATCH && i - 1 >= next
          && plan.stages().get(i - 1).pushdown() == Plan.Pushdown.UNBATCH) {
        // an unbatch of a batch's batches right before this batch
        BatchStage b = (BatchStage) s;
        long f = plan.stages().get(i - 1).factor();
        long rows = Saturated.multiply(skip, b.batchSize());
        return rebatch(from(i - 1, rows / f), b, rows % f, i);
      }
      if (skip == 0) {
        return apply(from(i, 0), i);
      }
      switch (e.pushdown()) {
        case TAKE -> {
          return apply(from(i, skip), new TakeStage(Math.max(0, e.factor() - skip)), i);
        }
        case SCALE -> {
          return apply(from(i, Saturated.multiply(skip, e.factor())), i);
        }
        case UNBATCH -> {
          return apply(from(i, skip / e.factor()), i).skip(skip % e.factor());
        }
        case REBATCH -> {
          checkBatches(i);
          RebatchStage r = (RebatchStage) s;
          long rows = Saturated.multiply(skip, r.batchSize());
          return probe(r.applyFrom(from(i, rows / e.factor()), rows % e.factor(), options.memory().pool("batch")), i + 1);
        }
        case POSITION -> {
          checkBatches(i);
          return probe(((FluxStage) s).applyFrom(from(i, skip), skip, ctx, options), i + 1);
        }
        case BUFFER -> {
          Positional in = positional(i);
          if (in != null) {
            return probe(BufferShuffleResume.resume(in, e.buffer(), ctx, skip), i + 1);
          }
        }
        case INTERLEAVE -> {
          return InterleaveResume.resume(from(i, 0), n -> from(i, n), e.interleave(), ctx, options, skip,
              () -> from(end, 0).skip(skip), out -> probe(out, end));
        }
        case ADD, REPLAY -> {
          // a skip is pushed down above; the others are replayed below
        }
      }
      return from(end, 0).skip(skip);
    }

    /** Stage {@code i} of the plan applied on the element path to {@code flux}. */
    private Flux<?> apply(Flux<?> flux, int i) {
      return apply(flux, ordered.get(i), i);
    }

    /** {@code s}, standing for stage {@code i} of the plan, applied on the element path to {@code flux}. */
    private Flux<?> apply(Flux<?> flux, Stage s, int i) {
      checkBatches(i);
      Schema schema = plan.stages().get(i).schemaBefore();
      return probe(s.accept(new ElementPath(flux, schema, options, ctx, plan.threads())), i + 1);
    }

    /**
     * The batch at {@code i} after the unbatch at {@code i - 1}, applied to the unbatch's input
     * batches without their first {@code skipRows} rows: the rows are re-cut into the batch's batches
     * without an example per row where the batches allow it ({@link RebatchOperator#rebatch}).
     */
    private Flux<?> rebatch(Flux<?> batches, BatchStage b, long skipRows, int i) {
      checkBatches(i);
      Flux<Batch> in = batches.map(UnbatchStage::batch);
      return probe(RebatchOperator.rebatch(in, b.batchSize(), b.dropRemainder(), skipRows,
          options.memory().pool("batch"), b.numParallelCalls()), i + 1);
    }

    /** The output of stages {@code [0, end)} as a positional stream, or null when it is not one. */
    private Positional positional(int end) {
      if (end <= next) {
        if (!plan.headPositional()) {
          return null;
        }
        return switch (plan.head()) {
          case INDEX -> IndexPlan.positional(plan.random(), ordered, ctx, offset);
          case SPLIT -> SplitStages.positional(plan.splitHead(), plan.prefix(), ctx);
          case REPEAT, COLUMNAR, MIX, PLAIN -> null;
        };
      }
      int i = end - 1;
      if (!plan.stages().get(i).oneToOne()) {
        return null;
      }
      Positional in = positional(i);
      if (in == null) {
        return null;
      }
      return new Positional() {
        @Override
        public long length() {
          return in.length();
        }

        @Override
        public Flux<?> from(long position) {
          return apply(in.from(position), i);
        }

        @Override
        public Flux<?> at(long[] positions) {
          return apply(in.at(positions), i);
        }
      };
    }

    /**
     * Fails the pass before any work when the batches of the head (index or columnar path;
     * {@code i} = -1), or of the element-path {@code batch} at {@code i}, cannot be built: a buffer
     * larger than a buffer can be, or one batch's buffers more than the memory limit. The one place
     * the planner checks sizes; the largest batch is the batch size, or fewer rows when the pass has
     * fewer ({@link BatchBuilder#checkFits}).
     */
    private void checkBatches(int i) {
      BatchStage b;
      Schema schema;
      long rows;
      if (i < 0) {
        b = plan.headBatch();
        if (b == null) {
          return;
        }
        switch (plan.head()) {
          case INDEX -> {
            schema = Schemas.of(plan.random());
            rows = IndexPlan.sequence(plan.random(), ordered, ctx, offset).seq().length();
          }
          case COLUMNAR -> {
            schema = plan.columnar().schema();
            rows = plan.columnar().rows(ctx);
          }
          default -> {
            return;
          }
        }
      } else {
        Plan.Element e = plan.stages().get(i);
        b = e.batch();
        if (b == null) {
          return;
        }
        schema = e.schemaBefore();
        rows = length(plan, ctx, offset, i);
      }
      if (rows >= 0 && schema != null) {
        BatchBuilder.checkFits("batch(" + b.batchSize() + ")", schema, Math.min(b.batchSize(), rows), options.memory());
      }
    }

    /** The head's output without its first {@code skip} elements. */
    private Flux<?> head(long skip) {
      checkBatches(-1);
      Flux<?> out = switch (plan.head()) {
        case REPEAT -> repeat(skip);
        case INDEX -> IndexPlan.plan(plan.random(), ordered, options, ctx, skip, offset).flux();
        case COLUMNAR -> plan.columnar().flux(options, ctx, skip);
        case SPLIT -> SplitStages.plan(plan.splitHead(), plan.prefix(), options, ctx, skip).flux();
        case MIX -> ((MixSource<?>) plan.source()).flux(ctx, skip);
        case PLAIN -> skip == 0 ? plan.source().flux(ctx) : plan.source().flux(ctx).skip(skip);
      };
      return plan.head() == Plan.Head.REPEAT ? probe(out, next) : probeSource(out);
    }

    /**
     * The {@code repeat} head without its first {@code skip} elements: whole passes whose lengths
     * the planner knows are skipped without reading; the pass holding position {@code skip} starts
     * inside; with a pass of unknown length, the passes are read from the first one.
     */
    private Flux<?> repeat(long skip) {
      Plan inner = plan.inner();
      long count = plan.repeatCount();
      long end = count < 0 ? Long.MAX_VALUE : count;
      long i = 0;
      long k = skip;
      while (k > 0 && i < end) {
        long length = length(inner, ctx.withEpoch(ctx.epoch() + i), 0);
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
      Flux<?> first = compile(inner, ctx.withEpoch(ctx.epoch() + i), k, 0);
      return Flux.concat(first, passes(inner, i + 1, end));
    }

    /** The passes of {@code inner} for epochs {@code ctx.epoch() + from ..} up to {@code + to}, one after another. */
    private Flux<?> passes(Plan inner, long from, long to) {
      return longRange(from, to).concatMap(i -> compile(inner, ctx.withEpoch(ctx.epoch() + i), 0, 0), 0);
    }

    /** {@code flux} measured as the output of the plan's position {@code position}, or as it is when the pass measures nothing. */
    private Flux<?> probe(Flux<?> flux, int position) {
      return metrics == null ? flux : measured(flux, metrics.stage(position, plan.probes().get(position)));
    }

    /**
     * {@code flux}, the head's output read from the source, measured as {@link #probe} does; a
     * source that counts outside its subscription ({@link Plan#counted()}) reports to that stage.
     */
    private Flux<?> probeSource(Flux<?> flux) {
      if (metrics == null) {
        return flux;
      }
      StageMeter meter = metrics.stage(next, plan.probes().get(next));
      if (plan.counted() != null) {
        plan.counted().countInto(meter);
      }
      return measured(flux, meter);
    }
  }

  /** {@code flux} reporting its output to {@code meter}: by itself when it can ({@link SelfMeasured}), else through a probe. */
  private static Flux<?> measured(Flux<?> flux, StageMeter meter) {
    return flux instanceof SelfMeasured self ? self.measuredBy(meter) : new FluxStageProbe<>(flux, meter);
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
      return s.apply(flux, ctx, options, busyThreads);
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
