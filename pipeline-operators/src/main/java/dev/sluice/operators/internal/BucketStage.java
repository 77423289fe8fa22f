package dev.sluice.operators.internal;

import dev.sluice.core.Example;
import dev.sluice.core.Options;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.Shape;
import java.util.Arrays;
import java.util.Map;
import java.util.function.ToIntFunction;
import reactor.core.publisher.Flux;

/**
 * {@code bucketBySequenceLength(...)} on the element path ({@link BucketOperator}). A resume replays
 * the pass's input from the start of the epoch (the open buckets are rebuilt from it).
 */
public record BucketStage(ToIntFunction<Example> lengthFn, int[] boundaries, int[] batchSizes,
    Map<String, Shape> paddedShapes, Map<String, ? extends Number> paddingValues, boolean padToBucketBoundary,
    boolean dropRemainder) implements FluxStage {
  @Override
  public Flux<?> apply(Flux<?> in, PipelineContext context, Options options) {
    Flux<Example> examples = in.map(o -> Schemas.asExample(o, "bucketBySequenceLength", -1));
    return examples.transform(BucketOperator.of(lengthFn, boundaries, batchSizes, paddedShapes, paddingValues,
        padToBucketBoundary, dropRemainder, options.memory().pool("bucket-by-sequence-length")));
  }

  @Override
  public boolean emitsBatches(boolean inputBatches) {
    return true;
  }

  @Override
  public String shapeKey() {
    return describe() + "[" + new java.util.TreeMap<>(paddedShapes) + ", " + padToBucketBoundary + ", "
        + dropRemainder + "]";
  }

  @Override
  public String describe() {
    return "bucketBySequenceLength(" + Arrays.toString(boundaries) + ", " + Arrays.toString(batchSizes) + ")";
  }
}
