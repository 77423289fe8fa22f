package dev.sluice.io.parquet.internal;

import dev.sluice.core.DatasetFormatException;
import dev.sluice.core.Options.NullPolicy;
import dev.sluice.core.UnsupportedFormatException;

/** Where a column chunk is (file, row group, column) and what a null does there: the messages of its errors. */
final class ChunkContext {
  final String file;
  final int rowGroup;
  final long firstRow; // global index of the row group's first row
  final String column;
  final NullPolicy nullPolicy;

  ChunkContext(String file, int rowGroup, long firstRow, String column, NullPolicy nullPolicy) {
    this.file = file;
    this.rowGroup = rowGroup;
    this.firstRow = firstRow;
    this.column = column;
    this.nullPolicy = nullPolicy;
  }

  private String where() {
    return "row group " + rowGroup + ", column '" + column + "'";
  }

  DatasetFormatException error(String message, Throwable cause) {
    return new DatasetFormatException(file, where(), message, cause);
  }

  /** An error at row {@code rowInGroup} of the row group. */
  DatasetFormatException rowError(long rowInGroup, String message) {
    return new DatasetFormatException(file, "row group " + rowGroup + ", row " + (firstRow + rowInGroup)
        + ", column '" + column + "'", message);
  }

  UnsupportedFormatException unsupported(String message, Throwable cause) {
    return new UnsupportedFormatException(file, where(), message, cause);
  }

  /** Fails when the null policy is {@link NullPolicy#FAIL}; {@code what} names the null ("null list"). */
  void checkNull(long rowInGroup, String what) {
    if (nullPolicy == NullPolicy.FAIL) {
      throw rowError(rowInGroup, what + " (the null policy is FAIL)");
    }
  }
}
