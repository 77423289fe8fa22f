package dev.sluice.core;

import dev.sluice.core.internal.SpiAccess;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;

/**
 * The views and copies of a {@link Tensor}'s items: a slice of its first dimension shares the
 * values (re-based offsets are copies), a copy is compact and on the heap. The tensor has checked
 * its lifetime before calling here.
 */
final class TensorViews {
  private TensorViews() {}

  /** Item {@code index} of the first dimension of {@code t}, with one dimension less. */
  static Tensor item(Tensor t, long index) {
    checkRows(t, index, 1);
    DType dtype = t.dtype;
    ByteBuffer data = t.data;
    ByteBuffer[] offsets = t.offsets;
    if (offsets.length == 0) {
      Shape rowShape = t.shape.dropFirst();
      int rowBytes = Math.toIntExact(rowShape.numElements() * dtype.byteSize());
      int from = Math.toIntExact(index * rowBytes);
      return new Tensor(dtype, rowShape, data.slice(from, rowBytes).order(ByteOrder.LITTLE_ENDIAN), Tensor.NO_BUFFERS,
          null, t.memory);
    }
    if (t.shape.rank() == 1) { // one string or blob
      int from = (int) offsets[0].getLong((int) index * 8);
      int to = (int) offsets[0].getLong((int) (index + 1) * 8);
      return new Tensor(dtype, Shape.scalar(), data.slice(from, to - from).order(ByteOrder.LITTLE_ENDIAN),
          Tensor.NO_BUFFERS, null, t.memory);
    }
    long start = offsets[0].getLong((int) index * 8);
    long end = offsets[0].getLong((int) (index + 1) * 8);
    long[] dims = t.shape.dims();
    long[] rowDims = Arrays.copyOfRange(dims, 1, dims.length);
    rowDims[0] = end - start;
    return range(t, 1, start, end, Shape.of(rowDims));
  }

  /** Items {@code [from, from + count)} of the first dimension of {@code t}. */
  static Tensor items(Tensor t, long from, long count) {
    checkRows(t, from, count);
    long[] dims = t.shape.dims();
    dims[0] = count;
    if (t.offsets.length == 0 && t.validity == null) {
      long rowBytes = (dims.length == 1 ? 1 : t.shape.dropFirst().numElements()) * t.dtype.byteSize();
      ByteBuffer view = t.data.slice(Math.toIntExact(from * rowBytes), Math.toIntExact(count * rowBytes));
      return new Tensor(t.dtype, Shape.of(dims), view.order(ByteOrder.LITTLE_ENDIAN), Tensor.NO_BUFFERS, null,
          t.memory);
    }
    return range(t, 0, from, from + count, Shape.of(dims));
  }

  /**
   * The items {@code [start, end)} of list dimension {@code level} (0 = the first dimension) of
   * {@code t} and everything below them, as a tensor of shape {@code shape} whose first dimension
   * they are.
   */
  private static Tensor range(Tensor t, int level, long start, long end, Shape shape) {
    int ragged = TensorLayouts.raggedDims(t.shape);
    ByteBuffer[] offsets = t.offsets;
    ByteBuffer[] validity = t.validity;
    int newLevels = offsets.length - level;
    ByteBuffer[] off = newLevels == 0 ? Tensor.NO_BUFFERS : new ByteBuffer[newLevels];
    ByteBuffer[] valid = null;
    for (int j = level; j <= ragged; j++) {
      if (validity != null && validity[j] != null) {
        if (valid == null) {
          valid = new ByteBuffer[ragged + 1 - level];
        }
        valid[j - level] = validity[j].slice((int) start, (int) (end - start));
      }
      if (j < offsets.length) {
        long s = offsets[j].getLong((int) start * 8);
        long e = offsets[j].getLong((int) end * 8);
        ByteBuffer o = ByteBuffer.allocate(Math.toIntExact((end - start + 1) * 8)).order(ByteOrder.LITTLE_ENDIAN);
        SpiAccess.get().rebase(offsets[j], start, end - start + 1, -s, o, 0);
        off[j - level] = o;
        start = s;
        end = e;
      }
    }
    ByteBuffer values;
    if (t.dtype.isVariableLength()) {
      values = t.data.slice((int) start, (int) (end - start));
    } else {
      int item = Math.toIntExact(TensorElements.innerElements(t.shape, ragged) * t.dtype.byteSize());
      values = t.data.slice(Math.toIntExact(start * item), Math.toIntExact((end - start) * item));
    }
    return new Tensor(t.dtype, shape, values.order(ByteOrder.LITTLE_ENDIAN), off, valid, t.memory);
  }

  private static void checkRows(Tensor t, long from, long count) {
    if (t.shape.rank() == 0) {
      throw new IndexOutOfBoundsException("cannot slice a scalar " + t.dtype + " tensor");
    }
    long n = t.shape.dim(0);
    if (from < 0 || count < 0 || from + count > n) {
      throw new IndexOutOfBoundsException(
          "rows [" + from + ", " + (from + count) + ") out of bounds for first dimension " + n
              + " of tensor " + t.dtype + t.shape);
    }
  }

  /** A compact heap copy of {@code t}: values, offsets and validity. */
  static Tensor copy(Tensor t) {
    ByteBuffer d = copyOf(t.data);
    if (t.offsets.length == 0 && t.validity == null) {
      return new Tensor(t.dtype, t.shape, d, Tensor.NO_BUFFERS, null, null);
    }
    ByteBuffer[] off = t.offsets.length == 0 ? Tensor.NO_BUFFERS : new ByteBuffer[t.offsets.length];
    for (int i = 0; i < off.length; i++) {
      off[i] = copyOf(t.offsets[i]);
    }
    ByteBuffer[] valid = null;
    if (t.validity != null) {
      valid = new ByteBuffer[t.validity.length];
      for (int i = 0; i < valid.length; i++) {
        valid[i] = t.validity[i] == null ? null : copyOf(t.validity[i]);
      }
    }
    return new Tensor(t.dtype, t.shape, d, off, valid, null);
  }

  private static ByteBuffer copyOf(ByteBuffer b) {
    ByteBuffer c = ByteBuffer.allocate(b.remaining()).order(ByteOrder.LITTLE_ENDIAN);
    c.put(0, b, b.position(), b.remaining());
    return c;
  }
}
