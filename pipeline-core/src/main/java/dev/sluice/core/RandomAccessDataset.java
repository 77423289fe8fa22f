package dev.sluice.core;

import dev.sluice.core.spi.BatchBuilder;
import reactor.core.publisher.Flux;

/**
 * A dataset whose elements can be read by index in O(1): memory-mapped arrays, generated data.
 *
 * <p>This is what lets the index pipeline shuffle globally with O(1) memory and batch by
 * {@link #gather}: per batch one array of source indices is computed and the rows are copied
 * straight into the batch's columns, with no per-row object.
 *
 * @param <T> the element type
 */
public interface RandomAccessDataset<T> extends Dataset<T> {

  /** Number of elements. */
  long size();

  /**
   * Element {@code index}.
   *
   * @throws IndexOutOfBoundsException if {@code index} is not in {@code [0, size())}
   */
  T get(long index);

  /**
   * Copies the rows {@code indices[from .. from+count)} into the next {@code count} rows of
   * {@code target} and commits them. Sources override this with bulk copies (one per contiguous
   * run of indices); the default appends {@link #get} row by row and works for
   * {@code RandomAccessDataset<Example>} only.
   */
  default void gather(long[] indices, int from, int count, BatchBuilder target) {
    for (int i = from; i < from + count; i++) {
      T element = get(indices[i]);
      if (!(element instanceof Example e)) {
        throw new UnsupportedOperationException(
            "gather needs a dataset of Example but element " + indices[i] + " is " + element.getClass().getName());
      }
      target.append(e);
    }
  }

  /** The elements in index order. */
  @Override
  default Flux<T> flux(PipelineContext context) {
    return Flux.defer(() -> {
      long n = size();
      return Flux.<T, long[]>generate(() -> new long[1], (state, sink) -> {
        long i = state[0]++;
        if (i < n) {
          sink.next(get(i));
        } else {
          sink.complete();
        }
        return state;
      });
    });
  }

  /** Checks {@code index} against {@code size} with a message naming the dataset. */
  static void checkIndex(long index, long size, Object dataset) {
    if (index < 0 || index >= size) {
      throw new IndexOutOfBoundsException("index " + index + " out of bounds for " + size + " elements of " + dataset);
    }
  }
}
