package dev.sluice.core;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Reads of a {@link Tensor}'s values beyond one typed element: conversions between dtypes, the
 * bytes of a variable-length value, and whole-tensor copies into Java arrays. The tensor has
 * checked its lifetime before calling here, except for the array copies, which check it after
 * their dtype.
 */
final class TensorElements {
  private TensorElements() {}

  /** Element {@code i} of any real numeric dtype converted to double (unsigned as unsigned). */
  static double asDouble(Tensor t, long i) {
    return switch (t.dtype) {
      case BOOL, UINT8 -> Byte.toUnsignedInt(t.getByte(i));
      case INT8 -> t.getByte(i);
      case INT16 -> t.getShort(i);
      case UINT16 -> Short.toUnsignedInt(t.getShort(i));
      case INT32 -> t.getInt(i);
      case UINT32 -> Integer.toUnsignedLong(t.getInt(i));
      case INT64 -> t.getLong(i);
      case UINT64 -> Double.parseDouble(Long.toUnsignedString(t.getLong(i)));
      case FLOAT16 -> Float16.toFloat(t.getShort(i));
      case BFLOAT16 -> Float.intBitsToFloat(t.getShort(i) << 16);
      case FLOAT32 -> t.getFloat(i);
      case FLOAT64 -> t.getDouble(i);
      default -> throw new IllegalStateException("getAsDouble on a " + t.dtype + " tensor");
    };
  }

  /** Element {@code i} of an integer or bool dtype as a long (uint64 wraps like Java's long). */
  static long asLong(Tensor t, long i) {
    return switch (t.dtype) {
      case BOOL, UINT8 -> Byte.toUnsignedInt(t.getByte(i));
      case INT8 -> t.getByte(i);
      case INT16 -> t.getShort(i);
      case UINT16 -> Short.toUnsignedInt(t.getShort(i));
      case INT32 -> t.getInt(i);
      case UINT32 -> Integer.toUnsignedLong(t.getInt(i));
      case INT64, UINT64 -> t.getLong(i);
      default -> throw new IllegalStateException("getAsLong on a " + t.dtype + " tensor");
    };
  }

  /** The bytes of value {@code i} of a variable-length tensor ({@code i = 0} for a scalar), read-only. */
  static ByteBuffer bytesAt(Tensor t, long i) {
    if (!t.dtype.isVariableLength()) {
      throw new IllegalStateException("bytesAt on a fixed-length " + t.dtype + " tensor");
    }
    ByteBuffer[] offsets = t.offsets;
    if (offsets.length == 0) {
      if (i != 0) {
        throw new IndexOutOfBoundsException("value " + i + " of a scalar " + t.dtype + " tensor");
      }
      return t.data();
    }
    long n = t.numElements();
    if (i < 0 || i >= n) {
      throw new IndexOutOfBoundsException("value " + i + " out of bounds for " + n + " values of tensor " + t.dtype
          + t.shape);
    }
    ByteBuffer o = offsets[offsets.length - 1];
    int from = (int) o.getLong((int) i * 8);
    int to = (int) o.getLong((int) (i + 1) * 8);
    return t.data.slice(from, to - from).asReadOnlyBuffer().order(ByteOrder.LITTLE_ENDIAN);
  }

  /** Every value of a float32 tensor, in C order. */
  static float[] floats(Tensor t) {
    if (t.dtype != DType.FLOAT32) {
      throw new IllegalStateException("toFloatArray on a " + t.dtype + " tensor");
    }
    ByteBuffer data = t.rawData(); // checks the lifetime
    float[] out = new float[Math.toIntExact(t.numElements())];
    data.duplicate().order(ByteOrder.LITTLE_ENDIAN).asFloatBuffer().get(out);
    return out;
  }

  /** Every value of an int64 or uint64 tensor, in C order. */
  static long[] longs(Tensor t) {
    if (t.dtype != DType.INT64 && t.dtype != DType.UINT64) {
      throw new IllegalStateException("toLongArray on a " + t.dtype + " tensor");
    }
    ByteBuffer data = t.rawData(); // checks the lifetime
    long[] out = new long[Math.toIntExact(t.numElements())];
    data.duplicate().order(ByteOrder.LITTLE_ENDIAN).asLongBuffer().get(out);
    return out;
  }

  /**
   * Items of dimension {@code j} of {@code t} (j at most the number of ragged dimensions): the
   * first dimension followed through the offsets.
   */
  static long countAt(Tensor t, int j) {
    long c = t.shape.dim(0);
    for (int i = 0; i < j; i++) {
      c = t.offsets[i].getLong((int) c * 8);
    }
    return c;
  }

  /** Values per innermost item of {@code shape}: the product of the fixed dimensions after the {@code ragged} ones. */
  static long innerElements(Shape shape, int ragged) {
    long n = 1;
    for (int i = ragged + 1; i < shape.rank(); i++) {
      n *= shape.dim(i);
    }
    return n;
  }
}
