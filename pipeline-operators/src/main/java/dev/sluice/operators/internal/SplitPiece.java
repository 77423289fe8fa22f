package dev.sluice.operators.internal;

import dev.sluice.core.DatasetFormatException;
import dev.sluice.core.Split;

/**
 * A row range of one split and where it starts in the rank's row sequence.
 *
 * @param split the split
 * @param fromRow the first row, in the split
 * @param toRow the row after the last, in the split
 * @param position where {@code fromRow} falls in the rank's row sequence
 */
record SplitPiece(Split split, long fromRow, long toRow, long position) {
  long rows() {
    return toRow - fromRow;
  }

  /** The error of a split that delivered {@code found} rows of the range {@code [fromRow, toRow)}. */
  static DatasetFormatException wrongCount(Split split, long fromRow, long toRow, String found) {
    return new DatasetFormatException(split.id(), "rows [" + fromRow + ", " + toRow + ")",
        "expected " + (toRow - fromRow) + " rows (the split declares " + split.rowCount() + ") but "
        + ("more".equals(found) ? "the split delivered more" : "found " + found));
  }
}
