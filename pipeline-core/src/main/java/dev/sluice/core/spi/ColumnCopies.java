package dev.sluice.core.spi;

import dev.sluice.core.Column;
import dev.sluice.core.internal.CoreAccess;
import dev.sluice.core.spi.ColumnMemory.Buf;
import java.nio.ByteBuffer;

/**
 * Copies rows of built columns into a {@link ColumnBuilder} of the same field: a range of rows, or
 * the rows a gather names. The copies of values, offsets and null flags are the kernels of
 * {@link RowGathers}; this class keeps the column's counts, offsets and growth in step with them.
 */
final class ColumnCopies {
  private static final CoreAccess CORE = CoreAccess.get();

  private ColumnCopies() {}

  /**
   * Copies rows {@code [from, from + count)} of {@code src} to the rows of {@code dst} from
   * {@code at} on: a fixed-length field in one bulk copy; a variable-length or nested field level by
   * level, each level's offsets rebased onto the column's items and its values copied in bulk; the
   * null flags of every depth.
   */
  static void copyRange(ColumnBuilder dst, Column src, int from, int count, int at) {
    if (dst.fixed != null) {
      int rb = dst.rowBytes;
      dst.fixed.buf.put(at * rb, CORE.rawData(src.values()), from * rb, count * rb);
      if (src.hasValidity(0)) {
        dst.nulls.markRowsNull(at, RowGathers.nullsIn(CORE.rawData(src.validity(0)), from, count));
      }
      return;
    }
    checkRoom(dst, count);
    long a = from;
    long b = (long) from + count;
    for (int j = 0; j <= dst.ragged; j++) {
      long c = dst.counts[j];
      if (src.hasValidity(j)) {
        dst.nulls.markNulls(j, c,
            RowGathers.nullsIn(CORE.rawData(src.validity(j)), Math.toIntExact(a), Math.toIntExact(b - a)));
      }
      if (j < dst.levels) {
        ByteBuffer so = CORE.rawData(src.offsets(j));
        long childA = so.getLong((int) (a * 8));
        long childB = so.getLong((int) (b * 8));
        long base = (j < dst.ragged ? dst.counts[j + 1] : dst.valueBytes) - childA;
        Buf o = dst.offsets[j];
        dst.growOffsets(o, (c + (b - a) + 1) * 8, c * 8);
        RowGathers.rebase(so, a, b - a, base, o.buf, c);
        dst.counts[j] = c + (b - a);
        a = childA;
        b = childB;
      } else {
        dst.counts[j] = c + (b - a); // the innermost fixed-width items
      }
    }
    long bytes = dst.varLeaf ? b - a : (b - a) * dst.itemBytes;
    long start = dst.varLeaf ? a : a * dst.itemBytes;
    dst.ensureValues(bytes);
    dst.values.buf.put((int) dst.valueBytes, CORE.rawData(src.values()), (int) start, (int) bytes);
    dst.valueBytes += bytes;
  }

  /**
   * Copies row {@code rows[i]} of {@code src}, {@code i} in {@code [from, from + count)}, to the rows
   * of {@code dst} from {@code at} on: fixed-width fields by the fixed-width kernels, a single-level
   * variable-length field by the values kernel, a nested field as one range per row. Every row must
   * be below {@code rowsBelow}, the rows of {@code src}: the caller has checked them once for all
   * fields. {@code raw}, the same rows for gathers by address, is null where they are not used.
   */
  static void copyRows(ColumnBuilder dst, Column src, int rowsBelow, int[] rows, int from, int count, int at,
      RawGather.Rows raw) {
    if (dst.fixed != null) {
      RowGathers.fixed(CORE.rawData(src.values()), dst.rowBytes, rowsBelow, rows, from, count, dst.fixed.buf, at, raw);
      copyNullRows(dst, src, rowsBelow, rows, from, count, at);
      return;
    }
    if (dst.levels != 1 || src.hasValidity(dst.ragged) && dst.ragged > 0) {
      for (int i = 0; i < count; i++) {
        copyRange(dst, src, rows[from + i], 1, at + i);
      }
      return;
    }
    // one level: a string/bytes value or a list of fixed-width items per row
    checkRoom(dst, count);
    ByteBuffer so = CORE.rawData(src.offsets(0));
    int unit = dst.varLeaf ? 1 : dst.itemBytes;
    dst.ensureValues(RowGathers.unitsOf(so, rowsBelow, rows, from, count) * unit);
    Buf o = dst.offsets[0];
    long c = dst.counts[0];
    dst.growOffsets(o, (c + count + 1) * 8, c * 8);
    long end = RowGathers.values(so, CORE.rawData(src.values()), unit, unit, rowsBelow, rows, from, count, dst.values.buf,
        o.buf, c, dst.valueBytes);
    if (src.hasValidity(0)) {
      dst.nulls.markNulls(0, c, RowGathers.nullRows(CORE.rawData(src.validity(0)), rowsBelow, rows, from, count));
    }
    dst.counts[0] = c + count;
    if (!dst.varLeaf) {
      dst.counts[1] += (end - dst.valueBytes) / dst.itemBytes;
    }
    dst.valueBytes = end;
  }

  /**
   * {@link #copyRows} for {@code a} and {@code b}, both fixed-width with rows of 4 bytes, in one
   * pass by address ({@link RowGathers#pair4}); returns false, having copied nothing, where a buffer
   * cannot be gathered by address.
   */
  static boolean copyRowsPaired(ColumnBuilder a, ColumnBuilder b, Column srcA, Column srcB, int rowsBelow,
      int[] rows, int from, int count, int at, RawGather.Rows raw) {
    if (a.fixed == null || a.rowBytes != 4 || b.fixed == null || b.rowBytes != 4) {
      throw new IllegalStateException("fields '" + a.spec().name() + "' and '" + b.spec().name()
          + "' do not both have rows of 4 bytes");
    }
    if (!RowGathers.pair4(CORE.rawData(srcA.values()), CORE.rawData(srcB.values()), raw, from, count, a.fixed.buf,
        b.fixed.buf, at)) {
      return false;
    }
    copyNullRows(a, srcA, rowsBelow, rows, from, count, at);
    copyNullRows(b, srcB, rowsBelow, rows, from, count, at);
    return true;
  }

  /** Marks the rows from {@code at} on null where their source rows are (a fixed-width field's gather). */
  private static void copyNullRows(ColumnBuilder dst, Column src, int rowsBelow, int[] rows, int from, int count,
      int at) {
    if (src.hasValidity(0)) {
      // the source's null rows are zeros already
      dst.nulls.markRowsNull(at, RowGathers.nullRows(CORE.rawData(src.validity(0)), rowsBelow, rows, from, count));
    }
  }

  private static void checkRoom(ColumnBuilder dst, int count) {
    if (dst.counts[0] + count > dst.capacity()) {
      throw new IllegalStateException("field '" + dst.spec().name() + "' already has " + dst.counts[0] + " rows of "
          + dst.capacity());
    }
  }
}
