package dev.sluice.core;

import java.util.Objects;

/**
 * Name, dtype and per-element shape of one field, and where it may hold nulls.
 *
 * <p><b>Shape.</b> A {@code -1} dimension is variable: a list of any length. Variable dimensions
 * come first and are the field's <em>ragged levels</em> ({@link #raggedRank()}), outermost first;
 * the fixed dimensions after them are the shape of each innermost item. So {@code float32[-1]} is a
 * list of floats per row, {@code float32[-1, 3]} a list of 3-vectors, {@code float32[-1, -1]} a list
 * of lists, and {@code float32[2, 3]} a fixed-shape tensor (one contiguous block per row, no
 * offsets). {@link DType#STRING} and {@link DType#BYTES} values are themselves variable-length: a
 * {@code string[]} field holds one string per row, {@code string[-1]} a list of strings; they take
 * no fixed dimensions.
 *
 * <p><b>Nulls.</b> {@code nullable} says a row may be null. Bit {@code j} of
 * {@code nullableElements} says the elements of the lists at ragged level {@code j} may be null
 * ({@link #elementsNullable(int)}): a null list, an empty list and a list holding a null element
 * are then three different values, as in Arrow and Parquet.
 *
 * @param name the field name, not empty
 * @param dtype the type of the innermost values
 * @param shape the per-row shape; variable ({@code -1}) dimensions first
 * @param nullable whether a row may be null
 * @param nullableElements bit {@code j} set: elements of the level-{@code j} lists may be null; only
 *     bits below {@link #raggedRank()}
 */
public record TensorSpec(String name, DType dtype, Shape shape, boolean nullable, int nullableElements) {
  /**
   * A field spec; throws {@link IllegalArgumentException} for an empty name, a variable dimension
   * after a fixed one, fixed dimensions on a string or bytes field, or a {@code nullableElements}
   * bit at or beyond the ragged levels.
   */
  public TensorSpec {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(dtype, "dtype");
    Objects.requireNonNull(shape, "shape");
    if (name.isEmpty()) {
      throw new IllegalArgumentException("a field name must not be empty");
    }
    int ragged = leadingVariable(shape);
    for (int i = ragged; i < shape.rank(); i++) {
      if (shape.dim(i) < 0) {
        throw new IllegalArgumentException("field '" + name + "': shape " + shape
            + " has a variable (-1) dimension after a fixed one; variable dimensions must come first");
      }
    }
    if (dtype.isVariableLength() && ragged != shape.rank()) {
      throw new IllegalArgumentException("field '" + name + "': a " + dtype + " field takes only variable (-1) "
          + "dimensions (each value is already variable-length) but its shape is " + shape);
    }
    if (nullableElements != 0 && (nullableElements < 0 || 32 - Integer.numberOfLeadingZeros(nullableElements) > ragged)) {
      throw new IllegalArgumentException("field '" + name + "': nullableElements " + Integer.toBinaryString(nullableElements)
          + " names a level at or beyond the " + ragged + " ragged level(s) of shape " + shape);
    }
  }

  /** A field whose list elements are never null. */
  public TensorSpec(String name, DType dtype, Shape shape, boolean nullable) {
    this(name, dtype, shape, nullable, 0);
  }

  /** A non-nullable field. */
  public TensorSpec(String name, DType dtype, Shape shape) {
    this(name, dtype, shape, false, 0);
  }

  /**
   * The spec of a field whose rows look like {@code value}: its shape when it is a dense tensor,
   * else {@code -1} for every dimension down to the last one that is ragged, holds strings or
   * holds nulls (those levels' elements nullable), then the fixed dimensions after it.
   *
   * @param nullable whether rows of the field may be null
   */
  public static TensorSpec of(String name, Tensor value, boolean nullable) {
    Shape s = value.shape();
    int rank = s.rank();
    int lastVariable = -1; // the last dimension that must be variable
    for (int d = 0; d < rank; d++) {
      if (s.dim(d) < 0 || value.dtype().isVariableLength()) {
        lastVariable = d;
      }
    }
    int mask = 0;
    for (int d = 0; d < rank; d++) {
      if (nullsAt(value, d)) {
        mask |= 1 << d;
        lastVariable = Math.max(lastVariable, d);
      }
    }
    long[] dims = s.dims();
    for (int d = 0; d <= lastVariable; d++) {
      dims[d] = -1;
    }
    return new TensorSpec(name, value.dtype(), Shape.of(dims), nullable, mask);
  }

