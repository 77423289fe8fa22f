package dev.sluice.operators.internal;

import dev.sluice.core.Batch;
import dev.sluice.core.Dataset;
import dev.sluice.core.Options;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.internal.FluxPass;
import dev.sluice.operators.Enumerated;
import java.util.List;
import reactor.core.observability.micrometer.Micrometer;
import reactor.core.publisher.Flux;

/**
 * What surrounds a compiled pass: the pass's metrics, the boundary that turns whatever a stage
 * throws into {@code onError}, the closing of dropped batches (also inside an
 * {@link Enumerated}) and the context in the Reactor
 * context. A pipeline's pass and the pass of a dataset an interleave resumes both go through it.
 */
public final class PlannedPass {
  /** The prefix of the meters of a whole pass of a pipeline that emits batches and has a metrics registry. */
  public static final String METRICS = "sluice.pipeline";

  private PlannedPass() {}

  /**
   * The pass {@code compiled} (the planner's output for {@code stages}) as a pipeline hands it out.
   *
   * @param compiled the compiled pass, assembled lazily
   * @param plan the plan it runs
   * @param context the pass's context
   * @return the pass
   */
  public static Flux<?> of(Flux<?> compiled, Plan plan, PipelineContext context) {
    Flux<?> pass = compiled;
    Options options = plan.options();
    if (options.metrics() != null && plan.emitsBatches()) {
      // the pass as a whole, once per batch: reactor-core-micrometer's flow duration, batch interval and demand
      pass = pass.name(METRICS).tag("pipeline", options.name()).tap(Micrometer.metrics(options.metrics()));
    }
    // the boundary: whatever a stage throws, on any thread, ends the pass as onError (never a hang)
    return FluxPass.of(pass)
        .doOnDiscard(Batch.class, Batch::close)
        .doOnDiscard(Enumerated.class, PlannedPass::release)
        .contextWrite(context.asReactorContext());
  }

  /** Closes the batch a dropped {@link Enumerated} holds. */
  private static void release(Enumerated<?> e) {
    if (e.element() instanceof Batch b) {
      b.close();
    }
  }

  /**
   * The pass of {@code dataset}, with the default options, without its first {@code offset}
   * elements (the planner pushes the skip down to the source where it can).
   *
   * @param dataset a dataset that is not a pipeline
   * @param offset elements to skip, &ge; 0
   * @param context the pass's context
   * @return the pass
   */
  public static Flux<?> from(Dataset<?> dataset, long offset, PipelineContext context) {
    Plan plan = PlanBuilder.build(dataset, List.of(new SkipStage(offset)), Options.defaults());
    return of(Flux.defer(() -> PlanCompiler.compile(plan, context, 0, 0)), plan, context);
  }
}
