package dev.sluice.core;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Objects;

/**
 * An immutable, typed view of little-endian memory with a shape.
 *
 * <p>A tensor never copies on its own: {@link #wrap} and {@link #slice} share memory with their
 * source, so a row of a memory-mapped file is a tensor that points into the mapping. The tensor
 * does not own that memory and needs no release: a mapping is released by the GC once its last
 * view is gone, and a tensor of a {@link Batch} column is valid until the batch is closed.
 *
 * <p>Variable-length tensors ({@link DType#STRING}, {@link DType#BYTES}) of rank 0 hold one value
 * (its bytes); of rank 1 they hold {@code n} values laid out as Arrow does, contiguous bytes plus
 * {@code n + 1} int64 offsets.
 */
public final class Tensor {
  private final DType dtype;
  private final Shape shape;
  private final ByteBuffer data; // little-endian, position 0, limit = byte size; never exposed mutable
  private final ByteBuffer offsets; // int64 offsets for rank-1 variable-length tensors, else null

  private Tensor(DType dtype, Shape shape, ByteBuffer data, ByteBuffer offsets) {
    this.dtype = dtype;
    this.shape = shape;
    this.data = data;
    this.offsets = offsets;
  }

  /**
   * A tensor viewing {@code data} from its position to its limit, without a copy.
   *
   * @throws IllegalArgumentException if the shape is not concrete or its byte size differs from
   *     {@code data.remaining()}
   */
  public static Tensor wrap(DType dtype, Shape shape, ByteBuffer data) {
    Objects.requireNonNull(dtype, "dtype");
    Objects.requireNonNull(shape, "shape");
    if (!shape.isFullyDefined()) {
      throw new IllegalArgumentException("a tensor needs a concrete shape but it was " + shape);
    }
    ByteBuffer view = data.slice().order(ByteOrder.LITTLE_ENDIAN);
    if (dtype.isVariableLength()) {
      if (shape.rank() != 0) {
        throw new IllegalArgumentException(
            "a " + dtype + " tensor of rank " + shape.rank() + " needs offsets; use wrapVariable");
      }
      return new Tensor(dtype, shape, view, null);
    }
    long expected = shape.numElements() * dtype.byteSize();
    if (expected != view.remaining()) {
      throw new IllegalArgumentException(
          "shape " + shape + " of " + dtype + " needs " + expected + " bytes but the buffer has "
              + view.remaining());
    }
    return new Tensor(dtype, shape, view, null);
  }

  /**
   * A rank-1 tensor of {@code n} variable-length values: {@code data} holds their bytes back to
   * back, {@code offsets} holds {@code n + 1} little-endian int64 offsets into it.
   */
  public static Tensor wrapVariable(DType dtype, ByteBuffer data, ByteBuffer offsets) {
    if (!dtype.isVariableLength()) {
      throw new IllegalArgumentException("wrapVariable needs string or bytes but it was " + dtype);
    }
    ByteBuffer off = offsets.slice().order(ByteOrder.LITTLE_ENDIAN);
    if (off.remaining() % 8 != 0 || off.remaining() < 8) {
      throw new IllegalArgumentException(
          "offsets must hold n + 1 int64 values but have " + off.remaining() + " bytes");
    }
    int n = off.remaining() / 8 - 1;
    ByteBuffer view = data.slice().order(ByteOrder.LITTLE_ENDIAN);
    long last = off.getLong(n * 8);
    if (off.getLong(0) != 0 || last > view.remaining()) {
      throw new IllegalArgumentException(
          "offsets span [" + off.getLong(0) + ", " + last + ") but data has " + view.remaining() + " bytes");
    }
    return new Tensor(dtype, Shape.of(n), view, off);
  }

  public static Tensor of(float... values) {
    ByteBuffer b = allocate(values.length * 4L);
    b.asFloatBuffer().put(values);
    return new Tensor(DType.FLOAT32, Shape.of(values.length), b, null);
  }

