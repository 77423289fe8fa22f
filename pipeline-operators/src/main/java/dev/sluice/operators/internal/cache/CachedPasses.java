package dev.sluice.operators.internal.cache;

import dev.sluice.core.PipelineContext;
import dev.sluice.operators.internal.Plan;
import dev.sluice.operators.internal.PlanBuilder;
import dev.sluice.operators.internal.PlanCompiler;
import dev.sluice.operators.internal.PlannedPass;
import reactor.core.publisher.Flux;

/**
 * A pipeline's passes, compiled over a view of the cache opened per pass when the pipeline's source
 * is a cache.
 */
public final class CachedPasses {
  private CachedPasses() {}

  /**
   * The pass of {@code plan} for {@code context} without its first {@code skip} elements, as a
   * pipeline hands it out ({@link PlannedPass}). Over a cache, the pass opens a view of the cache
   * ({@link CachedDataset#openPass()}), plans the same stages over it and closes it when it ends.
   *
   * @param offset positions of the epoch's shared order an earlier world of ranks consumed ({@link PlanCompiler#compile(Plan, PipelineContext, long, long)})
   */
  public static Flux<?> pass(Plan plan, PipelineContext context, long skip, long offset) {
    Flux<?> compiled = plan.source() instanceof CachedDataset cached
        ? Flux.using(cached::openPass,
            p -> PlanCompiler.compile(PlanBuilder.build(p.dataset(), plan.ordered(), plan.options()), context, skip,
                offset),
            CachedDataset.Pass::close)
        : Flux.defer(() -> PlanCompiler.compile(plan, context, skip, offset));
    return PlannedPass.of(compiled, plan, context);
  }
}
