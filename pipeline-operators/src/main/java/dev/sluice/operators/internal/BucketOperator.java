package dev.sluice.operators.internal;

import dev.sluice.core.Batch;
import dev.sluice.core.Example;
import dev.sluice.core.Shape;
import dev.sluice.core.spi.BufferPool;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;
import java.util.function.ToIntFunction;
import reactor.core.publisher.Flux;

/**
 * {@code bucketBySequenceLength} on the element path: examples go to the bucket of their length
 * ({@link KeyedWindowOperator}, keyed by bucket), and each full bucket is padded into one batch by the
 * bucket's {@link PaddedCollator}. The public {@code BucketBySequenceLength} and the planner's
 * bucket stage both build it.
 */
public final class BucketOperator {
  private static final String NAME = "bucketBySequenceLength";

  private BucketOperator() {}

  /**
   * Checks the arguments of {@code bucketBySequenceLength}, naming the bad one.
   *
   * @throws IllegalArgumentException when the boundaries are not positive and strictly increasing,
   *     the batch sizes are not one more than the boundaries or not positive, or
   *     {@code padToBucketBoundary} has no {@code -1} dimension in {@code paddedShapes} to pad
   */
  public static void check(int[] boundaries, int[] batchSizes, Map<String, Shape> paddedShapes,
      boolean padToBucketBoundary) {
    Objects.requireNonNull(boundaries, "boundaries");
    Objects.requireNonNull(batchSizes, "batchSizes");
    Objects.requireNonNull(paddedShapes, "paddedShapes");
    for (int i = 0; i < boundaries.length; i++) {
      if (boundaries[i] <= 0 || i > 0 && boundaries[i] <= boundaries[i - 1]) {
        throw new IllegalArgumentException(NAME + ": boundaries must be > 0 and strictly increasing but they are "
            + Arrays.toString(boundaries));
      }
    }
    if (batchSizes.length != boundaries.length + 1) {
      throw new IllegalArgumentException(NAME + ": batchSizes needs one size per bucket, boundaries.length + 1 = "
          + (boundaries.length + 1) + ", but it has " + batchSizes.length + " " + Arrays.toString(batchSizes));
    }
    for (int size : batchSizes) {
      if (size <= 0) {
        throw new IllegalArgumentException(NAME + ": batchSizes must all be > 0 but they are "
            + Arrays.toString(batchSizes));
      }
    }
    if (padToBucketBoundary) {
      if (boundaries.length == 0) {
        throw new IllegalArgumentException(NAME + ": padToBucketBoundary needs at least one boundary");
      }
      boolean variable = paddedShapes.values().stream().anyMatch(s -> Arrays.stream(s.dims()).anyMatch(d -> d < 0));
      if (!variable) {
        throw new IllegalArgumentException(NAME + ": padToBucketBoundary pads the -1 dimensions of paddedShapes, and "
            + "paddedShapes " + paddedShapes + " has none (name the variable-length fields, e.g. tokens -> [-1])");
      }
    }
  }

  /**
   * The bucketing transformer (arguments as {@code Pipeline.bucketBySequenceLength}).
   *
   * @param lengthFn the length of an example, &ge; 0
   * @param boundaries the bucket boundaries, strictly increasing; bucket {@code i} holds lengths in
   *     {@code [boundaries[i-1], boundaries[i])}
   * @param batchSizes the batch size of each bucket, {@code boundaries.length + 1} of them
   * @param paddedShapes per field, the shape to pad to ({@code -1}: the batch's largest, or the
   *     bucket's boundary - 1 with {@code padToBucketBoundary})
   * @param paddingValues per field, the pad value (default 0)
   * @param padToBucketBoundary pad the {@code -1} dimensions of {@code paddedShapes} to the bucket's
   *     boundary - 1
   * @param dropRemainder drop each bucket's last, partial batch
   * @param pool the pool the batches are allocated from
   * @return the transformer
   */
  public static Function<Flux<Example>, Flux<Batch>> of(ToIntFunction<? super Example> lengthFn, int[] boundaries,
      int[] batchSizes, Map<String, Shape> paddedShapes, Map<String, ? extends Number> paddingValues,
      boolean padToBucketBoundary, boolean dropRemainder, BufferPool pool) {
    Objects.requireNonNull(lengthFn, "lengthFn");
    Objects.requireNonNull(pool, "pool");
    check(boundaries, batchSizes, paddedShapes, padToBucketBoundary);
    int[] bounds = boundaries.clone();
    int[] sizes = batchSizes.clone();
    Map<String, ? extends Number> values = Map.copyOf(Objects.requireNonNull(paddingValues, "paddingValues"));
    PaddedCollator[] collators = new PaddedCollator[sizes.length];
    for (int b = 0; b < sizes.length; b++) {
      Map<String, Shape> shapes = padToBucketBoundary && b < bounds.length
          ? toBoundary(paddedShapes, bounds[b] - 1) : Map.copyOf(paddedShapes);
      collators[b] = new PaddedCollator(shapes, values, pool);
    }
    ToIntFunction<Example> bucket = e -> bucket(e, lengthFn.applyAsInt(e), bounds, padToBucketBoundary);
    return flux -> flux.transform(KeyedWindowOperator.<Example>of(bucket::applyAsInt, b -> sizes[(int) b], dropRemainder))
        .map(w -> collators[(int) w.key()].collate(w.elements()));
  }

  /** {@code shapes} with every {@code -1} dimension set to {@code bound}. */
  private static Map<String, Shape> toBoundary(Map<String, Shape> shapes, long bound) {
    Map<String, Shape> out = new HashMap<>();
    shapes.forEach((name, shape) -> {
      long[] dims = shape.dims();
      for (int d = 0; d < dims.length; d++) {
        if (dims[d] < 0) {
          dims[d] = bound;
        }
      }
      out.put(name, Shape.of(dims));
    });
    return Map.copyOf(out);
  }

  /** The bucket of an example of {@code length}: the number of boundaries at or below it. */
  private static int bucket(Example e, int length, int[] bounds, boolean padToBucketBoundary) {
    if (length < 0) {
      throw new IllegalArgumentException(NAME + ": the length of example " + e.index() + " is " + length
          + "; lengths must be >= 0");
    }
    int b = 0;
    while (b < bounds.length && bounds[b] <= length) {
      b++;
    }
    if (padToBucketBoundary && b == bounds.length) {
      throw new IllegalArgumentException(NAME + ": example " + e.index() + " has length " + length
          + ", not below the last boundary " + bounds[bounds.length - 1] + ", so padToBucketBoundary cannot pad it "
          + "(add a larger boundary, or filter longer examples out first)");
    }
    return b;
  }
}
