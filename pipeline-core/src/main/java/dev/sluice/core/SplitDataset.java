package dev.sluice.core;

import java.util.List;
import reactor.core.publisher.Flux;

/**
 * A source made of splits (files, row groups, chunks): the unit of parallel reading, of
 * split-order shuffle and of shard-by-rank pushdown.
 *
 * @param <T> the element type
 */
public interface SplitDataset<T> extends Dataset<T> {

  /** The splits, in source order. */
  List<Split> splits();

  /**
   * Rows {@code [fromRow, toRow)} of {@code split}; {@code toRow = Long.MAX_VALUE} reads to the end.
   * Elements carry their global index in the dataset.
   */
  Flux<T> read(Split split, long fromRow, long toRow);

  /** True when {@link #readBatches} decodes straight into batches. */
  default boolean supportsBatches() {
    return false;
  }

  /**
   * Rows {@code [fromRow, toRow)} of {@code split} decoded straight into batches of
   * {@code batchSize} rows (the last may be shorter).
   *
   * @throws UnsupportedOperationException unless {@link #supportsBatches()}
   */
  default Flux<Batch> readBatches(Split split, long fromRow, long toRow, int batchSize) {
    throw new UnsupportedOperationException(getClass().getSimpleName() + " does not decode into batches");
  }

  /** Every split in order, each read whole. */
  @Override
  default Flux<T> flux(PipelineContext context) {
    return Flux.defer(() -> Flux.fromIterable(splits()).concatMap(s -> read(s, 0, Long.MAX_VALUE), 0));
  }
}
