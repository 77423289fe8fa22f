package dev.sluice.operators.internal;

import dev.sluice.core.Example;
import dev.sluice.core.Options;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.Shape;
import java.util.Map;
import reactor.core.publisher.Flux;

/** {@code paddedBatch(...)} on the element path. */
public record PaddedBatchStage(int batchSize, Map<String, Shape> paddedShapes, Map<String, ? extends Number> paddingValues,
    boolean dropRemainder) implements FluxStage {
  @Override
  public Flux<?> apply(Flux<?> in, PipelineContext context, Options options) {
    Flux<Example> examples = in.map(o -> Schemas.asExample(o, "paddedBatch", -1));
    return examples.transform(PaddedBatchOperator.of(batchSize, paddedShapes, paddingValues, dropRemainder,
        options.memory().pool("padded-batch")));
  }

  @Override
  public long inputsPerOutput(Options options) {
    return batchSize;
  }

  @Override
  public long outputsFor(long inputs, Options options) {
    return dropRemainder ? inputs / batchSize : (inputs + batchSize - 1) / batchSize;
  }

  @Override
  public boolean emitsBatches(boolean inputBatches) {
    return true;
  }

  @Override
  public String shapeKey() {
    return "paddedBatch(" + batchSize + ", " + dropRemainder + ")";
  }

  @Override
  public String describe() {
    return "paddedBatch(" + batchSize + ")";
  }
}
