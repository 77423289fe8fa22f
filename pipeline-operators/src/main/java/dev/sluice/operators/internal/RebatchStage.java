package dev.sluice.operators.internal;

import dev.sluice.core.Batch;
import dev.sluice.core.Options;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.spi.BufferPool;
import java.util.function.Function;
import reactor.core.publisher.Flux;

/**
 * {@code rebatch(batchSize, dropRemainder)} on the element path: the input batches' rows re-cut into
 * batches of {@code batchSize} rows by the one re-batcher ({@link RebatchOperator#rebatch}): a batch
 * that is exactly one input batch is handed on, one inside an input batch of fixed-length fields
 * is a view of its rows, the rest are copied once. After batches of a known size, a resume starts
 * at the input batch holding the state's row.
 */
public record RebatchStage(int batchSize, boolean dropRemainder) implements FluxStage {
  @Override
  public Flux<?> apply(Flux<?> in, PipelineContext context, Options options) {
    return applyFrom(in, 0, options.memory().pool("batch"));
  }

  /** The stage over input batches without their first {@code skipRows} rows. */
  Flux<Batch> applyFrom(Flux<?> in, long skipRows, BufferPool pool) {
    return RebatchOperator.rebatch(in.map(UnbatchStage::batch), batchSize, dropRemainder, skipRows, pool, 1);
  }

  /**
   * The re-batching transformer for a plain {@code Flux} of batches.
   *
   * @param batchSize rows per batch, &gt; 0
   * @param dropRemainder drop a last batch smaller than {@code batchSize}
   * @param pool the pool copied batches are allocated from
   * @return the transformer
   */
  public static Function<Flux<Batch>, Flux<Batch>> transformer(int batchSize, boolean dropRemainder, BufferPool pool) {
    check(batchSize);
    return in -> RebatchOperator.rebatch(in, batchSize, dropRemainder, 0, pool, 1);
  }

  /**
   * Checks the batch size.
   *
   * @throws IllegalArgumentException when it is not positive
   */
  public static void check(int batchSize) {
    if (batchSize <= 0) {
      throw new IllegalArgumentException("rebatch: batchSize > 0 required but it was " + batchSize);
    }
  }

  @Override
  public boolean emitsBatches(boolean inputBatches) {
    return true;
  }

  @Override
  public String describe() {
    return "rebatch(" + batchSize + ", " + dropRemainder + ")";
  }
}
