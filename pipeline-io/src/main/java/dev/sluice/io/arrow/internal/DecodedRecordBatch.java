package dev.sluice.io.arrow.internal;

import dev.sluice.core.Column;
import dev.sluice.core.Tensor;
import dev.sluice.core.internal.mapped.MappedChunks;
import dev.sluice.core.internal.mapped.MappedRows;
import dev.sluice.core.spi.BatchBuilder;
import dev.sluice.core.spi.ColumnBuilder;
import dev.sluice.core.spi.OffsetGather;
import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * One record batch decoded whole for random access (its columns, and row views over its
 * fixed-length ones), and the row copies that gather from one or several of them into a batch.
 * Runs inside the caller's read boundary: its values may view the mapping.
 */
final class DecodedRecordBatch {
  final Column[] columns;
  final MappedRows[] rows;
  final ByteBuffer[] values;
  final long[] fileOffset; // where a fixed-length field's values start in the file when shared with it, else -1

  DecodedRecordBatch(String resource, Column[] columns) {
    this.columns = columns;
    this.rows = new MappedRows[columns.length];
    this.values = new ByteBuffer[columns.length];
    this.fileOffset = new long[columns.length];
    Arrays.fill(fileOffset, -1);
    for (int f = 0; f < columns.length; f++) {
      Column c = columns[f];
      if (c.spec().isFixedLength()) {
        int rowBytes = Math.toIntExact(c.spec().rowBytes());
        ByteBuffer values = c.values().data();
        this.values[f] = values;
        rows[f] = new MappedRows(resource, MappedChunks.ofRegion(resource, values), c.size(), rowBytes);
      }
    }
  }

  /** Rows of one record batch ({@code indices - base}): bulk copies of the fixed-length fields. */
  void gather(long[] indices, int from, int count, long base, boolean oneRun, BatchBuilder target, int start) {
    for (int f = 0; f < columns.length; f++) {
      Column c = columns[f];
      if (rows[f] != null) {
        rows[f].copy(indices, from, count, base, target.fixedColumn(f), start, oneRun);
        if (c.hasValidity()) {
          for (int i = 0; i < count; i++) {
            if (!c.isValid((int) (indices[from + i] - base))) {
              target.setNull(f, start + i);
            }
          }
        }
      } else {
        ColumnBuilder column = target.column(f);
        for (int i = 0; i < count; i++) {
          appendRow(column, c, (int) (indices[from + i] - base));
        }
      }
    }
  }

  /**
   * Copies fixed-length field {@code f} of each row from its record batch's values with core's
   * gather kernel ({@link OffsetGather}): when every row's values are a view of the file, all rows
   * in one call by their offsets in the file; else each run of consecutive rows from one record
   * batch in one call.
   *
   * @param whole the file in one view when it is mapped in one chunk, else null
   */
  static void copyRows(DecodedRecordBatch[] byBatch, int[] batch, int f, long[] local, ByteBuffer dst, int start,
      ByteBuffer whole) {
    int n = batch.length;
    int rb = byBatch[batch[0]].rows[f].rowBytes();
    if (rb == 0) {
      return;
    }
    int[] at = new int[n];
    boolean inFile = whole != null;
    for (int i = 0; i < n && inFile; i++) {
      long base = byBatch[batch[i]].fileOffset[f];
      inFile = base >= 0;
      at[i] = Math.toIntExact(base + local[i] * rb);
    }
    if (inFile) {
      OffsetGather.copy(whole, rb, at, 0, n, dst, start);
      return;
    }
    for (int i = 0; i < n; i++) {
      at[i] = Math.toIntExact(local[i] * rb);
    }
    for (int i = 0; i < n;) {
      int k = batch[i];
      int end = i + 1;
      while (end < n && batch[end] == k) {
        end++;
      }
      OffsetGather.copy(byBatch[k].values[f], rb, at, i, end - i, dst, start + i);
      i = end;
    }
  }

  /** Appends row {@code row} of {@code c} (null, a single-level value in one copy, or a nested value). */
  static void appendRow(ColumnBuilder column, Column c, int row) {
    if (!c.isValid(row)) {
      column.addNull(0);
      return;
    }
    Tensor t = c.row(row);
    if (!t.hasNulls() && !t.isRagged() && c.offsetLevels() == 1
        && (c.spec().raggedRank() == 0 || !c.spec().dtype().isVariableLength() && c.spec().itemShape().numElements() > 0)) {
      column.appendVariable(t.data());
    } else {
      column.appendRow(t);
    }
  }
}
