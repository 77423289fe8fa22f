package dev.sluice.core;

import java.util.List;
import reactor.core.publisher.Flux;

/**
 * A source made of splits (files, row groups, chunks): the unit of parallel reading, of
 * split-order shuffle and of shard-by-rank pushdown. A split source that can also decode straight
 * into batches implements {@link BatchSplitDataset}.
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

  /**
   * The rows of {@code split} at which a read may start at no extra cost (a Parquet page boundary,
   * a record batch), in ascending order, the first 0; null (the default) when a read may start at
   * any row at the same cost. A shuffle cuts every split into blocks of a bounded number of rows
   * and the permutation of the epoch orders those blocks; where this answers, blocks start on these
   * rows whenever they are close enough together to keep the blocks small.
   *
   * @param split one of {@link #splits()}, with a known row count
   */
  default long[] blockStarts(Split split) {
    return null;
  }

  /**
   * The block granularity of {@code split}, in rows: a shuffle that cuts the split into blocks
   * starts and ends every block on a multiple of it within the split, except at the split's end, so
   * a block never cuts the source's natural unit (an HDF5 chunk) and a shuffled epoch decodes each
   * unit once. 1 (the default) lets a block start at any row. Blocks then hold at least this many
   * rows, whatever the shuffle's target block size, and a shuffle over such blocks mixes them in a
   * window that holds many of them.
   *
   * @param split one of {@link #splits()}, with a known row count
   * @return rows, &ge; 1
   */
  default long blockAlignment(Split split) {
    return 1;
  }

  /**
   * A hint: the reader is about to read these splits, in this order (the pass the operators
   * planned for this rank, a split possibly several times, once per block). A source that fetches
   * ahead (a remote dataset read through the node's file cache) follows it; the default ignores it.
   * Each call replaces the previous one. Reads need not follow it, and a read of a split it does
   * not name still works.
   *
   * @param splits splits of {@link #splits()}, in the order they will be read
   */
  default void readNext(List<Split> splits) {
  }

  /** Every split in order, each read whole; announces that order ({@link #readNext}) when subscribed. */
  @Override
  default Flux<T> flux(PipelineContext context) {
    return Flux.defer(() -> {
      readNext(splits());
      return Flux.fromIterable(splits()).concatMap(s -> read(s, 0, Long.MAX_VALUE), 0);
    });
  }
}
