package dev.sluice.io.parquet.internal;

import dev.sluice.core.spi.ColumnBuilder;
import java.nio.ByteBuffer;

/**
 * List assembly for a single-level list with a declared shape: each row's elements fill its
 * fixed-shape block; whole pages of complete lists are copied in bulk. A row of another length is
 * an error, and so is a null element (a fixed-shape block has no place for it; read the column
 * without the declared shape to keep it).
 */
final class FixedListAssembler {
  private final ColumnChunkDecoder d;
  private final int len;
  private final int repDef;
  private final int width;

  FixedListAssembler(ColumnChunkDecoder decoder) {
    this.d = decoder;
    this.len = decoder.plan.listLength();
    this.repDef = decoder.plan.repeatedDef();
    this.width = decoder.writer.width();
  }

  void decode(ColumnBuilder out, int firstRow, int rows) {
    PageLevels lv = d.levels;
    ByteBuffer dst = out.fixedBuffer();
    int maxDef = d.plan.maxDef();
    int started = 0;
    int row = -1; // current row in out
    int elems = 0;
    int pendingDst = 0; // element index where the pending run of values starts
    int pendingN = 0;
    while (true) {
      if (!lv.hasLevel()) {
        if (pendingN > 0) {
          d.writer.write(d.values, dst, pendingDst * width, pendingN);
          pendingN = 0;
        }
        if (!d.nextPage()) {
          break;
        }
        continue;
      }
      int r = lv.rep(lv.pos);
      int def = lv.def(lv.pos);
      if (r == 0) {
        if (started == rows) {
          break;
        }
        if (row >= 0) {
          endRow(out, row, elems, firstRow);
        }
        row = -1;
        if (lv.defsAllMax && len > 0) {
          int k = wholeRows(Math.min(rows - started, (lv.count - lv.pos) / len));
          if (k > 0) {
            if (pendingN > 0) {
              d.writer.write(d.values, dst, pendingDst * width, pendingN);
              pendingN = 0;
            }
            d.writer.write(d.values, dst, (firstRow + started) * len * width, k * len);
            started += k;
            lv.pos += k * len;
            continue;
          }
        }
        row = firstRow + started;
        started++;
        elems = 0;
        if (def < repDef) {
          if (def < repDef - 1) {
            elems = -1; // null row
          }
          lv.pos++;
          continue;
        }
      } else if (row < 0) {
        throw d.ctx.error("list data starts in the middle of a row (repetition level " + r + ")", null);
      } else if (def < repDef && elems <= 0) {
        lv.pos++; // a filler level of a null or empty list, as DuckDB writes for a null array
        continue;
      }
      // an element at def >= repDef
      if (elems >= len) {
        throw d.ctx.rowError(d.rowsDone + row - firstRow, "a list of more than " + len
            + " elements but its declared shape " + d.plan.spec().shape() + " holds " + len);
      }
      if (def != maxDef) {
        d.ctx.checkNull(d.rowsDone + row - firstRow, "null list element");
        throw d.ctx.rowError(d.rowsDone + row - firstRow, "null element " + elems + " in a list read with the declared "
            + "shape " + d.plan.spec().shape() + ", which has no place for nulls; read the column without a declared "
            + "shape to keep them");
      }
      int dstElem = row * len + elems;
      if (pendingN > 0 && pendingDst + pendingN != dstElem) {
        d.writer.write(d.values, dst, pendingDst * width, pendingN);
        pendingN = 0;
      }
      if (pendingN == 0) {
        pendingDst = dstElem;
      }
      pendingN++;
      elems++;
      lv.pos++;
    }
    if (pendingN > 0) {
      d.writer.write(d.values, dst, pendingDst * width, pendingN);
    }
    if (row >= 0) {
      endRow(out, row, elems, firstRow);
    }
    if (started < rows) {
      throw d.endsEarly(d.rowsDone + started);
    }
  }

  /**
   * How many of the next {@code max} rows at the current level are plain rows of exactly
   * {@code len} elements (repetition levels 0, 1, 1, …), every element present.
   */
  private int wholeRows(int max) {
    PageLevels lv = d.levels;
    if (lv.repsPlain) {
      return max;
    }
    int p = lv.pos;
    int[] rl = lv.reps();
    for (int k = 0; k < max; k++) {
      if (rl[p] != 0) {
        return k;
      }
      for (int j = 1; j < len; j++) {
        if (rl[p + j] != 1) {
          return k;
        }
      }
      p += len;
    }
    // the row after the last one must start a new row (or the page must end there)
    if (max > 0 && p < lv.count && rl[p] != 0) {
      return max - 1;
    }
    return max;
  }

  private void endRow(ColumnBuilder out, int row, int elems, int firstRow) {
    if (elems < 0) {
      d.ctx.checkNull(d.rowsDone + row - firstRow, "null list");
      out.setNull(row);
      return;
    }
    if (elems != len) {
      throw d.ctx.rowError(d.rowsDone + row - firstRow, "a list of " + elems + " elements but its declared shape "
          + d.plan.spec().shape() + " holds " + len);
    }
  }
}
