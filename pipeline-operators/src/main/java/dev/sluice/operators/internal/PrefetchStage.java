package dev.sluice.operators.internal;

import dev.sluice.core.Options;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.Schema;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Schedulers;

/** {@link PrefetchOperator#of(int)} as a stage, tuned by the pipeline's {@link Options}. */
public record PrefetchStage(int bufferSize) implements FluxStage {
  @Override
  public Flux<?> apply(Flux<?> in, PipelineContext context, Options options) {
    return apply(in, context, options, PrefetchOperator.THREADS);
  }

  /**
   * The prefetch in a pass whose threads may keep {@code busyThreads} processors busy at once: its
   * idle consumer spins only when the process may use more ({@link FluxPrefetch#spinBudget}), or as
   * the options fix it.
   */
  @Override
  public Flux<?> apply(Flux<?> in, PipelineContext context, Options options, int busyThreads) {
    return in.transform(PrefetchOperator.of(bufferSize, Schedulers.boundedElastic(), Schedulers.boundedElastic(),
        busyThreads, options));
  }

  @Override
  public Schema schemaAfter(Schema in) {
    return in;
  }

  @Override
  public long inputsPerOutput(Options options) {
    return 1;
  }

  @Override
  public int workers() {
    return 1;
  }

  @Override
  public boolean emitsBatches(boolean inputBatches) {
    return inputBatches;
  }

  @Override
  public String shapeKey() {
    return null;
  }

  @Override
  public String describe() {
    return "prefetch(" + (bufferSize == PrefetchOperator.AUTOTUNE ? "AUTOTUNE" : bufferSize) + ")";
  }
}
