package dev.sluice.operators.internal;

import dev.sluice.core.Options;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.Schema;
import java.util.function.Predicate;
import reactor.core.publisher.Flux;

/** {@code filter(predicate)}: Reactor's {@code filter}, which discards the rejected elements. */
public record FilterStage(Predicate<Object> predicate) implements FluxStage {
  @Override
  @SuppressWarnings("unchecked")
  public Flux<?> apply(Flux<?> in, PipelineContext context, Options options) {
    return ((Flux<Object>) in).filter(predicate);
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
    return "filter";
  }
}
