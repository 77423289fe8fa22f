package dev.sluice.core.spi;

import dev.sluice.core.DType;
import dev.sluice.core.Float16;
import dev.sluice.core.Shape;
import dev.sluice.core.Tensor;
import dev.sluice.core.TensorSpec;
import dev.sluice.core.spi.ColumnMemory.Buf;
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
   * Fills the {@code capacity} rows of a padded field of {@code spec} in {@code fixed} with
   * {@code fill} (null: zeros) and returns the zeroed buffer of each row's true dimensions (int64
   * {@code [capacity, rank]}, from {@code pool}, or the heap when it is null), or null for a field
   * of scalars ({@link ColumnBuilder#pad}).
   */
  static Buf pad(ByteBuffer fixed, TensorSpec spec, int capacity, Number fill, BufferPool pool, long[] held) {
    fill(fixed, capacity * Math.toIntExact(spec.rowBytes()), spec.dtype(), fill, spec.name());
    int rank = spec.shape().rank();
    if (rank == 0) {
      return null;
    }
    Buf lengths = ColumnMemory.allocate(pool, held, 8L * capacity * rank);
    RowGathers.fill(lengths.buf, 0, 8 * capacity * rank, (byte) 0);
    return lengths;
  }

  /**
   * Checks that {@code value} fits a padded row of {@code spec}, copies it into {@code fixed} at
   * {@code base} and records its true dimensions as row {@code row} of {@code lengths}
   * ({@link ColumnBuilder#setPadded}).
   *
   * @throws IllegalArgumentException if the value does not fit the row
   */
  static void setPadded(ByteBuffer fixed, int base, Buf lengths, int row, TensorSpec spec, Tensor value) {
    if (value.dtype() != spec.dtype() || value.shape().rank() != spec.shape().rank()) {
      throw new IllegalArgumentException("field '" + spec.name() + "' " + spec + " takes " + spec.dtype()
          + " values of rank " + spec.shape().rank() + " but the value is " + value.dtype() + value.shape());
    }
    if (value.hasNulls()) {
      throw new IllegalArgumentException("field '" + spec.name() + "': the value holds null elements, which "
          + "padding would turn into values");
    }
    long[] dims = bound(value);
    long[] shape = spec.shape().dims();
    for (int d = 0; d < dims.length; d++) {
      if (dims[d] > shape[d]) {
        throw new IllegalArgumentException("field '" + spec.name() + "': a value of shape " + value.shape()
            + (value.isRagged() ? " (at most " + Shape.of(dims) + ")" : "") + " does not fit the padded shape "
            + spec.shape());
      }
    }
    copyPadded(value, fixed, base, shape, spec.dtype().byteSize());
    for (int d = 0; d < dims.length; d++) {
      lengths.buf.putLong((row * dims.length + d) * 8, dims[d]);
    }
  }

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
