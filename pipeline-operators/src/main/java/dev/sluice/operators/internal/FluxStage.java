package dev.sluice.operators.internal;

import dev.sluice.core.Options;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.Schema;
import reactor.core.publisher.Flux;

/**
 * A stage that runs on the element path: a Flux transformer that may depend on the pass's context
 * and the pipeline's options: map, filter, buffer shuffle, prefetch, interleave, paddedBatch,
 * unbatch and the element operators after it in {@code Pipeline} (the set is closed, see {@link Stage}).
 */
public sealed interface FluxStage extends Stage
    permits BufferShuffleStage, MapStage, FilterStage, PrefetchStage, InterleaveStage, PaddedBatchStage, UnbatchStage,
    BucketStage, EnumerateStage, ScanStage, WindowStage, RebatchStage, GroupByWindowStage, IgnoreErrorsStage {
  /** Applies the stage to the elements of one pass. */
  Flux<?> apply(Flux<?> in, PipelineContext context, Options options);

  /**
   * The stage applied to the elements of a pass whose threads may keep {@code busyThreads}
   * processors busy at once (a prefetch's idle consumer spins only when the process may use more).
   * Default: {@link #apply(Flux, PipelineContext, Options)}.
   */
  default Flux<?> apply(Flux<?> in, PipelineContext context, Options options, int busyThreads) {
    return apply(in, context, options);
  }

  /**
   * Whether this stage's outputs depend on their position in the pass ({@code enumerate}): a resume
   * then starts its input at the position and tells it ({@link #applyFrom}) instead of replaying.
   * Such a stage has one output per input ({@link #inputsPerOutput} 1). Default false.
   */
  default boolean countsPositions() {
    return false;
  }

  /**
   * The stage applied to the elements of a pass from output {@code position} on, its input starting
   * at that position ({@link #countsPositions()}). Default: {@link #apply(Flux, PipelineContext, Options)}.
   */
  default Flux<?> applyFrom(Flux<?> in, long position, PipelineContext context, Options options) {
    return apply(in, context, options);
  }

  /**
   * The number of elements out of this stage when {@code inputs} go in, or -1 when only running it
   * tells. Default: {@code inputs} for a one-to-one stage ({@link #inputsPerOutput} 1), else -1.
   */
  default long outputsFor(long inputs, Options options) {
    return inputsPerOutput(options) == 1 ? inputs : -1;
  }

  /**
   * Whether this stage emits {@link dev.sluice.core.Batch}es when its input is batches
   * ({@code inputBatches}) or not. Default false: the stage makes other elements.
   */
  default boolean emitsBatches(boolean inputBatches) {
    return false;
  }

  /**
   * The schema of the examples after this stage when the schema before is {@code in} (null when
   * unknown); the element-path {@code batch} uses it, else it infers the schema from the first
   * example. Default: unknown.
   */
  default Schema schemaAfter(Schema in) {
    return null;
  }

  /**
   * How many input elements one output element consumes, when that count is exact and the order
   * is kept, so that a resume can start the input at the position {@code outputs × this}: 1 for a
   * one-to-one stage (an ordered map, prefetch), the batch size for {@code paddedBatch}. 0 when only
   * running the stage tells (filter, interleave, unbatch, a buffer shuffle). Default 0.
   */
  default long inputsPerOutput(Options options) {
    return 0;
  }

  /**
   * Why a position in this stage's output cannot be resumed exactly (its order depends on thread
   * timing), or null. Default null.
   */
  default String unresumable(Options options) {
    return null;
  }

  @Override
  default <R> R accept(Visitor<R> visitor) {
    return visitor.element(this);
  }
}
