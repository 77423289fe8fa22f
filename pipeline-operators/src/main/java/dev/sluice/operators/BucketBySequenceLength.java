package dev.sluice.operators;

import dev.sluice.core.Batch;
import dev.sluice.core.Example;
import dev.sluice.core.MemoryManager;
import dev.sluice.core.Shape;
import dev.sluice.core.spi.BufferPool;
import dev.sluice.operators.internal.BucketOperator;
import java.util.Map;
import java.util.function.Function;
import java.util.function.ToIntFunction;
import reactor.core.publisher.Flux;

/**
 * tf.data's {@code bucket_by_sequence_length(element_length_func, bucket_boundaries,
 * bucket_batch_sizes, padded_shapes, padding_values, pad_to_bucket_boundary, drop_remainder)} as a
 * plain Reactor transformer over {@link Example}s: examples of similar length are batched together,
 * so a batch is padded to a length close to its rows' own instead of the longest of the stream.
 *
 * <p>Bucket {@code i} holds the examples whose {@code lengthFn} is in
 * {@code [boundaries[i-1], boundaries[i])} (the first bucket from 0, the last one unbounded), so
 * there are {@code boundaries.length + 1} buckets, each with its own batch size. A bucket that holds
 * its batch size is padded and collated into one batch exactly as {@link PaddedBatch} does (the
 * true shapes stay in {@link dev.sluice.core.Column#lengths()}); after the last example, the
 * buckets' partial batches are emitted in bucket order (dropped with {@code dropRemainder}). The
 * order of the batches depends only on the order of the examples.
 *
 * <p>With {@code padToBucketBoundary}, every {@code -1} dimension of {@code paddedShapes} is padded
 * to the bucket's boundary - 1, so every batch of a bucket has the same shape; an example whose
 * length is not below the last boundary then fails the stream.
 *
 * <p><b>Reactive Streams semantics.</b> Requests examples as batches are requested (up to the sum
 * of the batch sizes ahead, in the worst case, when each example lands in another bucket); emits a
 * batch when a bucket is full, then the partial buckets when upstream completes; an error of
 * {@code lengthFn}, or an example that does not fit its padded shape, ends the stream.
 *
 * <p><b>Discard support.</b> Examples waiting in buckets go to the discard hook on cancel or error
 * (they own no memory); emitted batches own their memory and the consumer closes them.
 *
 * <pre>{@code
 * Flux<Batch> batches = sentences.transform(BucketBySequenceLength.of(
 *     e -> (int) e.tensor("tokens").shape().dim(0), new int[] {16, 64, 256}, new int[] {128, 64, 16, 4}));
 * }</pre>
 */
public final class BucketBySequenceLength {
  private BucketBySequenceLength() {}

  /**
   * Buckets padded to their batch's longest with 0, partial batches kept.
   *
   * @param lengthFn the length of an example, &ge; 0
   * @param boundaries bucket boundaries, &gt; 0 and strictly increasing
   * @param batchSizes the batch size of each bucket, &gt; 0, {@code boundaries.length + 1} of them
   */
  public static Function<Flux<Example>, Flux<Batch>> of(ToIntFunction<? super Example> lengthFn, int[] boundaries,
      int[] batchSizes) {
    return of(lengthFn, boundaries, batchSizes, Map.of(), Map.of(), false, false);
  }

  /**
   * @param lengthFn the length of an example, &ge; 0
   * @param boundaries bucket boundaries, &gt; 0 and strictly increasing
   * @param batchSizes the batch size of each bucket, &gt; 0, {@code boundaries.length + 1} of them
   * @param paddedShapes per field, the shape to pad to ({@code -1}: the batch's largest, or the
   *     bucket's boundary - 1 with {@code padToBucketBoundary}); fields not named are padded to the
   *     batch's largest
   * @param paddingValues per field, the pad value (default 0)
   * @param padToBucketBoundary pad the {@code -1} dimensions of {@code paddedShapes} to the bucket's
   *     boundary - 1 (tf.data default false)
   * @param dropRemainder drop each bucket's last, partial batch (tf.data default false)
   */
  public static Function<Flux<Example>, Flux<Batch>> of(ToIntFunction<? super Example> lengthFn, int[] boundaries,
      int[] batchSizes, Map<String, Shape> paddedShapes, Map<String, ? extends Number> paddingValues,
      boolean padToBucketBoundary, boolean dropRemainder) {
    return of(lengthFn, boundaries, batchSizes, paddedShapes, paddingValues, padToBucketBoundary, dropRemainder,
        MemoryManager.shared().pool("bucket-by-sequence-length"));
  }

  /** {@link #of(ToIntFunction, int[], int[], Map, Map, boolean, boolean)} allocating from {@code pool}. */
  public static Function<Flux<Example>, Flux<Batch>> of(ToIntFunction<? super Example> lengthFn, int[] boundaries,
      int[] batchSizes, Map<String, Shape> paddedShapes, Map<String, ? extends Number> paddingValues,
      boolean padToBucketBoundary, boolean dropRemainder, BufferPool pool) {
    return BucketOperator.of(lengthFn, boundaries, batchSizes, paddedShapes, paddingValues, padToBucketBoundary,
        dropRemainder, pool);
  }
}
