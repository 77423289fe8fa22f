package dev.sluice.operators.internal;

import dev.sluice.core.Options;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.Schema;
import dev.sluice.operators.Prefetch;
import reactor.core.publisher.Flux;

/** {@link Prefetch#of(int)} as a stage. */
public record PrefetchStage(int bufferSize) implements FluxStage {
  @Override
  public Flux<?> apply(Flux<?> in, PipelineContext context, Options options) {
    return in.transform(Prefetch.of(bufferSize));
  }

  @Override
  public Schema schemaAfter(Schema in) {
    return in;
  }

  @Override
  public String describe() {
    return "prefetch(" + bufferSize + ")";
  }
}
