package dev.sluice.operators.internal;

import dev.sluice.core.Batch;
import dev.sluice.core.Options;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.Schema;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Schedulers;

/** {@link PrefetchOperator#of(int)} as a stage. */
public record PrefetchStage(int bufferSize) implements FluxStage {
  @Override
  public Flux<?> apply(Flux<?> in, PipelineContext context, Options options) {
    return in.transform(PrefetchOperator.of(bufferSize));
  }

  /**
   * The prefetch in a pass whose threads may keep {@code busyThreads} processors busy at once: its
   * idle consumer spins only when the process may use more ({@link FluxPrefetch#spinBudget}).
   */
  @Override
  public Flux<?> apply(Flux<?> in, PipelineContext context, Options options, int busyThreads) {
    return new FluxPrefetch<>(in, bufferSize, Schedulers.boundedElastic(), Schedulers.boundedElastic(),
        FluxPrefetch.spinBudget(busyThreads), FluxPrefetch.adaptiveSpin(), FluxPrefetch.PARK_NANOS)
        .doOnDiscard(Batch.class, Batch::close);
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
    return "prefetch(" + bufferSize + ")";
  }
}
