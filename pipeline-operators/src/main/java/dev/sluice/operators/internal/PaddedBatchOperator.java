package dev.sluice.operators.internal;

import dev.sluice.core.Batch;
import dev.sluice.core.Example;
import dev.sluice.core.Shape;
import dev.sluice.core.spi.BufferPool;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;
import reactor.core.publisher.Flux;

/**
 * {@code paddedBatch} on the element path: the re-batcher ({@link RebatchOperator#elements})
 * groups {@code batchSize} examples and each group is padded into one batch ({@link PaddedCollator}). The public {@code PaddedBatch} and the planner's paddedBatch
 * stage both build it.
 */
public final class PaddedBatchOperator {
  private PaddedBatchOperator() {}

  /**
   * The padded batching transformer.
   *
   * @param batchSize rows per batch, &gt; 0
   * @param paddedShapes per field, the shape to pad to ({@code -1}: the batch's largest)
   * @param paddingValues per field, the pad value (default 0)
   * @param dropRemainder drop a last batch smaller than {@code batchSize}
   * @param pool the pool the batches are allocated from
   * @return the transformer
   */
  public static Function<Flux<Example>, Flux<Batch>> of(int batchSize, Map<String, Shape> paddedShapes,
      Map<String, ? extends Number> paddingValues, boolean dropRemainder, BufferPool pool) {
    PaddedCollator collator = new PaddedCollator(Map.copyOf(Objects.requireNonNull(paddedShapes, "paddedShapes")),
        Map.copyOf(Objects.requireNonNull(paddingValues, "paddingValues")), Objects.requireNonNull(pool, "pool"));
    return RebatchOperator.elements(batchSize, dropRemainder, 1, () -> list -> list, collator::collate);
  }
}
