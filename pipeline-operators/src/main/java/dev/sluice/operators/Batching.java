package dev.sluice.operators;

import dev.sluice.core.Batch;
import dev.sluice.core.BatchBuilder;
import dev.sluice.core.BufferPool;
import dev.sluice.core.Example;
import dev.sluice.core.MemoryManager;
import dev.sluice.core.RandomAccessDataset;
import dev.sluice.core.Schema;
import dev.sluice.core.internal.OrderedParallel;
import dev.sluice.operators.internal.Schemas;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Schedulers;

/**
 * tf.data's {@code batch} as a plain Reactor transformer over {@link Example}s (the element path):
 * collects {@code batchSize} consecutive examples and copies them into one {@link Batch} with a
 * contiguous column per field, in pooled off-heap memory ({@link BatchBuilder#append}).
 *
 * <p>On a {@link dev.sluice.core.RandomAccessDataset}, {@link Pipeline#batch} gathers the rows
 * straight from the source instead and creates no {@code Example} at all. On the element path, a
 * batch whose examples are all unchanged rows of one such source ({@link Example#origin()}, as
 * {@link Example#lazy} makes them) is gathered from it in one bulk call too.
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
    if (batchSize <= 0) {
      throw new IllegalArgumentException("batchSize > 0 required but it was " + batchSize);
    }
    Objects.requireNonNull(pool, "pool");
    if (numParallelCalls <= 1) {
      return flux -> Flux.defer(() -> {
        Schema[] known = {schema};
        return flux.buffer(batchSize, () -> new ArrayList<>(batchSize))
            .filter(list -> !dropRemainder || list.size() == batchSize)
            .map(list -> collate(list, known, pool));
      });
    }
    return flux -> Flux.defer(() -> {
      Schema[] known = {schema};
      return flux.buffer(batchSize, () -> new ArrayList<>(batchSize))
          .filter(list -> !dropRemainder || list.size() == batchSize)
          .map(list -> {
            checkExamples(list);
            if (known[0] == null) {
              known[0] = Schemas.infer(list.get(0));
            }
            return new Pending(list, known[0]);
          })
          .transform(pending -> OrderedParallel.<Pending, Batch>flatMap(pending,
              (p, out) -> out.accept(collate(p.examples, new Schema[] {p.schema}, pool)),
              numParallelCalls, Schedulers.parallel(), Batch::close));
    });
  }

  private record Pending(List<Example> examples, Schema schema) {}

  /**
   * The pipeline hands its elements to {@code batch} unchecked (one check per batch instead of a map
   * layer per element): anything that is not an example fails here, with the pipeline's message.
   */
  private static void checkExamples(List<?> elements) {
    for (Object o : elements) {
      Schemas.asExample(o, "the pipeline", -1);
    }
  }

  private static Batch collate(List<Example> examples, Schema[] known, BufferPool pool) {
    checkExamples(examples);
    if (known[0] == null) {
      known[0] = Schemas.infer(examples.get(0));
    }
    int n = examples.size();
    RandomAccessDataset<Example> origin = commonOrigin(examples);
    if (origin != null && known[0].equals(Schemas.declared(origin))) {
      // unchanged rows of one random-access source: one bulk gather, as on the index path
      long[] indices = new long[n];
      for (int i = 0; i < n; i++) {
        indices[i] = examples.get(i).index();
      }
      try (BatchBuilder builder = BatchBuilder.create(known[0], n, pool)) {
        origin.gather(indices, 0, n, builder);
        if (builder.size() != n) {
          throw new IllegalStateException(origin + ": gather committed " + builder.size() + " of " + n + " rows");
        }
        return builder.build();
      }
    }
    try (BatchBuilder builder = BatchBuilder.create(known[0], n, pool)) {
      for (Example e : examples) {
        builder.append(e);
      }
      return builder.build();
    }
  }

  /** The source every example is an unchanged row of, or null. */
  private static RandomAccessDataset<Example> commonOrigin(List<Example> examples) {
    RandomAccessDataset<Example> origin = examples.get(0).origin();
    if (origin == null) {
      return null;
    }
    for (int i = 1; i < examples.size(); i++) {
      if (examples.get(i).origin() != origin) {
        return null;
      }
    }
    return origin;
  }
}
