package dev.sluice.core;

import java.nio.ByteBuffer;

/**
 * Value equality of {@link Tensor}s: the same dtype, shape, values and nulls, where a ragged
 * dimension equals a dense one whose items have the same values. The tensors have checked their
 * lifetimes before calling here.
 */
final class TensorEquality {
  private TensorEquality() {}

  /** True when {@code a} and {@code b} hold equal values (see {@link Tensor#equals}). */
  static boolean equal(Tensor a, Tensor b) {
    if (a.isRagged() || b.isRagged()) {
      return sameItems(a, b);
    }
    if (a.dtype != b.dtype || !a.shape.equals(b.shape) || !a.data.equals(b.data)
        || a.offsets.length != b.offsets.length) {
      return false;
    }
    for (int i = 0; i < a.offsets.length; i++) {
      if (!a.offsets[i].equals(b.offsets[i])) {
        return false;
      }
    }
    if (a.validity == null && b.validity == null) {
      return true;
    }
    int dims = TensorLayouts.raggedDims(a.shape) + 1;
    for (int j = 0; j < dims; j++) {
      ByteBuffer x = a.validity == null ? null : a.validity[j];
      ByteBuffer y = b.validity == null ? null : b.validity[j];
      if (x == null && y == null) {
        continue;
      }
      long n = TensorElements.countAt(a, j);
      for (int i = 0; i < n; i++) {
        if ((x == null || x.get(i) != 0) != (y == null || y.get(i) != 0)) {
          return false;
        }
      }
    }
    return true;
  }

  /** Item by item: the same nulls and equal values, whether a dimension is stored ragged or dense. */
  private static boolean sameItems(Tensor a, Tensor b) {
    if (a.dtype != b.dtype || a.shape.rank() != b.shape.rank() || a.shape.dim(0) != b.shape.dim(0)) {
      return false;
    }
    for (long i = 0, n = a.shape.dim(0); i < n; i++) {
      boolean isNull = a.isNull(i);
      if (isNull != b.isNull(i) || !isNull && !a.slice(i).contentEquals(b.slice(i))) {
        return false;
      }
    }
    return true;
  }

  /** A hash consistent with {@link #equal}: a ragged and a dense tensor may be equal. */
  static int hash(Tensor t) {
    if (t.shape.rank() > 1) {
      return 31 * (31 * t.dtype.hashCode() + t.shape.rank()) + Long.hashCode(t.shape.dim(0));
    }
    return 31 * (31 * t.dtype.hashCode() + t.shape.hashCode()) + t.data.hashCode();
  }
}
