package dev.sluice.core;

import java.util.Objects;

/**
 * Name, dtype and per-element shape of one field. A {@code -1} dimension is variable (a list of any
 * length, stored as values plus offsets). {@code nullable} fields carry a validity flag per row.
 */
public record TensorSpec(String name, DType dtype, Shape shape, boolean nullable) {
  public TensorSpec {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(dtype, "dtype");
    Objects.requireNonNull(shape, "shape");
    if (name.isEmpty()) {
      throw new IllegalArgumentException("a field name must not be empty");
    }
  }

  /** A non-nullable field. */
  public TensorSpec(String name, DType dtype, Shape shape) {
    this(name, dtype, shape, false);
  }

  /** True when every row has the same byte size: fixed dtype and fully defined shape. */
  public boolean isFixedLength() {
    return !dtype.isVariableLength() && shape.isFullyDefined();
  }

  /** Bytes per row for a fixed-length field. */
  public long rowBytes() {
    if (!isFixedLength()) {
      throw new IllegalStateException("field '" + name + "' " + this + " is variable-length");
    }
    return shape.numElements() * dtype.byteSize();
  }

  public TensorSpec withNullable(boolean nullable) {
    return new TensorSpec(name, dtype, shape, nullable);
  }

  @Override
  public String toString() {
    return name + ": " + dtype + shape + (nullable ? "?" : "");
  }
}