  public static Tensor of(double... values) {
    ByteBuffer b = allocate(values.length * 8L);
    b.asDoubleBuffer().put(values);
    return new Tensor(DType.FLOAT64, Shape.of(values.length), b, null);
  }

  public static Tensor of(long... values) {
    ByteBuffer b = allocate(values.length * 8L);
    b.asLongBuffer().put(values);
    return new Tensor(DType.INT64, Shape.of(values.length), b, null);
  }

  public static Tensor of(int... values) {
    ByteBuffer b = allocate(values.length * 4L);
    b.asIntBuffer().put(values);
    return new Tensor(DType.INT32, Shape.of(values.length), b, null);
  }

  /** A tensor of the given dtype and shape over a copy of {@code bytes} (little-endian values). */
  public static Tensor copyOf(DType dtype, Shape shape, byte[] bytes) {
    ByteBuffer b = allocate(bytes.length);
    b.put(bytes).flip();
    return wrap(dtype, shape, b);
  }

  public static Tensor scalar(long value) {
    ByteBuffer b = allocate(8);
    b.putLong(0, value);
    return new Tensor(DType.INT64, Shape.scalar(), b, null);
  }

  public static Tensor scalar(float value) {
    ByteBuffer b = allocate(4);
    b.putFloat(0, value);
    return new Tensor(DType.FLOAT32, Shape.scalar(), b, null);
  }

  public static Tensor scalar(double value) {
    ByteBuffer b = allocate(8);
    b.putDouble(0, value);
    return new Tensor(DType.FLOAT64, Shape.scalar(), b, null);
  }

  public static Tensor ofString(String value) {
    byte[] utf8 = value.getBytes(StandardCharsets.UTF_8);
    return new Tensor(DType.STRING, Shape.scalar(), ByteBuffer.wrap(utf8).order(ByteOrder.LITTLE_ENDIAN), null);
  }

  public static Tensor ofBytes(byte[] value) {
    return new Tensor(DType.BYTES, Shape.scalar(), ByteBuffer.wrap(value.clone()).order(ByteOrder.LITTLE_ENDIAN), null);
  }

  private static ByteBuffer allocate(long bytes) {
    return ByteBuffer.allocate(Math.toIntExact(bytes)).order(ByteOrder.LITTLE_ENDIAN);
  }

  public DType dtype() {
    return dtype;
  }

  public Shape shape() {
    return shape;
  }

  /** Number of values (for a rank-1 variable-length tensor, the number of strings or blobs). */
  public long numElements() {
    return shape.numElements();
  }

  /** Size of the data in bytes (for variable-length tensors, the bytes of all values). */
  public int byteSize() {
    return data.remaining();
  }

  /** A read-only little-endian view of the data: position 0, limit {@link #byteSize()}. */
  public ByteBuffer data() {
    return data.asReadOnlyBuffer().order(ByteOrder.LITTLE_ENDIAN);
  }

  /** The data buffer itself (position 0, little-endian), for copies inside core; never handed to users. */
  ByteBuffer rawData() {
    return data;
  }

  /** The int64 offsets of a rank-1 variable-length tensor (read-only view). */
  public ByteBuffer offsets() {
    if (offsets == null) {
      throw new IllegalStateException("a " + dtype + shape + " tensor has no offsets");
    }
    return offsets.asReadOnlyBuffer().order(ByteOrder.LITTLE_ENDIAN);
  }

  /** Copies the data into {@code target} at its position, advancing it. */
  public void copyTo(ByteBuffer target) {
    target.put(data.duplicate());
  }

