package dev.sluice.core;

import dev.sluice.core.spi.ColumnCursor;
import reactor.core.publisher.Flux;

/**
 * A split source that decodes row ranges straight into {@link Batch}es: the capability behind the
 * columnar path of a pipeline, which re-cuts these batches into the pipeline's batches by copying
 * column ranges and never creates an {@link Example} per row. Parquet row groups, Sluice shards and
 * Arrow record batches are such sources. A pipeline plans a source that is also a
 * {@link RandomAccessDataset} (a shard set, an Arrow file) on its index path instead, so the
 * columnar path serves the split sources that are not random access (Parquet, an Arrow file read
 * through its split view).
 *
 * <p>Contract: every batch of {@link #readBatches} has the fields of {@link #schema()} in that
 * order, carries the global index of each row, and holds exactly the rows asked for, in order
 * ({@link #read} of the same range yields the same rows as examples). The caller closes each batch
 * it receives; batches a source decoded but did not hand out are closed by the source on complete,
 * error and cancel.
 *
 * @param <T> the element type of {@link #read} (usually {@link Example})
 */
public interface BatchSplitDataset<T> extends SplitDataset<T>, HasSchema {

  /** The fields of every batch {@link #readBatches} delivers, in column order. */
  @Override
  Schema schema();

  /**
   * Rows {@code [fromRow, toRow)} of {@code split} decoded into batches of {@code batchSize} rows
   * (the last may be shorter); {@code toRow = Long.MAX_VALUE} reads to the end of the split.
   *
   * <p><b>Reactive Streams semantics.</b> Nothing is read before subscription; emits on demand;
   * completes after the last row of the range; resources opened for the range are released on
   * complete, error and cancel. A decode failure is a {@link DatasetException} naming the resource
   * and position.
   *
   * @param fromRow first row within the split, &ge; 0
   * @param toRow end row (exclusive), &ge; {@code fromRow}
   * @param batchSize rows per batch, &gt; 0
   */
  Flux<Batch> readBatches(Split split, long fromRow, long toRow, int batchSize);

  /**
   * As {@link #readBatches(Split, long, long, int)}, but the first batch holds
   * {@code firstBatchSize} rows (or fewer when the range is shorter) and the others
   * {@code batchSize}: a caller that is filling a batch of its own asks for exactly the rows that
   * complete it, and the batches after it line up with its own.
   *
   * <p>The default reads the range in two parts; sources override it to decode the range once.
   *
   * @param firstBatchSize rows of the first batch, &gt; 0
   * @param batchSize rows of the following batches, &gt; 0
   */
  default Flux<Batch> readBatches(Split split, long fromRow, long toRow, int firstBatchSize, int batchSize) {
    checkBatchSizes(firstBatchSize, batchSize);
    if (firstBatchSize == batchSize) {
      return readBatches(split, fromRow, toRow, batchSize);
    }
    long cut = Math.min(toRow, fromRow + firstBatchSize);
    return readBatches(split, fromRow, cut, firstBatchSize)
        .concatWith(Flux.defer(() -> cut >= toRow ? Flux.empty() : readBatches(split, cut, toRow, batchSize)));
  }

  /**
   * The argument check every {@link #readBatches(Split, long, long, int, int)} makes before it reads:
   * both sizes must be positive.
   *
   * @param firstBatchSize rows of the first batch
   * @param batchSize rows of the following batches
   * @throws IllegalArgumentException naming the parameter and its value when a size is not &gt; 0
   */
  static void checkBatchSizes(int firstBatchSize, int batchSize) {
    if (batchSize <= 0) {
      throw new IllegalArgumentException("batchSize > 0 required but it was " + batchSize);
    }
    if (firstBatchSize <= 0) {
      throw new IllegalArgumentException("firstBatchSize > 0 required but it was " + firstBatchSize);
    }
  }

  /**
   * Whether {@link #openColumns} decodes row ranges one column at a time; false by default. The
   * columnar path's window shuffle then decodes each field of a window just before gathering it,
   * so the window is never held whole.
   */
  default boolean decodesColumns() {
    return false;
  }

  /**
   * Rows {@code [fromRow, toRow)} of {@code split} as a cursor that decodes them one column at a
   * time, standing at {@code fromRow}; {@code toRow = Long.MAX_VALUE} reads to the end of the split.
   * The split is opened here (and the rows before {@code fromRow} passed over); the caller closes
   * the cursor. Only where {@link #decodesColumns()}.
   *
   * @throws UnsupportedOperationException where the source decodes whole batches only (the default)
   * @throws DatasetException if the split cannot be opened, naming the resource
   */
  default ColumnCursor openColumns(Split split, long fromRow, long toRow) {
    throw new UnsupportedOperationException(this + " decodes whole batches only");
  }

  /**
   * Splits the source itself decodes at once when a pipeline does not ask for a number (the
   * source's own option); at least 1, default 1.
   */
  default int decodeParallelism() {
    return 1;
  }
}
