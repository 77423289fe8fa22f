package dev.sluice.operators;

import dev.sluice.core.Batch;
import dev.sluice.core.Example;
import dev.sluice.core.MemoryManager;
import dev.sluice.core.spi.BufferPool;
import dev.sluice.operators.internal.PaddedBatchOperator;
import java.util.Map;
import java.util.function.Function;
import reactor.core.publisher.Flux;
import dev.sluice.core.Shape;

/**
 * tf.data's {@code padded_batch(batch_size, padded_shapes, padding_values, drop_remainder)} as a
 * plain Reactor transformer over {@link Example}s: variable-shape fields (token ids, boxes) are
 * padded to a common shape and collated into one contiguous column per field, in pooled memory.
 *
 * <p>Each dimension of a field is padded to its {@code paddedShapes} entry, or, for {@code -1} or
 * a field without an entry, to the largest in the batch. The pad value is the field's
 * {@code paddingValues} entry (default 0). The true shape of every row stays with its column
 * ({@link dev.sluice.core.Column#lengths()}, {@link dev.sluice.core.Column#trueShape(int)}), as a
 * validity vector does for nulls. Scalars are collated as they are. Fields of string or bytes dtype
 * are not padded (they are refused with a message).
 *
 * <p><b>Reactive Streams semantics.</b> Requests {@code batchSize} examples per batch requested;
 * emits a batch when {@code batchSize} examples have arrived (the last, smaller one when upstream
 * completes, unless {@code dropRemainder}); errors when an example does not fit its padded shape.
 *
 * <p><b>Discard support.</b> Examples collected on cancel or error go to the discard hook (they own
 * no memory); emitted batches own their memory and the consumer closes them.
 *
 * <pre>{@code
 * Flux<Batch> batches = sentences.transform(PaddedBatch.of(32, Map.of("tokens", Shape.of(-1)), Map.of("tokens", -1), false));
 * }</pre>
 */
public final class PaddedBatch {
  private PaddedBatch() {}

  /** Every field padded to the batch's largest shape with 0; the last batch kept. */
  public static Function<Flux<Example>, Flux<Batch>> of(int batchSize) {
    return of(batchSize, Map.of(), Map.of(), false);
  }

  /**
   * @param batchSize rows per batch, &gt; 0
   * @param paddedShapes per field, the shape to pad to ({@code -1}: the batch's largest); fields
   *     not named are padded to the batch's largest
   * @param paddingValues per field, the pad value (default 0)
   * @param dropRemainder drop a last batch smaller than {@code batchSize}
   */
  public static Function<Flux<Example>, Flux<Batch>> of(int batchSize, Map<String, Shape> paddedShapes,
      Map<String, ? extends Number> paddingValues, boolean dropRemainder) {
    return of(batchSize, paddedShapes, paddingValues, dropRemainder, MemoryManager.shared().pool("padded-batch"));
  }

  /** {@link #of(int, Map, Map, boolean)} allocating from {@code pool}. */
  public static Function<Flux<Example>, Flux<Batch>> of(int batchSize, Map<String, Shape> paddedShapes,
      Map<String, ? extends Number> paddingValues, boolean dropRemainder, BufferPool pool) {
    return PaddedBatchOperator.of(batchSize, paddedShapes, paddingValues, dropRemainder, pool);
  }
}
