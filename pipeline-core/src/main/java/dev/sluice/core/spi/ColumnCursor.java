package dev.sluice.core.spi;

import dev.sluice.core.BatchSplitDataset;
import dev.sluice.core.DatasetException;
import dev.sluice.core.Schema;

/**
 * Rows of one split range, decoded one column at a time ({@link BatchSplitDataset#openColumns}):
 * for a consumer that wants a single column of many rows in the cache at once rather than every
 * column of a batch. The window shuffle of the columnar path decodes a window's rows field by field
 * into a small buffer and gathers each field before decoding the next ({@link ColumnWindow}).
 *
 * <p>The cursor stands at a row. {@link #decode} decodes the next rows of one field; every field is
 * decoded for the same rows, each once and in any order, before {@link #advance} moves past them.
 * Not thread-safe; the caller closes it, which releases what it holds (files, decoders) whether or
 * not every row was decoded.
 */
public interface ColumnCursor extends AutoCloseable {

  /** The fields, in column order (those of the source's batches). */
  Schema schema();

  /** Rows from the cursor's row to the end of its range. */
  long remaining();

  /** The global index of the cursor's row: the index a batch of the same rows gives it. */
  long index();

  /**
   * Decodes field {@code field} of the next {@code rows} rows into {@code into}: rows
   * {@code [at, at + rows)} of a fixed-length field's buffer (nulls marked), or appended as its next
   * rows for a variable-length or nested field ({@code at} is then its current row count).
   *
   * @throws IllegalStateException if the field was already decoded for these rows
   * @throws IllegalArgumentException if {@code rows} exceeds {@link #remaining()}
   * @throws DatasetException if the data cannot be decoded, naming the resource and position
   */
  void decode(int field, ColumnBuilder into, int at, int rows);

  /**
   * Moves past the next {@code rows} rows, which every field has decoded.
   *
   * @throws IllegalStateException if a field has not decoded exactly these rows
   */
  void advance(int rows);

  /** Releases the cursor's resources; idempotent. */
  @Override
  void close();
}
