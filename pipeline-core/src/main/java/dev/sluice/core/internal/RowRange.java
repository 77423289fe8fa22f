package dev.sluice.core.internal;

import dev.sluice.core.Batch;
import dev.sluice.core.Example;
import dev.sluice.core.RandomAccessDataset;
import dev.sluice.core.Schema;
import dev.sluice.core.spi.BatchBuilder;
import dev.sluice.core.spi.BufferPool;
import reactor.core.publisher.Flux;

/** A range of rows of a random-access source as a flux, or gathered into one batch: what a split of a mapped format reads. */
public final class RowRange {
  private RowRange() {}

  /** Elements {@code [first, end)} of {@code source} in order, read with {@code get} on demand. */
  public static <T> Flux<T> flux(RandomAccessDataset<T> source, long first, long end) {
    return Flux.<T, long[]>generate(() -> new long[] {first}, (state, sink) -> {
      if (state[0] < end) {
        sink.next(source.get(state[0]++));
      } else {
        sink.complete();
      }
      return state;
    });
  }

  /** Rows {@code [first, first + count)} of {@code source} gathered into one batch from {@code pool}. */
  public static Batch batch(RandomAccessDataset<Example> source, Schema schema, long first, int count, BufferPool pool) {
    long[] indices = new long[count];
    for (int i = 0; i < count; i++) {
      indices[i] = first + i;
    }
    try (BatchBuilder b = BatchBuilder.create(schema, count, pool)) {
      source.gather(indices, 0, count, b);
      return b.build();
    }
  }
}
