package dev.sluice.core;

import java.util.Objects;

/**
 * One independently readable part of a {@link SplitDataset}: a file, a row group, a chunk.
 *
 * @param id a stable name for messages and checkpoints (e.g. {@code "data/3.npy"} or {@code "f.parquet#rg2"})
 * @param rowCount rows in the split, or {@link #UNKNOWN_ROWS} when only reading tells
 */
public record Split(String id, long rowCount) {
  public static final long UNKNOWN_ROWS = -1;

  public Split {
    Objects.requireNonNull(id, "id");
    if (rowCount < -1) {
      throw new IllegalArgumentException("rowCount >= 0 (or -1 for unknown) required but it was " + rowCount);
    }
  }

  public boolean hasKnownRowCount() {
    return rowCount >= 0;
  }
}
