package dev.sluice.operators.internal;

/**
 * One step of a {@link dev.sluice.operators.Pipeline}, in the order the user wrote it.
 *
 * <p>The hierarchy is closed, and the planner's decisions are exhaustive by construction: they are
 * made once, in {@link PlanBuilder}, and everything else reads the {@link Plan}; they are
 * {@code switch} expressions over {@link #kind()} (Java 17 has no pattern matching in
 * {@code switch}, but a switch expression over an enum must cover every constant, or it does not
 * compile; a case casts to its kind's type) or {@link Visitor}s, whose methods the compiler requires
 * one by one. {@link Kind} is itself derived by a visitor, so adding a kind of stage fails to
 * compile until every planner decision (index path, columnar path, split plan, element path,
 * explain) handles it. The
 * index stages ({@link ShuffleStage}, {@link ShardStage}, {@link TakeStage}, {@link SkipStage},
 * {@link BatchStage}) compile into an index or columnar plan when they follow a suitable source
 * directly; element operators implement {@link FluxStage} and run as Flux transformers.
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

  /** The kind of this stage, for exhaustive {@code switch} expressions. */
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
   * One method per kind of stage: the planner's decisions are visitors, so each handles every kind.
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
