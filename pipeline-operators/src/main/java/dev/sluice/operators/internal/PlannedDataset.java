package dev.sluice.operators.internal;

import dev.sluice.core.Dataset;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.Schema;
import reactor.core.publisher.Flux;

/**
 * A dataset that the planner can read from a position on and whose length it can ask without
 * reading it: a pipeline handed to an interleave ({@link InterleaveResume} resumes into it).
 *
 * @param <T> the element type
 */
public interface PlannedDataset<T> extends Dataset<T> {
  /**
   * The pass for {@code context} without its first {@code offset} elements.
   *
   * @param context the pass's context
   * @param offset elements to skip, &ge; 0
   * @return the pass
   */
  Flux<T> flux(PipelineContext context, long offset);

  /**
   * The number of elements of the pass for {@code context} when the planner knows it without
   * reading, else -1.
   *
   * @param context the pass's context
   * @return the count, or -1
   */
  long cardinality(PipelineContext context);

  /** How a pass runs, for {@code explain} (one or more lines). Default: {@link #toString()}. */
  default String explain() {
    return toString();
  }

  /**
   * What a checkpoint compares of this dataset: its source and the shape of its stages. Default:
   * {@link #toString()}.
   */
  default String shapeKey() {
    return toString();
  }

  /** The schema of the examples a pass emits when it is declared, else null (the default). */
  default Schema schema() {
    return null;
  }

  /** Why a position in its pass cannot be resumed exactly, or null (the default). */
  default String unresumable() {
    return null;
  }

  /** The threads its pass may keep busy at once, its consumer's included (default 1). */
  default int threads() {
    return 1;
  }

  /** The shard its pass takes, or null (the default). */
  default ShardStage shard() {
    return null;
  }
}
