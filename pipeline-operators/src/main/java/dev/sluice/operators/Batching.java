package dev.sluice.operators;

import dev.sluice.core.Batch;
import dev.sluice.core.Example;
import dev.sluice.core.MemoryManager;
import dev.sluice.core.Schema;
import dev.sluice.core.spi.BatchBuilder;
import dev.sluice.core.spi.BufferPool;
import dev.sluice.operators.internal.BatchOperator;
import java.util.function.Function;
import reactor.core.publisher.Flux;

/**
 * tf.data's {@code batch} as a plain Reactor transformer over {@link Example}s (the element path):
 * collects {@code batchSize} consecutive examples and copies them into one {@link Batch} with a
 * contiguous column per field, in pooled off-heap memory ({@link BatchBuilder#append}).
 *
 * <p>On a {@link dev.sluice.core.RandomAccessDataset}, {@link Pipeline#batch} gathers the rows
 * straight from the source instead and creates no {@code Example} at all. On the element path, each
 * run of consecutive examples that are unchanged rows of one such source ({@link Example#origin()},
 * as {@link Example#lazy} makes them) is gathered from it in one bulk call too.
 *
 * <p><b>Reactive Streams semantics.</b> Requests {@code batchSize} examples per batch requested;
 * emits a batch when {@code batchSize} examples have arrived (the last, smaller one when the
 * upstream completes, unless {@code dropRemainder}); completes after it; cancels the upstream on
 * cancel; passes errors on (examples collected so far are dropped, nothing is allocated for them).
 *
 * <p><b>Discard support.</b> Examples buffered on cancel or error go to the discard hook (they own
 * no memory); the emitted batches own their memory and the consumer closes them.
 *
 * <pre>{@code
 * Flux<Batch> batches = examples.transform(Batching.of(256, false, schema));
 * }</pre>
 */
public final class Batching {
  private Batching() {}

  /** {@link #of(int, boolean, Schema)} with {@code dropRemainder = false}, schema from the first example. */
  public static Function<Flux<Example>, Flux<Batch>> of(int batchSize) {
    return of(batchSize, false, null);
  }

  /**
   * @param batchSize rows per batch, &gt; 0
   * @param dropRemainder drop a last batch smaller than {@code batchSize} (tf.data default false)
   * @param schema the fields of the examples, or null to take them from the first example
   */
  public static Function<Flux<Example>, Flux<Batch>> of(int batchSize, boolean dropRemainder, Schema schema) {
    return of(batchSize, dropRemainder, schema, MemoryManager.shared().pool("batch"));
  }

  /**
   * @param batchSize rows per batch, &gt; 0
   * @param dropRemainder drop a last batch smaller than {@code batchSize}
   * @param schema the fields of the examples, or null to take them from the first example
   * @param pool the pool the batches are allocated from
   */
  public static Function<Flux<Example>, Flux<Batch>> of(int batchSize, boolean dropRemainder, Schema schema, BufferPool pool) {
    return of(batchSize, dropRemainder, schema, pool, 1);
  }

  /**
   * {@link #of(int, boolean, Schema, BufferPool)} collating up to {@code numParallelCalls} batches at
   * once on {@code parallel} workers, in order: the output does not depend on
   * {@code numParallelCalls}.
   *
   * <p><b>Discard support.</b> Also batches collated and not yet emitted are closed on cancel and
   * error, also those whose collation finishes after the cancel.
   *
   * @param numParallelCalls batches collated concurrently, &gt; 0
   */
  public static Function<Flux<Example>, Flux<Batch>> of(int batchSize, boolean dropRemainder, Schema schema,
      BufferPool pool, int numParallelCalls) {
    return BatchOperator.of(batchSize, dropRemainder, schema, pool, numParallelCalls);
  }
}
