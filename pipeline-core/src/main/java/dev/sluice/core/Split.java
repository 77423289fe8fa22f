package dev.sluice.core;

import java.util.Objects;

/**
 * One independently readable part of a {@link SplitDataset}: a file, a row group, a chunk.
 *
 * @param id a stable name for messages and checkpoints (e.g. {@code "data/3.npy"} or {@code "f.parquet#rg2"})
 * @param rowCount rows in the split, or {@link #UNKNOWN_ROWS} when only reading tells
 */
public record Split(String id, long rowCount) {
  /** The {@code rowCount} of a split whose rows are known only by reading it. */
  public static final long UNKNOWN_ROWS = -1;

  /** A split; {@code id} must not be null and {@code rowCount} must be ≥ 0 or {@link #UNKNOWN_ROWS}. */
  public Split {
    Objects.requireNonNull(id, "id");
    if (rowCount < -1) {
      throw new IllegalArgumentException("rowCount >= 0 (or -1 for unknown) required but it was " + rowCount);
    }
  }

  /**
   * Checks a row range asked of this split ({@code toRow} may lie past its end, as in
   * {@link SplitDataset#read}).
   *
   * @throws IllegalArgumentException naming the split and the range unless {@code 0 <= fromRow <= toRow}
   */
  public void checkRows(long fromRow, long toRow) {
    if (fromRow < 0 || toRow < fromRow) {
      throw new IllegalArgumentException("rows [" + fromRow + ", " + toRow + ") of " + this
          + ": expected 0 <= fromRow <= toRow");
    }
  }

  /** True when {@code rowCount} is not {@link #UNKNOWN_ROWS}. */
  public boolean hasKnownRowCount() {
    return rowCount >= 0;
  }
}
