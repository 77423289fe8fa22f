package dev.sluice.core;

/**
 * One column of a {@link Batch}: the values of one field for every row, contiguous.
 *
 * <ul>
 *   <li>Fixed-length field of row shape {@code S}: {@link #values()} has shape {@code [B] + S}.
 *   <li>Variable-length field (a {@code -1} first dimension, or string/bytes): Arrow's layout,
 *       {@link #values()} holds every row's values back to back and {@link #offsets()} holds
 *       {@code B + 1} int64 offsets (in items of the first dimension for lists, in bytes for
 *       string/bytes); row {@code i} spans {@code [offsets[i], offsets[i+1])}.
 *   <li>Nullable field with nulls: a validity vector, one bool per row ({@link #isValid(int)});
 *       a null row's values are zeros (or empty).
 * </ul>
 *
 * <p>Tensors of a column view the batch's memory: valid until the batch is closed.
 */
public final class Column {
  private final TensorSpec spec;
  private final int size;
  private final Tensor values;
  private final Tensor offsets;
  private final Tensor validity;
  private final Tensor lengths;

  /**
   * @param spec the per-row spec of the field
   * @param size rows
   * @param values see the class description
   * @param offsets int64 [size + 1] for variable-length fields, else null
   * @param validity bool [size] when the column has nulls, else null
   */
  public Column(TensorSpec spec, int size, Tensor values, Tensor offsets, Tensor validity) {
    this(spec, size, values, offsets, validity, null);
  }

  /**
   * A column whose rows were padded to the spec's shape ({@code paddedBatch}): {@code lengths} keeps
   * each row's true shape, as the validity vector keeps nulls, inside the column.
   *
   * @param lengths int64 [size, rank of the row shape]: row {@code i}'s true dimensions, or null
   */
  public Column(TensorSpec spec, int size, Tensor values, Tensor offsets, Tensor validity, Tensor lengths) {
    this.spec = spec;
    this.size = size;
    this.values = values;
    this.offsets = offsets;
    this.validity = validity;
    this.lengths = lengths;
    if (lengths != null && (lengths.dtype() != DType.INT64
        || !lengths.shape().equals(Shape.of(size, spec.shape().rank())))) {
      throw new IllegalArgumentException("column '" + spec.name() + "': lengths must be int64 [" + size + ", "
          + spec.shape().rank() + "] but they are " + lengths.dtype() + lengths.shape());
    }
    boolean variable = !spec.isFixedLength();
    if (variable != (offsets != null)) {
      throw new IllegalArgumentException("column '" + spec.name() + "' " + spec
          + (variable ? " is variable-length and needs offsets" : " is fixed-length and takes no offsets"));
    }
    if (offsets != null && offsets.numElements() != size + 1L) {
      throw new IllegalArgumentException("column '" + spec.name() + "': " + size + " rows need "
          + (size + 1) + " offsets but there are " + offsets.numElements());
    }
    if (validity != null && validity.numElements() != size) {
      throw new IllegalArgumentException("column '" + spec.name() + "': " + size + " rows need "
          + size + " validity flags but there are " + validity.numElements());
    }
  }

  public TensorSpec spec() {
    return spec;
  }

  public String name() {
    return spec.name();
  }

  public int size() {
    return size;
  }

  public boolean isVariableLength() {
    return offsets != null;
  }

  /** The values of every row (see the class description). */
  public Tensor values() {
    return values;
  }

  /** The {@code size + 1} int64 offsets of a variable-length column. */
  public Tensor offsets() {
    if (offsets == null) {
      throw new IllegalStateException("column '" + spec.name() + "' is fixed-length and has no offsets");
    }
    return offsets;
  }

  /** True when the column carries a validity vector (it has at least one null). */
  public boolean hasValidity() {
    return validity != null;
  }

  /** The validity vector, bool [size]. */
  public Tensor validity() {
    if (validity == null) {
      throw new IllegalStateException("column '" + spec.name() + "' has no nulls and no validity vector");
    }
    return validity;
  }

  /** True when the rows were padded and the column keeps their true shapes ({@code paddedBatch}). */
  public boolean hasLengths() {
    return lengths != null;
  }

  /** The true shapes of padded rows: int64 [size, rank], row {@code i}'s dimensions in row {@code i}. */
  public Tensor lengths() {
    if (lengths == null) {
      throw new IllegalStateException("column '" + spec.name() + "' was not padded and keeps no lengths");
    }
    return lengths;
  }

  /** The true shape of row {@code row}: its shape before padding, else the spec's shape. */
  public Shape trueShape(int row) {
    checkRow(row);
    if (lengths == null) {
      return spec.shape();
    }
    int rank = spec.shape().rank();
    long[] dims = new long[rank];
    for (int d = 0; d < rank; d++) {
      dims[d] = lengths.getLong((long) row * rank + d);
    }
    return Shape.of(dims);
  }

  public boolean isValid(int row) {
    checkRow(row);
    return validity == null || validity.getBoolean(row);
  }

  /**
   * Number of items (first-dimension entries, or bytes for string/bytes) in row {@code row}; for a
   * padded column, the true (unpadded) first dimension.
   */
  public long length(int row) {
    checkRow(row);
    if (offsets == null) {
      if (spec.shape().rank() == 0) {
        return 1;
      }
      return lengths != null ? lengths.getLong((long) row * spec.shape().rank()) : spec.shape().dim(0);
    }
    return offsets.getLong(row + 1L) - offsets.getLong(row);
  }

  /** The value of row {@code row} as a view (valid until the batch closes). */
  public Tensor row(int row) {
    checkRow(row);
    if (offsets == null) {
      return values.slice(row);
    }
    if (spec.dtype().isVariableLength()) {
      return values.slice(row);
    }
    long from = offsets.getLong(row);
    return values.slice(from, offsets.getLong(row + 1L) - from);
  }

  private void checkRow(int row) {
    if (row < 0 || row >= size) {
      throw new IndexOutOfBoundsException("row " + row + " out of bounds for column '" + spec.name() + "' of " + size + " rows");
    }
  }

  @Override
  public String toString() {
    return "Column(" + spec + ", rows=" + size + (validity != null ? ", with nulls" : "")
        + (lengths != null ? ", padded" : "") + ")";
  }
}
