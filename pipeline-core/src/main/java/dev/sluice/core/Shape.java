package dev.sluice.core;

import java.util.Arrays;

/**
 * An immutable tensor shape. A dimension of {@code -1} means "variable": in a {@link TensorSpec}, a
 * list of any length; in a {@link Tensor}, a ragged dimension (every dimension but the first may be
 * ragged, each item having its own length). The first dimension of a tensor is always concrete.
 */
public final class Shape {
  private static final Shape SCALAR = new Shape(new long[0]);

  private final long[] dims;

  private Shape(long[] dims) {
    this.dims = dims;
  }

  /** A shape with the given dimensions; each must be ≥ 0, or -1 for variable. */
  public static Shape of(long... dims) {
    if (dims.length == 0) {
      return SCALAR;
    }
    for (int i = 0; i < dims.length; i++) {
      if (dims[i] < -1) {
        throw new IllegalArgumentException(
            "dimension " + i + " must be >= 0 (or -1 for variable) but it was " + dims[i]);
      }
    }
    return new Shape(dims.clone());
  }

  /** The shape of rank 0 (one value). */
  public static Shape scalar() {
    return SCALAR;
  }

  /** Number of dimensions. */
  public int rank() {
    return dims.length;
  }

  /** Dimension {@code i}, from 0; {@code -1} when it is variable. */
  public long dim(int i) {
    if (i < 0 || i >= dims.length) {
      throw new IndexOutOfBoundsException("dimension " + i + " of a rank-" + dims.length + " shape " + this);
    }
    return dims[i];
  }

  /** A copy of the dimensions. */
  public long[] dims() {
    return dims.clone();
  }

  /** True when no dimension is variable. */
  public boolean isFullyDefined() {
    for (long d : dims) {
      if (d < 0) {
        return false;
      }
    }
    return true;
  }

  /** Number of elements; 1 for a scalar. Throws if a dimension is variable. */
  public long numElements() {
    long n = 1;
    for (long d : dims) {
      if (d < 0) {
        throw new IllegalStateException("shape " + this + " has a variable dimension");
      }
      n = Math.multiplyExact(n, d);
    }
    return n;
  }

  /** This shape with {@code dim} in front ({@code [B] + shape}). */
  public Shape prepend(long dim) {
    if (dim < -1) {
      throw new IllegalArgumentException("dimension 0 must be >= 0 (or -1 for variable) but it was " + dim);
    }
    long[] d = new long[dims.length + 1];
    d[0] = dim;
    System.arraycopy(dims, 0, d, 1, dims.length);
    return new Shape(d); // the other dimensions were checked when this shape was made
  }

  /** This shape without its first dimension. */
  public Shape dropFirst() {
    if (dims.length == 0) {
      throw new IllegalStateException("a scalar shape has no first dimension");
    }
    return Shape.of(Arrays.copyOfRange(dims, 1, dims.length));
  }

  /** True if a concrete shape {@code other} fits this (possibly variable) shape. */
  public boolean isCompatibleWith(Shape other) {
    if (other.dims.length != dims.length) {
      return false;
    }
    for (int i = 0; i < dims.length; i++) {
      if (dims[i] >= 0 && other.dims[i] >= 0 && dims[i] != other.dims[i]) {
        return false;
      }
    }
    return true;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Shape s && Arrays.equals(dims, s.dims);
  }

  @Override
  public int hashCode() {
    return Arrays.hashCode(dims);
  }

  @Override
  public String toString() {
    return Arrays.toString(dims);
  }
}