  /** Row {@code index} along the first dimension, as a view with one dimension less. */
  public Tensor slice(long index) {
    checkRow(index, 1);
    if (offsets != null) {
      int from = (int) offsets.getLong((int) index * 8);
      int to = (int) offsets.getLong((int) (index + 1) * 8);
      return new Tensor(dtype, Shape.scalar(), data.slice(from, to - from).order(ByteOrder.LITTLE_ENDIAN), null);
    }
    Shape rowShape = shape.dropFirst();
    int rowBytes = Math.toIntExact(rowShape.numElements() * dtype.byteSize());
    int from = Math.toIntExact(index * rowBytes);
    return new Tensor(dtype, rowShape, data.slice(from, rowBytes).order(ByteOrder.LITTLE_ENDIAN), null);
  }

  /** Rows {@code [from, from + count)} along the first dimension, as a view. */
  public Tensor slice(long from, long count) {
    checkRow(from, count);
    if (offsets != null) {
      ByteBuffer off = ByteBuffer.allocate(Math.toIntExact((count + 1) * 8)).order(ByteOrder.LITTLE_ENDIAN);
      long base = offsets.getLong((int) from * 8);
      for (int i = 0; i <= count; i++) {
        off.putLong(i * 8, offsets.getLong((int) (from + i) * 8) - base);
      }
      long end = offsets.getLong((int) (from + count) * 8);
      return new Tensor(dtype, Shape.of(count),
          data.slice((int) base, (int) (end - base)).order(ByteOrder.LITTLE_ENDIAN), off);
    }
    long[] dims = shape.dims();
    long rowBytes = (dims.length == 1 ? 1 : shape.dropFirst().numElements()) * dtype.byteSize();
    dims[0] = count;
    return new Tensor(dtype, Shape.of(dims),
        data.slice(Math.toIntExact(from * rowBytes), Math.toIntExact(count * rowBytes)).order(ByteOrder.LITTLE_ENDIAN), null);
  }

  private void checkRow(long from, long count) {
    if (shape.rank() == 0) {
      throw new IndexOutOfBoundsException("cannot slice a scalar " + dtype + " tensor");
    }
    long n = shape.dim(0);
    if (from < 0 || count < 0 || from + count > n) {
      throw new IndexOutOfBoundsException(
          "rows [" + from + ", " + (from + count) + ") out of bounds for first dimension " + n
              + " of tensor " + dtype + shape);
    }
  }

  private int offsetOf(long i, int width) {
    if (dtype.isVariableLength()) {
      throw new IllegalStateException("element access on a " + dtype + " tensor; use bytesAt/stringAt");
    }
    long n = shape.numElements();
    if (i < 0 || i >= n) {
      throw new IndexOutOfBoundsException("element " + i + " out of bounds for " + n + " elements of tensor " + dtype + shape);
    }
    if (width != dtype.byteSize()) {
      throw new IllegalStateException("cannot read a " + width + "-byte value from a " + dtype + " tensor");
    }
    return (int) (i * width);
  }

  public float getFloat(long i) {
    return data.getFloat(offsetOf(i, 4));
  }

  public double getDouble(long i) {
    return data.getDouble(offsetOf(i, 8));
  }

  public long getLong(long i) {
    return data.getLong(offsetOf(i, 8));
  }

  public int getInt(long i) {
    return data.getInt(offsetOf(i, 4));
  }

  public short getShort(long i) {
    return data.getShort(offsetOf(i, 2));
  }

  public byte getByte(long i) {
    return data.get(offsetOf(i, 1));
  }

  public boolean getBoolean(long i) {
    return data.get(offsetOf(i, 1)) != 0;
  }

  /** Element {@code i} of any real numeric dtype converted to double (unsigned as unsigned). */
  public double getAsDouble(long i) {
    return switch (dtype) {
      case BOOL, UINT8 -> Byte.toUnsignedInt(getByte(i));
      case INT8 -> getByte(i);
      case INT16 -> getShort(i);
      case UINT16 -> Short.toUnsignedInt(getShort(i));
      case INT32 -> getInt(i);
      case UINT32 -> Integer.toUnsignedLong(getInt(i));
      case INT64 -> getLong(i);
      case UINT64 -> Double.parseDouble(Long.toUnsignedString(getLong(i)));
      case FLOAT16 -> Float16.toFloat(getShort(i));
      case BFLOAT16 -> Float.intBitsToFloat(getShort(i) << 16);
      case FLOAT32 -> getFloat(i);
      case FLOAT64 -> getDouble(i);
      default -> throw new IllegalStateException("getAsDouble on a " + dtype + " tensor");
    };
  }

