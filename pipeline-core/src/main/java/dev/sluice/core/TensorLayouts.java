package dev.sluice.core;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * The checks of {@link Tensor}'s public constructors ({@code wrap}, {@code wrapVariable},
 * {@code wrapRagged}): every buffer must fit the shape, else an {@link IllegalArgumentException}
 * names the buffer, what the shape needs and what was given.
 */
final class TensorLayouts {
  private TensorLayouts() {}

  /** {@link Tensor#wrap}. */
  static Tensor wrap(DType dtype, Shape shape, ByteBuffer data) {
    Objects.requireNonNull(dtype, "dtype");
    Objects.requireNonNull(shape, "shape");
    if (!shape.isFullyDefined()) {
      throw new IllegalArgumentException("a tensor needs a concrete shape but it was " + shape
          + " (a ragged tensor is made with wrapRagged)");
    }
    ByteBuffer view = data.slice().order(ByteOrder.LITTLE_ENDIAN);
    if (dtype.isVariableLength()) {
      if (shape.rank() != 0) {
        throw new IllegalArgumentException(
            "a " + dtype + " tensor of rank " + shape.rank() + " needs offsets; use wrapVariable");
      }
      return Tensor.ofChecked(dtype, shape, view, null);
    }
    long expected = shape.numElements() * dtype.byteSize();
    if (expected != view.remaining()) {
      throw new IllegalArgumentException(
          "shape " + shape + " of " + dtype + " needs " + expected + " bytes but the buffer has "
              + view.remaining());
    }
    return Tensor.ofChecked(dtype, shape, view, null);
  }

  /** {@link Tensor#wrapVariable}. */
  static Tensor wrapVariable(DType dtype, ByteBuffer data, ByteBuffer offsets) {
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
    return Tensor.ofChecked(dtype, Shape.of(n), view, off);
  }

  /** {@link Tensor#wrapRagged}. */
  static Tensor wrapRagged(DType dtype, Shape shape, ByteBuffer data, List<ByteBuffer> offsets,
      List<ByteBuffer> validity) {
    Objects.requireNonNull(dtype, "dtype");
    Objects.requireNonNull(shape, "shape");
    if (shape.rank() == 0 || shape.dim(0) < 0) {
      throw new IllegalArgumentException("a ragged tensor needs a concrete first dimension but its shape is " + shape);
    }
    int ragged = raggedDims(shape);
    for (int i = ragged + 1; i < shape.rank(); i++) {
      if (shape.dim(i) < 0) {
        throw new IllegalArgumentException("shape " + shape + " has a variable (-1) dimension after a fixed one");
      }
    }
    if (dtype.isVariableLength() && ragged + 1 != shape.rank()) {
      throw new IllegalArgumentException("a " + dtype + " tensor takes no fixed dimensions after the first: " + shape);
    }
    int levels = ragged + (dtype.isVariableLength() ? 1 : 0);
    if (offsets.size() != levels) {
      throw new IllegalArgumentException("shape " + shape + " of " + dtype + " needs " + levels
          + " offsets buffer(s) but " + offsets.size() + " were given");
    }
    if (!validity.isEmpty() && validity.size() != ragged + 1) {
      throw new IllegalArgumentException("shape " + shape + " has " + (ragged + 1)
          + " list dimension(s) but " + validity.size() + " validity buffers were given");
    }
    ByteBuffer[] off = new ByteBuffer[levels];
    ByteBuffer[] valid = validity.isEmpty() ? null : new ByteBuffer[ragged + 1];
    ByteBuffer view = data.slice().order(ByteOrder.LITTLE_ENDIAN);
    long count = shape.dim(0);
    for (int j = 0; j <= ragged; j++) {
      if (valid != null && validity.get(j) != null) {
        ByteBuffer v = validity.get(j).slice();
        if (v.remaining() != count) {
          throw new IllegalArgumentException("validity of dimension " + j + " needs " + count + " bytes but has "
              + v.remaining());
        }
        valid[j] = v;
      }
      if (j < levels) {
        ByteBuffer o = offsets.get(j).slice().order(ByteOrder.LITTLE_ENDIAN);
        if (o.remaining() != (count + 1) * 8) {
          throw new IllegalArgumentException("offsets " + j + " need " + (count + 1) + " int64 values but have "
              + o.remaining() + " bytes");
        }
        long prev = 0;
        for (long i = 0; i <= count; i++) {
          long x = o.getLong((int) (i * 8));
          if (i == 0 ? x != 0 : x < prev) {
            throw new IllegalArgumentException("offsets " + j + " must start at 0 and never decrease but value "
                + i + " is " + x + (i == 0 ? "" : " after " + prev));
          }
          prev = x;
        }
        off[j] = o;
        count = prev;
      }
    }
    long need = dtype.isVariableLength() ? count
        : count * Shape.of(Arrays.copyOfRange(shape.dims(), ragged + 1, shape.rank())).numElements() * dtype.byteSize();
    if (dtype.isVariableLength() ? need > view.remaining() : need != view.remaining()) {
      throw new IllegalArgumentException("shape " + shape + " of " + dtype + " with these offsets needs " + need
          + " bytes of values but the buffer has " + view.remaining());
    }
    return Tensor.ofLayout(dtype, shape, view, off, valid);
  }

  static boolean hasAny(ByteBuffer[] a) {
    for (ByteBuffer b : a) {
      if (b != null) {
        return true;
      }
    }
    return false;
  }

  /** The number of ragged ({@code -1}) dimensions of a tensor shape (they follow the first). */
  static int raggedDims(Shape shape) {
    int k = 0;
    while (k + 1 < shape.rank() && shape.dim(k + 1) < 0) {
      k++;
    }
    return k;
  }
}
