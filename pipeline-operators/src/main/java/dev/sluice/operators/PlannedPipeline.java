package dev.sluice.operators;

import dev.sluice.core.Dataset;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.Schema;
import dev.sluice.operators.internal.Checkpoints;
import dev.sluice.operators.internal.PlanBuilder;
import dev.sluice.operators.internal.PlannedDataset;
import dev.sluice.operators.internal.ShardStage;
import reactor.core.publisher.Flux;

/**
 * A pipeline opened by an interleave or combined by a mix, as the planner reads it: a pass from a position on and its
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
  public String explain() {
    return pipeline.explain();
  }

  @Override
  public String shapeKey() {
    return Checkpoints.identify(pipeline.plan()) + " " + pipeline.plan().shapeKeys();
  }

  @Override
  public Schema schema() {
    return PlanBuilder.outputSchema(pipeline.plan());
  }

  @Override
  public String unresumable() {
    return pipeline.plan().unresumable();
  }

  @Override
  public int threads() {
    return pipeline.plan().threads();
  }

  @Override
  public ShardStage shard() {
    return pipeline.plan().shard();
  }

  @Override
  public String toString() {
    return pipeline.toString();
  }
}
