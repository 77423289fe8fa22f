package dev.sluice.operators.internal;

/**
 * One step of a {@link dev.sluice.operators.Pipeline}, in the order the user wrote it.
 *
 * <p>The hierarchy is sealed: {@code Stage} and {@link FluxStage} permit only the types they list.
 * The index stages ({@link ShuffleStage}, {@link ShardStage}, {@link TakeStage}, {@link SkipStage},
 * {@link BatchStage}) compile into an index or columnar plan when they follow a suitable source
 * directly; element operators implement {@link FluxStage} and run as Flux transformers.
 *
 * <p>Where the decisions by type are made: {@link PlanBuilder} builds the {@link Plan} once, and it
 * is the one class of the operators module that tells stages (and sources) apart by their classes
 * with {@code instanceof}, besides the cache's {@code Upstream} and {@code CachedDataset}, which
 * classify what a cache stores; {@code LayersTest} ({@code onlyThePlanBuilderTellsStagesAndSourcesApart})
 * fails the build on such a test anywhere else. The other classes read the plan, a stage's
 * {@link #kind()}, or the properties a stage type declares ({@link FluxStage}'s counts and workers).
 *
 * <p>What the compiler checks, and what it does not: a {@code switch} expression over
 * {@link #kind()} must cover every {@link Kind}, so a new kind fails to compile at each of those;
 * the {@code switch} statements over it (in {@link PlanBuilder}, {@link ColumnarPlan},
 * {@link RangeCuts} and the cache's {@code Upstream}) are not checked, and a kind they do not list
 * falls to their {@code default} ({@link PlanBuilder}'s throws) or does nothing. {@link Kind#ELEMENT}
 * covers every element operator but {@link BufferShuffleStage}, so a new {@link FluxStage} type
 * compiles without any planner change: {@link PlanBuilder} treats it by its declared properties,
 * and only the element operators it names with {@code instanceof} (rebatch, unbatch, interleave,
 * prefetch, padded batch) get more. {@link Kind} is derived by a {@link Visitor}, so a new visitor
 * method must be implemented there; no other decision is a visitor.
 */
public sealed interface Stage permits ShuffleStage, ShardStage, TakeStage, SkipStage, BatchStage, RepeatStage, FluxStage {
  /** A short description for messages ({@code "shard(4, 1, PAD)"}). */
  String describe();

  /** The operator's name, the {@code operator} tag of the stage's meters ({@code "shard"}, {@code "map"}). */
  default String operator() {
    String d = describe();
    int paren = d.indexOf('(');
    return paren < 0 ? d : d.substring(0, paren);
  }

  /**
   * The stage as a checkpoint compares pipelines ({@link dev.sluice.core.PipelineState#stages()}):
   * its kind and the arguments that decide which elements come out in which order, without the
   * parallelism and the shard's rank (a resume may change those); null for a stage that changes
   * neither (prefetch). Default: {@link #describe()}.
   */
  default String shapeKey() {
    return describe();
  }

  /**
   * The worker threads this stage may keep busy besides its caller's: the workers of a parallel
   * stage ({@code numParallelCalls} above 1), the producer of a prefetch. Default none.
   */
  default int workers() {
    return 0;
  }

  /** The workers of a stage with {@code numParallelCalls} (-1: one per processor): none when it runs on its caller's thread. */
  static int workersOf(int numParallelCalls) {
    int n = numParallelCalls < 0 ? Runtime.getRuntime().availableProcessors() : numParallelCalls;
    return n > 1 ? n : 0;
  }

  /** Calls the visitor method of this stage's kind. */
  <R> R accept(Visitor<R> visitor);

  /** The kind of this stage, for {@code switch} expressions, which the compiler checks cover every kind. */
  default Kind kind() {
    return accept(Kind.OF);
  }

  /** The kinds of stage, one per {@link Visitor} method (and so one per stage type but the element operators). */
  enum Kind {
    /** {@link ShuffleStage}. */
    SHUFFLE,
    /** {@link BufferShuffleStage}. */
    BUFFER_SHUFFLE,
    /** {@link ShardStage}. */
    SHARD,
    /** {@link TakeStage}. */
    TAKE,
    /** {@link SkipStage}. */
    SKIP,
    /** {@link BatchStage}. */
    BATCH,
    /** {@link RepeatStage}. */
    REPEAT,
    /** Any other {@link FluxStage}. */
    ELEMENT;

    private static final Visitor<Kind> OF = new Visitor<>() {
      @Override
      public Kind shuffle(ShuffleStage s) {
        return SHUFFLE;
      }

      @Override
      public Kind bufferShuffle(BufferShuffleStage s) {
        return BUFFER_SHUFFLE;
      }

      @Override
      public Kind shard(ShardStage s) {
        return SHARD;
      }

      @Override
      public Kind take(TakeStage s) {
        return TAKE;
      }

      @Override
      public Kind skip(SkipStage s) {
        return SKIP;
      }

      @Override
      public Kind batch(BatchStage s) {
        return BATCH;
      }

      @Override
      public Kind repeat(RepeatStage s) {
        return REPEAT;
      }

      @Override
      public Kind element(FluxStage s) {
        return ELEMENT;
      }
    };
  }

  /**
   * One method per kind of stage; {@link Kind} is derived by one, so a new method here must be
   * handled there.
   *
   * @param <R> what the decision returns
   */
  interface Visitor<R> {
    R shuffle(ShuffleStage s);

    R bufferShuffle(BufferShuffleStage s);

    R shard(ShardStage s);

    R take(TakeStage s);

    R skip(SkipStage s);

    R batch(BatchStage s);

    R repeat(RepeatStage s);

    /** Any other element operator (map, filter, prefetch, interleave, paddedBatch, unbatch). */
    R element(FluxStage s);
  }
}
