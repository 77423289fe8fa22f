package dev.sluice.operators.internal;

import dev.sluice.core.Options;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.Schema;
import reactor.core.publisher.Flux;

/**
 * {@code ignoreErrors()} on the element path ({@link IgnoreErrorsOperator}). The stages before it
 * may drop elements, so their counts no longer follow: a resume replays the pass from the start of
 * the epoch (the same elements are dropped again, since they fail again).
 */
public record IgnoreErrorsStage() implements FluxStage {
  @Override
  @SuppressWarnings("unchecked")
  public Flux<?> apply(Flux<?> in, PipelineContext context, Options options) {
    return ((Flux<Object>) in).transform(IgnoreErrorsOperator.of(options.metrics(), options.name()));
  }

  @Override
  public Schema schemaAfter(Schema in) {
    return in;
  }

  @Override
  public boolean emitsBatches(boolean inputBatches) {
    return inputBatches;
  }

  @Override
  public String describe() {
    return "ignoreErrors()";
  }
}