  /** Element {@code i} of an integer or bool dtype as a long (uint64 wraps like Java's long). */
  public long getAsLong(long i) {
    return switch (dtype) {
      case BOOL, UINT8 -> Byte.toUnsignedInt(getByte(i));
      case INT8 -> getByte(i);
      case INT16 -> getShort(i);
      case UINT16 -> Short.toUnsignedInt(getShort(i));
      case INT32 -> getInt(i);
      case UINT32 -> Integer.toUnsignedLong(getInt(i));
      case INT64, UINT64 -> getLong(i);
      default -> throw new IllegalStateException("getAsLong on a " + dtype + " tensor");
    };
  }

  /** The bytes of value {@code i} of a variable-length tensor ({@code i = 0} for a scalar). */
  public ByteBuffer bytesAt(long i) {
    if (!dtype.isVariableLength()) {
      throw new IllegalStateException("bytesAt on a fixed-length " + dtype + " tensor");
    }
    if (offsets == null) {
      if (i != 0) {
        throw new IndexOutOfBoundsException("value " + i + " of a scalar " + dtype + " tensor");
      }
      return data();
    }
    return slice(i).data();
  }

  public String stringAt(long i) {
    ByteBuffer b = bytesAt(i);
    byte[] a = new byte[b.remaining()];
    b.get(a);
    return new String(a, StandardCharsets.UTF_8);
  }

  /** The value of a scalar string tensor. */
  public String getString() {
    return stringAt(0);
  }

  public float[] toFloatArray() {
    if (dtype != DType.FLOAT32) {
      throw new IllegalStateException("toFloatArray on a " + dtype + " tensor");
    }
    float[] out = new float[Math.toIntExact(numElements())];
    data.duplicate().order(ByteOrder.LITTLE_ENDIAN).asFloatBuffer().get(out);
    return out;
  }

  public long[] toLongArray() {
    if (dtype != DType.INT64 && dtype != DType.UINT64) {
      throw new IllegalStateException("toLongArray on a " + dtype + " tensor");
    }
    long[] out = new long[Math.toIntExact(numElements())];
    data.duplicate().order(ByteOrder.LITTLE_ENDIAN).asLongBuffer().get(out);
    return out;
  }

  /** A copy of the data bytes. */
  public byte[] toByteArray() {
    byte[] out = new byte[data.remaining()];
    data.duplicate().get(out);
    return out;
  }

  /** True when dtype, shape and bytes are equal. */
  public boolean contentEquals(Tensor other) {
    return dtype == other.dtype && shape.equals(other.shape) && data.equals(other.data)
        && (offsets == null ? other.offsets == null : offsets.equals(other.offsets));
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Tensor t && contentEquals(t);
  }

  @Override
  public int hashCode() {
    return 31 * (31 * dtype.hashCode() + shape.hashCode()) + data.hashCode();
  }

  @Override
  public String toString() {
    StringBuilder sb = new StringBuilder("Tensor(").append(dtype).append(shape);
    if (dtype == DType.STRING && shape.rank() == 0) {
      sb.append(" \"").append(getString()).append('"');
    } else if (!dtype.isVariableLength() && !dtype.isComplex()) {
      long n = numElements();
      sb.append(" [");
      for (long i = 0; i < Math.min(n, 8); i++) {
        if (i > 0) {
          sb.append(", ");
        }
        sb.append(dtype.isFloatingPoint() ? String.valueOf(getAsDouble(i)) : String.valueOf(getAsLong(i)));
      }
      sb.append(n > 8 ? ", ...]" : "]");
    }
    return sb.append(')').toString();
  }
}
