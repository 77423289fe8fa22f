package dev.sluice.operators.internal;

import dev.sluice.core.Batch;
import dev.sluice.core.Options;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.Schema;
import reactor.core.publisher.Flux;

/** {@code unbatch()} on the element path. */
public record UnbatchStage() implements FluxStage {
  @Override
  public Flux<?> apply(Flux<?> in, PipelineContext context, Options options) {
    return in.map(UnbatchStage::batch).transform(UnbatchOperator.of());
  }

  /** {@code o} as the batch unbatch needs, or an error naming what it is. */
  static Batch batch(Object o) {
    if (o instanceof Batch b) {
      return b;
    }
    throw new IllegalArgumentException("unbatch needs batches but an element is "
        + (o == null ? "null" : o.getClass().getName()));
  }

  @Override
  public Schema schemaAfter(Schema in) {
    return null;
  }

  @Override
  public String describe() {
    return "unbatch()";
  }
}
