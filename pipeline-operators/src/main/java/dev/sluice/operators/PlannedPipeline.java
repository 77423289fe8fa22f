package dev.sluice.operators;

import dev.sluice.core.Dataset;
import dev.sluice.core.PipelineContext;
import dev.sluice.operators.internal.PlannedDataset;
import reactor.core.publisher.Flux;

/**
 * A pipeline opened by an interleave, as the planner reads it: a pass from a position on and its
 * length, through the pipeline's public API only, so the planner resumes into it without it.
 *
 * @param <T> the element type
 */
record PlannedPipeline<T>(Pipeline<T> pipeline) implements PlannedDataset<T> {

  /** {@code dataset}, a pipeline seen as the planner reads it; any other dataset as it is. */
  static Dataset<?> of(Dataset<?> dataset) {
    return dataset instanceof Pipeline<?> p ? new PlannedPipeline<>(p) : dataset;
  }

  @Override
  public Flux<T> flux(PipelineContext context) {
    return pipeline.flux(context);
  }

  @Override
  public Flux<T> flux(PipelineContext context, long offset) {
    return pipeline.skip(offset).flux(context);
  }

  @Override
  public long cardinality(PipelineContext context) {
    return pipeline.cardinality(context);
  }

  @Override
  public String toString() {
    return pipeline.toString();
  }
}
