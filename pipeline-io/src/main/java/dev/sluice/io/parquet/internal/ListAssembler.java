package dev.sluice.io.parquet.internal;

import dev.sluice.core.spi.ColumnBuilder;

/**
 * List assembly at any depth (Dremel's record assembly for one column): each (repetition,
 * definition) level pair either continues the lists above it or starts new items at the depth its
 * repetition level names, down to where its definition level says the value is null, an empty
 * list, or a leaf value. Items go into a {@link ColumnBuilder}: a list per level, nulls kept as
 * nulls at every level, runs of fixed-width leaf values copied in bulk.
 *
 * <p>A level that repeats a list which is null or empty, and whose definition level says that
 * list holds nothing, adds nothing: DuckDB writes a null fixed-size array as that many such
 * filler levels after the row's first one, and parquet-java's record reader ignores them too. A
 * repetition level into a missing list with a definition level that claims a value is corrupt.
 */
final class ListAssembler {
  private final ColumnChunkDecoder d;
  private final int depths; // the list levels; leaf values are at this depth
  private final int[] definedAt;
  private final int maxDef;
  private final boolean bytesLeaf;
  private final int width;

  ListAssembler(ColumnChunkDecoder decoder) {
    this.d = decoder;
    this.depths = decoder.plan.maxRep();
    this.definedAt = decoder.plan.definedAt();
    this.maxDef = decoder.plan.maxDef();
    this.bytesLeaf = decoder.plan.dtype().isVariableLength();
    this.width = decoder.writer.width();
  }

  /** Appends the next {@code rows} rows to {@code out}. */
  void decode(ColumnBuilder out, int rows) {
    PageLevels lv = d.levels;
    int started = 0;
    int pending = 0; // fixed-width leaf values counted but not yet copied (all from the current page)
    int open = 0; // the lists at depths [0, open) take more elements: a repetition level may be at most this
    while (true) {
      if (!lv.hasLevel()) {
        pending = flush(out, pending);
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
        started++;
      } else if (started == 0) {
        throw d.ctx.error("list data starts in the middle of a row (repetition level " + r + ")", null);
      }
      if (r == depths && open == depths && def == maxDef && !bytesLeaf) {
        pending++; // the common case: one more value in the innermost list
        lv.pos++;
        continue;
      }
      if (r > open) {
        if (def <= definedAt[r - 1]) {
          lv.pos++; // a filler level of a null or empty list (below)
          continue;
        }
        throw d.ctx.rowError(d.rowsDone + started - 1, "repetition level " + r + " adds to a list that is empty, null "
            + "or not started (corrupt levels)");
      }
      pending = flush(out, pending);
      for (int depth = r; ; depth++) {
        if (def < definedAt[depth]) {
          d.ctx.checkNull(d.rowsDone + started - 1, depth == 0 ? "null list" : "null list element");
          out.addNull(depth);
          open = depth;
          break;
        }
        if (depth == depths) { // a present leaf value
          if (bytesLeaf) {
            d.values.addBytes(out);
          } else {
            pending = 1;
          }
          open = depths;
          break;
        }
        out.startList(depth);
        if (def == definedAt[depth]) {
          open = depth; // an empty list
          break;
        }
      }
      lv.pos++;
    }
    flush(out, pending);
    if (started < rows) {
      throw d.endsEarly(d.rowsDone + started);
    }
  }

  /** Copies {@code n} pending leaf values of the current page into {@code out}; returns 0. */
  private int flush(ColumnBuilder out, int n) {
    if (n > 0) {
      int at = out.reserveValues(n);
      d.writer.write(d.values, out.valueBuffer(), at, n);
    }
    return 0;
  }
}