  private static boolean nullsAt(Tensor t, int dim) {
    java.nio.ByteBuffer[] v = t.rawValidity();
    return v != null && dim < v.length && v[dim] != null;
  }

  private static int leadingVariable(Shape shape) {
    int k = 0;
    while (k < shape.rank() && shape.dim(k) < 0) {
      k++;
    }
    return k;
  }

  /** True when every row has the same byte size: fixed dtype and fully defined shape. */
  public boolean isFixedLength() {
    return !dtype.isVariableLength() && shape.isFullyDefined();
  }

  /**
   * The number of variable ({@code -1}) dimensions: the list levels of a row. 0 for scalars,
   * strings and fixed-shape tensors; 1 for a list of numbers or strings; 2 for a list of lists.
   */
  public int raggedRank() {
    return leadingVariable(shape);
  }

  /** True when the field has a list inside a list (two or more ragged levels). */
  public boolean isNested() {
    return raggedRank() > 1;
  }

  /** The fixed shape of one innermost item: the dimensions after the ragged levels. */
  public Shape itemShape() {
    int k = raggedRank();
    long[] dims = shape.dims();
    return Shape.of(java.util.Arrays.copyOfRange(dims, k, dims.length));
  }

  /**
   * Whether the elements of the lists at ragged level {@code level} may be null.
   *
   * @param level 0 for the elements of a row's list, 1 for the elements of those elements, ...
   */
  public boolean elementsNullable(int level) {
    if (level < 0 || level >= raggedRank()) {
      throw new IndexOutOfBoundsException("level " + level + " out of bounds for the " + raggedRank()
          + " ragged level(s) of field '" + name + "' " + shape);
    }
    return (nullableElements & (1 << level)) != 0;
  }

  /**
   * Whether an item at {@code depth} may be null: depth 0 is the row ({@link #nullable()}), depth
   * {@code j > 0} an element of a level-{@code j - 1} list.
   */
  public boolean nullableAt(int depth) {
    return depth == 0 ? nullable : elementsNullable(depth - 1);
  }

  /** Bytes per row for a fixed-length field. */
  public long rowBytes() {
    if (!isFixedLength()) {
      throw new IllegalStateException("field '" + name + "' " + this + " is variable-length");
    }
    return Math.multiplyExact(shape.numElements(), (long) dtype.byteSize());
  }

  /** This spec with nullability {@code nullable}. */
  public TensorSpec withNullable(boolean nullable) {
    return new TensorSpec(name, dtype, shape, nullable, nullableElements);
  }

  /** This spec with the elements of the level-{@code level} lists nullable (or not). */
  public TensorSpec withElementsNullable(int level, boolean value) {
    if (level < 0 || level >= raggedRank()) {
      throw new IndexOutOfBoundsException("level " + level + " out of bounds for the " + raggedRank()
          + " ragged level(s) of field '" + name + "' " + shape);
    }
    int mask = value ? nullableElements | (1 << level) : nullableElements & ~(1 << level);
    return new TensorSpec(name, dtype, shape, nullable, mask);
  }

  /** This spec under another name. */
  public TensorSpec withName(String newName) {
    return new TensorSpec(newName, dtype, shape, nullable, nullableElements);
  }

  /**
   * {@code name: dtype[dims]}, a {@code ?} after a {@code -1} when that level's elements may be
   * null and after the brackets when the row may be null: {@code tags: string[-1?]?}.
   */
  @Override
  public String toString() {
    StringBuilder sb = new StringBuilder(name).append(": ").append(dtype).append('[');
    for (int i = 0; i < shape.rank(); i++) {
      if (i > 0) {
        sb.append(", ");
      }
      sb.append(shape.dim(i));
      if (shape.dim(i) < 0 && (nullableElements & (1 << i)) != 0) {
        sb.append('?');
      }
    }
    return sb.append(']').append(nullable ? "?" : "").toString();
  }
}
