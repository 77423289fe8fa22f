package dev.sluice.core;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/** The {@link Tensor}s built from Java values: each over its own little-endian heap copy. */
final class HeapTensors {
  private HeapTensors() {}

  static Tensor ofFloats(float[] values) {
    ByteBuffer b = allocate(values.length * 4L);
    b.asFloatBuffer().put(values);
    return Tensor.ofChecked(DType.FLOAT32, Shape.of(values.length), b, null);
  }

  static Tensor ofDoubles(double[] values) {
    ByteBuffer b = allocate(values.length * 8L);
    b.asDoubleBuffer().put(values);
    return Tensor.ofChecked(DType.FLOAT64, Shape.of(values.length), b, null);
  }

  static Tensor ofLongs(long[] values) {
    ByteBuffer b = allocate(values.length * 8L);
    b.asLongBuffer().put(values);
    return Tensor.ofChecked(DType.INT64, Shape.of(values.length), b, null);
  }

  static Tensor ofInts(int[] values) {
    ByteBuffer b = allocate(values.length * 4L);
    b.asIntBuffer().put(values);
    return Tensor.ofChecked(DType.INT32, Shape.of(values.length), b, null);
  }

  static Tensor copyOf(DType dtype, Shape shape, byte[] bytes) {
    ByteBuffer b = allocate(bytes.length);
    b.put(bytes).flip();
    return Tensor.wrap(dtype, shape, b);
  }

  static Tensor scalar(long value) {
    ByteBuffer b = allocate(8);
    b.putLong(0, value);
    return Tensor.ofChecked(DType.INT64, Shape.scalar(), b, null);
  }

  static Tensor scalar(float value) {
    ByteBuffer b = allocate(4);
    b.putFloat(0, value);
    return Tensor.ofChecked(DType.FLOAT32, Shape.scalar(), b, null);
  }

  static Tensor scalar(double value) {
    ByteBuffer b = allocate(8);
    b.putDouble(0, value);
    return Tensor.ofChecked(DType.FLOAT64, Shape.scalar(), b, null);
  }

  static Tensor ofString(String value) {
    byte[] utf8 = value.getBytes(StandardCharsets.UTF_8);
    return Tensor.ofChecked(DType.STRING, Shape.scalar(), ByteBuffer.wrap(utf8).order(ByteOrder.LITTLE_ENDIAN), null);
  }

  static Tensor ofBytes(byte[] value) {
    return Tensor.ofChecked(DType.BYTES, Shape.scalar(), ByteBuffer.wrap(value.clone()).order(ByteOrder.LITTLE_ENDIAN),
        null);
  }

  static Tensor ofStrings(String[] values) {
    Tensor[] elements = new Tensor[values.length];
    for (int i = 0; i < values.length; i++) {
      elements[i] = values[i] == null ? null : ofString(values[i]);
    }
    return Nested.listOf(DType.STRING, Arrays.asList(elements));
  }

  static Tensor listOf(Tensor[] elements) {
    for (Tensor t : elements) {
      if (t != null) {
        return Nested.listOf(t.dtype(), Arrays.asList(elements));
      }
    }
    throw new IllegalArgumentException("listOf needs a dtype when every element is null: use listOf(dtype, elements)");
  }

  private static ByteBuffer allocate(long bytes) {
    return ByteBuffer.allocate(Math.toIntExact(bytes)).order(ByteOrder.LITTLE_ENDIAN);
  }
}
