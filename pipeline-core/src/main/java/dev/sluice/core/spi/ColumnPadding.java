package dev.sluice.core.spi;

import dev.sluice.core.DType;
import dev.sluice.core.Float16;
import dev.sluice.core.Tensor;
import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * Writes a value padded to a fixed row shape into a {@link ColumnBuilder}'s fixed buffer: fills
 * the rows with the pad value, copies a shorter (or ragged) value in one innermost run at a time,
 * and measures the dense shape a value needs.
 */
final class ColumnPadding {
  private ColumnPadding() {}

  /**
   * The smallest dense shape that holds {@code t}: its dimensions, where a ragged one is the
   * longest of its items.
   */
  static long[] bound(Tensor t) {
    long[] dims = t.shape().dims();
    if (!t.isRagged()) {
      return dims;
    }
    Arrays.fill(dims, 1, dims.length, 0);
    for (long i = 0; i < dims[0]; i++) {
      long[] inner = bound(t.slice(i));
      for (int d = 0; d < inner.length; d++) {
        dims[d + 1] = Math.max(dims[d + 1], inner[d]);
      }
    }
    return dims;
  }

  /** Copies {@code row} (row-major) into the padded slot at {@code base}, one innermost run at a time. */
  static void copyPadded(Tensor row, ByteBuffer target, int base, long[] padded, int item) {
    if (row.isRagged()) { // each item into its own padded block
      long block = item;
      for (int d = 1; d < padded.length; d++) {
        block *= padded[d];
      }
      long[] inner = Arrays.copyOfRange(padded, 1, padded.length);
      for (long i = 0, n = row.shape().dim(0); i < n; i++) {
        copyPadded(row.slice(i), target, (int) (base + i * block), inner, item);
      }
      return;
    }
    ByteBuffer src = row.data();
    long[] dims = row.shape().dims();
    int rank = dims.length;
    if (rank == 0) {
      target.put(base, src, 0, item);
      return;
    }
    long count = row.shape().numElements();
    if (count == 0) {
      return;
    }
    int run = (int) (dims[rank - 1] * item);
    long outer = count / dims[rank - 1];
    long[] idx = new long[rank - 1];
    for (long o = 0; o < outer; o++) {
      long off = 0; // offset of row index idx in the padded layout
      for (int d = 0; d < rank - 1; d++) {
        off = off * padded[d] + idx[d];
      }
      off = off * padded[rank - 1];
      target.put(base + (int) (off * item), src, (int) (o * run), run);
      for (int d = rank - 2; d >= 0; d--) {
        if (++idx[d] < dims[d]) {
          break;
        }
        idx[d] = 0;
      }
    }
  }

  /**
   * Fills bytes {@code [0, bytes)} of {@code b} with {@code value} (null: zeros) as items of
   * {@code dtype}.
   *
   * @throws IllegalArgumentException if {@code dtype} is not a numeric type and {@code value} is not zero
   */
  static void fill(ByteBuffer b, int bytes, DType dtype, Number value, String name) {
    if (value == null || value.doubleValue() == 0 && !(dtype.isFloatingPoint() && 1 / value.doubleValue() < 0)) {
      RowGathers.fill(b, 0, bytes, (byte) 0);
      return;
    }
    int item = dtype.byteSize();
    for (int i = 0; i < bytes; i += item) {
      switch (dtype) {
        case BOOL, INT8, UINT8 -> b.put(i, value.byteValue());
        case INT16, UINT16 -> b.putShort(i, value.shortValue());
        case INT32, UINT32 -> b.putInt(i, value.intValue());
        case INT64, UINT64 -> b.putLong(i, value.longValue());
        case FLOAT16 -> b.putShort(i, Float16.fromFloat(value.floatValue()));
        case BFLOAT16 -> b.putShort(i, (short) (Float.floatToIntBits(value.floatValue()) >>> 16));
        case FLOAT32 -> b.putFloat(i, value.floatValue());
        case FLOAT64 -> b.putDouble(i, value.doubleValue());
        default -> throw new IllegalArgumentException("field '" + name + "': cannot pad values of dtype " + dtype
            + " with " + value);
      }
    }
  }
}
