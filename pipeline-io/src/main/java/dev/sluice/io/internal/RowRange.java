package dev.sluice.io.internal;

import dev.sluice.core.RandomAccessDataset;
import reactor.core.publisher.Flux;

/** A range of rows of a random-access source as a flux: what a split of a mapped format reads. */
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
}
