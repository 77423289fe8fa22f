package dev.sluice.operators;

import dev.sluice.core.Batch;
import dev.sluice.core.MemoryManager;
import dev.sluice.core.spi.BufferPool;
import dev.sluice.operators.internal.RebatchStage;
import java.util.function.Function;
import reactor.core.publisher.Flux;

/**
 * tf.data's {@code rebatch(batch_size, drop_remainder)} as a plain Reactor transformer: the rows of
 * the incoming batches, in order, cut into batches of {@code batchSize} rows, copying no row where
 * the ranges allow: an output batch that is exactly one input batch is that batch, one inside an
 * input batch whose fields are of fixed length is a view of its rows (sharing its memory), and any
 * other is copied once into a pooled batch. Batches of another schema than the first fail the
 * stream.
 *
 * <p><b>Reactive Streams semantics.</b> Requests one input batch at a time; emits the batches an
 * input completes; after the last input, the rest as a shorter batch (dropped with
 * {@code dropRemainder}).
 *
 * <p><b>Discard support.</b> Every input batch taken and not handed on is closed, also on cancel
 * and error; the batch being filled is released.
 *
 * <pre>{@code
 * Flux<Batch> per64 = batchesOf256.transform(Rebatch.of(64));
 * }</pre>
 */
public final class Rebatch {
  private Rebatch() {}

  /** Batches of {@code batchSize} rows, the last one kept. */
  public static Function<Flux<Batch>, Flux<Batch>> of(int batchSize) {
    return of(batchSize, false);
  }

  /**
   * @param batchSize rows per batch, &gt; 0
   * @param dropRemainder drop a last batch smaller than {@code batchSize} (tf.data default false)
   */
  public static Function<Flux<Batch>, Flux<Batch>> of(int batchSize, boolean dropRemainder) {
    return of(batchSize, dropRemainder, MemoryManager.shared().pool("batch"));
  }

  /** {@link #of(int, boolean)} allocating copies from {@code pool}. */
  public static Function<Flux<Batch>, Flux<Batch>> of(int batchSize, boolean dropRemainder, BufferPool pool) {
    return RebatchStage.transformer(batchSize, dropRemainder, pool);
  }
}
