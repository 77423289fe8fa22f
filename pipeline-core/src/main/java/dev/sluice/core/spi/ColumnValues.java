package dev.sluice.core.spi;

import dev.sluice.core.Tensor;
import dev.sluice.core.TensorSpec;
import dev.sluice.core.internal.CoreAccess;
import java.nio.ByteBuffer;

/**
 * Appends a whole {@link Tensor} value to a {@link ColumnBuilder} of a variable-length or nested
 * field: item by item at every list level, and the innermost items of a dense list in bulk with
 * their null flags.
 */
final class ColumnValues {
  private static final CoreAccess CORE = CoreAccess.get();

  private ColumnValues() {}

  /** Appends {@code t} (not null, rank = spec rank - depth) as the next item at {@code depth} of {@code c}. */
  static void appendItem(ColumnBuilder c, int depth, Tensor t) {
    TensorSpec spec = c.spec();
    if (depth == c.ragged) {
      if (c.varLeaf) {
        ByteBuffer d = CORE.rawData(t);
        c.addBytes(d, 0, d.remaining());
        return;
      }
      if (t.isRagged() || !t.shape().equals(spec.itemShape())) {
        throw new IllegalArgumentException("field '" + spec.name() + "' " + spec + ": an item of shape "
            + t.shape() + " does not fit the item shape " + spec.itemShape());
      }
      int at = c.reserveValues(1);
      c.values.buf.put(at, CORE.rawData(t), 0, c.itemBytes);
      return;
    }
    c.begin(depth);
    long n = t.shape().dim(0);
    int child = depth + 1;
    if (child == c.ragged && !t.isRagged() && (c.varLeaf ? t.shape().rank() == 1
        : t.shape().dropFirst().equals(spec.itemShape()))) {
      appendLeaves(c, t, n);
      return;
    }
    for (long i = 0; i < n; i++) {
      if (t.isNull(i)) {
        c.addNull(child);
      } else {
        appendItem(c, child, t.slice(i));
      }
    }
  }

  /** The {@code n} innermost items of dense {@code t} (one list), in bulk where possible. */
  private static void appendLeaves(ColumnBuilder c, Tensor t, long n) {
    TensorSpec spec = c.spec();
    int ragged = c.ragged;
    ByteBuffer[] tv = CORE.rawValidity(t);
    ByteBuffer nulls = tv == null ? null : tv[0];
    if (nulls != null && !spec.nullableAt(ragged)) {
      throw new IllegalStateException("field '" + spec.name() + "' " + spec + " allows no null elements at list level "
          + (ragged - 1) + " but the value has some");
    }
    int[] nullItems = nulls == null ? new int[0] : RowGathers.nullsIn(nulls, 0, Math.toIntExact(n));
    long first = c.counts[ragged];
    if (c.varLeaf) {
      ByteBuffer o = CORE.rawOffsets(t)[0];
      ByteBuffer d = CORE.rawData(t);
      for (int i = 0; i < n; i++) {
        long from = o.getLong(i * 8);
        c.addBytes(d, (int) from, (int) (o.getLong((i + 1) * 8) - from));
      }
    } else {
      int itemBytes = c.itemBytes;
      int at = c.reserveValues(Math.toIntExact(n));
      c.values.buf.put(at, CORE.rawData(t), 0, Math.toIntExact(n * itemBytes));
      for (int i : nullItems) {
        RowGathers.fill(c.values.buf, at + i * itemBytes, at + (i + 1) * itemBytes, (byte) 0);
      }
    }
    c.nulls.markNulls(ragged, first, nullItems);
  }
}
