package dev.sluice.core;

import dev.sluice.core.internal.SpiAccess;
import java.nio.ByteBuffer;
import java.util.List;

/** Builds nested values on the heap ({@link Tensor#listOf}). */
final class Nested {
  private Nested() {}

  /** See {@link Tensor#listOf(DType, List)}. */
  static Tensor listOf(DType dtype, List<Tensor> elements) {
    int rank = -1;
    boolean nullElement = false;
    for (Tensor t : elements) {
      if (t == null) {
        nullElement = true;
        continue;
      }
      if (t.dtype() != dtype) {
        throw new IllegalArgumentException("listOf: an element is " + t.dtype() + " but the list holds " + dtype);
      }
      if (rank >= 0 && t.shape().rank() != rank) {
        throw new IllegalArgumentException("listOf: elements of rank " + rank + " and " + t.shape().rank()
            + " cannot share a list");
      }
      rank = t.shape().rank();
    }
    rank = Math.max(rank, 0);
    // spec dims: [-1 (the list)] + the elements' dims, where a dimension the elements disagree on,
    // or that holds nulls, is ragged, and so is every dimension before a ragged one
    long[] dims = new long[rank + 1];
    dims[0] = -1;
    int mask = nullElement ? 1 : 0;
    int lastRagged = 0;
    for (int d = 0; d < rank; d++) {
      long common = -2;
      for (Tensor t : elements) {
        if (t == null) {
          continue;
        }
        long x = t.shape().dim(d);
        ByteBuffer[] v = t.rawValidity();
        if (v != null && d < v.length && v[d] != null) {
          mask |= 1 << (d + 1);
        }
        common = common == -2 || common == x ? x : -1;
      }
      dims[d + 1] = common;
      if (common < 0 || (mask & (1 << (d + 1))) != 0 || dtype.isVariableLength()) {
        lastRagged = d + 1;
      }
    }
    for (int d = 1; d <= lastRagged; d++) {
      dims[d] = -1;
    }
    TensorSpec spec = new TensorSpec("list", dtype, Shape.of(dims), false, mask);
    return SpiAccess.get().heapList(spec, elements);
  }
}
