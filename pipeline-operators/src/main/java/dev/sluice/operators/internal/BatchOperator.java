package dev.sluice.operators.internal;

import dev.sluice.core.Batch;
import dev.sluice.core.Example;
import dev.sluice.core.RandomAccessDataset;
import dev.sluice.core.Schema;
import dev.sluice.core.spi.BatchBuilder;
import dev.sluice.core.spi.BufferPool;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;
import reactor.core.publisher.Flux;

/**
 * {@code batch} on the element path: the re-batcher ({@link RebatchOperator#elements}) groups
 * {@code batchSize} consecutive examples and each group is copied into one {@link Batch}: a group of
 * unchanged rows of one origin ({@link Example#origin()}: a random-access source, or a batch a
 * split source decoded for the element path) gathered in one bulk call, and in a group of several
 * origins each run of at least {@value #MIN_RUN} unchanged rows of one origin gathered in one call. The public
 * {@code Batching} and the planner's element-path batch both build it.
 */
public final class BatchOperator {
  /** Runs of unchanged rows of one origin shorter than this (in a batch of several origins) are copied row by row. */
  static final int MIN_RUN = 16;

  private BatchOperator() {}

  /**
   * The batching transformer.
   *
   * @param batchSize rows per batch, &gt; 0
   * @param dropRemainder drop a last batch smaller than {@code batchSize}
   * @param schema the fields of the examples, or null to take them from the first example
   * @param pool the pool the batches are allocated from
   * @param numParallelCalls batches collated concurrently (in order), &le; 1 for the subscriber's thread
   * @return the transformer
   */
  public static Function<Flux<Example>, Flux<Batch>> of(int batchSize, boolean dropRemainder, Schema schema,
      BufferPool pool, int numParallelCalls) {
    if (batchSize <= 0) {
      throw new IllegalArgumentException("batchSize > 0 required but it was " + batchSize);
    }
    Objects.requireNonNull(pool, "pool");
    return RebatchOperator.elements(batchSize, dropRemainder, numParallelCalls, () -> {
      Schema[] known = {schema};
      return list -> {
        checkExamples(list);
        if (known[0] == null) {
          known[0] = Schemas.infer(list.get(0));
        }
        return new Pending(list, known[0]);
      };
    }, p -> collate(p.examples, p.schema, pool));
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

  private static Batch collate(List<Example> examples, Schema schema, BufferPool pool) {
    int n = examples.size();
    try (BatchBuilder builder = BatchBuilder.create(schema, n, pool)) {
      int i = 0;
      while (i < n) {
        Example e = examples.get(i);
        RandomAccessDataset<Example> origin = e.origin();
        if (origin == null || !schema.equals(Schemas.declared(origin))) {
          builder.append(e);
          i++;
          continue;
        }
        int end = i + 1;
        while (end < n && examples.get(end).origin() == origin) {
          end++;
        }
        if (end - i < MIN_RUN && end - i < n) {
          for (int j = i; j < end; j++) {
            builder.append(examples.get(j));
          }
          i = end;
          continue;
        }
        // a run of unchanged rows of one origin: one bulk gather, as on the index path
        long[] indices = new long[end - i];
        for (int j = i; j < end; j++) {
          indices[j - i] = examples.get(j).index();
        }
        int before = builder.size();
        origin.gather(indices, 0, indices.length, builder);
        if (builder.size() != before + indices.length) {
          throw new IllegalStateException(origin + ": gather committed " + (builder.size() - before) + " of "
              + indices.length + " rows");
        }
        i = end;
      }
      return builder.build();
    }
  }
}
