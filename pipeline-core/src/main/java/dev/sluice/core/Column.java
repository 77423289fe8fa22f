package dev.sluice.core;

import java.util.Arrays;
import java.util.List;

/**
 * One column of a {@link Batch}: the values of one field for every row, contiguous.
 *
 * <ul>
 *   <li>Fixed-length field of row shape {@code S}: {@link #values()} has shape {@code [B] + S}.
 *   <li>Variable-length field (a {@code -1} first dimension, or string/bytes): Arrow's layout,
 *       {@link #values()} holds every row's values back to back and {@link #offsets()} holds
 *       {@code B + 1} int64 offsets (in items of the first dimension for lists, in bytes for
 *       string/bytes); row {@code i} spans {@code [offsets[i], offsets[i+1])}.
 *   <li>Nested field (a list of lists, a list of strings; {@link TensorSpec#raggedRank()} levels):
 *       the same layout applied per level, as Arrow's {@code LargeList} of a child column. Items at
 *       <em>depth</em> 0 are the rows; {@link #offsets(int) offsets(j)} maps the
 *       {@link #count(int) count(j)} items at depth {@code j} to the items at depth {@code j + 1}
 *       (the elements of their lists), down to the innermost values in {@link #values()}; a
 *       string/bytes field has one more level, the byte offsets of its strings.
 *   <li>Nulls: {@link #validity(int) validity(j)}, one bool per item at depth {@code j}, present
 *       when some item there is null ({@link #validity()} for the rows). A null item's value is
 *       empty (a list or string) or zeros (a fixed-width value), so a null list, an empty list and a
 *       list holding a null element are three different things.
 * </ul>
 *
 * <p>Tensors of a column view the batch's memory: valid until the batch is closed. A column taken
 * from a batch checks the batch's lifetime: once its memory went back to the pool, every method that
 * reads it ({@link #values}, {@link #offsets}, {@link #validity}, {@link #lengths}, {@link #row},
 * {@link #tensor}, {@link #isValid}, {@link #length}, {@link #count}, {@link #trueShape}) throws
 * {@link IllegalStateException} naming the batch, and so do its tensors. {@link #spec},
 * {@link #name} and {@link #size} keep working.
 */
public final class Column {
  private static final Tensor[] NONE = new Tensor[0];

  private final TensorSpec spec;
  private final int size;
  private final Tensor values;
  private final Tensor[] offsets; // per level
  private final Tensor[] validity; // per depth 0 .. raggedRank; null entries: every item valid
  private final Tensor lengths;
  private final BatchMemory memory; // the batch's lifetime, or null for a column not (yet) in a batch
  private Tensor whole; // the column as one (ragged) tensor, made on first use

  /**
   * A column of a fixed-length field, a single-level variable-length field (a list of fixed-width
   * items, or a string/bytes value per row) or a fixed-length field padded by {@code paddedBatch}.
   *
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
    this(spec, size, values, offsets == null ? NONE : new Tensor[] {offsets}, oneDepth(spec, validity), lengths);
    if (spec.raggedRank() + (spec.dtype().isVariableLength() ? 1 : 0) > 1 || spec.nullableElements() != 0) {
      throw new IllegalArgumentException("column '" + spec.name() + "' " + spec
          + " is nested or has nullable elements: make it with Column.of");
    }
  }

  private static Tensor[] oneDepth(TensorSpec spec, Tensor validity) {
    Tensor[] v = new Tensor[spec.raggedRank() + 1];
    v[0] = validity;
    return v;
  }

  private Column(TensorSpec spec, int size, Tensor values, Tensor[] offsets, Tensor[] validity, Tensor lengths) {
    this.spec = spec;
    this.size = size;
    this.values = values;
    this.offsets = offsets;
    this.validity = validity;
    this.lengths = lengths;
    this.memory = null;
    if (lengths != null && (lengths.dtype() != DType.INT64
        || !lengths.shape().equals(Shape.of(size, spec.shape().rank())))) {
      throw new IllegalArgumentException("column '" + spec.name() + "': lengths must be int64 [" + size + ", "
          + spec.shape().rank() + "] but they are " + lengths.dtype() + lengths.shape());
    }
    int levels = spec.isFixedLength() ? 0 : spec.raggedRank() + (spec.dtype().isVariableLength() ? 1 : 0);
    if (offsets.length != levels) {
      throw new IllegalArgumentException("column '" + spec.name() + "' " + spec
          + (levels == 0 ? " is fixed-length and takes no offsets"
              : levels == 1 && offsets.length == 0 ? " is variable-length and needs offsets"
              : " needs " + levels + " offsets tensors but has " + offsets.length));
    }
    long count = size;
    for (int j = 0; j <= spec.raggedRank(); j++) {
      Tensor v = validity[j];
      if (v != null && v.numElements() != count) {
        throw new IllegalArgumentException("column '" + spec.name() + "': " + count
            + (j == 0 ? " rows need " : " items at depth " + j + " need ") + count
            + " validity flags but there are " + v.numElements());
      }
      if (j < levels) {
        Tensor o = offsets[j];
        if (o.dtype() != DType.INT64 || o.numElements() != count + 1) {
          throw new IllegalArgumentException("column '" + spec.name() + "': " + count
              + (j == 0 ? " rows need " : " items at depth " + j + " need ") + (count + 1)
              + " int64 offsets but there are " + o.dtype() + o.shape());
        }
        count = o.getLong(count);
      }
    }
    if (values.dtype() != spec.dtype()) {
      throw new IllegalArgumentException("column '" + spec.name() + "' is " + spec.dtype() + " but its values are "
          + values.dtype());
    }
    if (levels == 0) {
      if (lengths == null && !values.shape().equals(spec.shape().prepend(size))) {
        throw new IllegalArgumentException("column '" + spec.name() + "': " + size + " rows of " + spec.shape()
            + " need values of shape " + spec.shape().prepend(size) + " but they are " + values.shape());
      }
    } else if (spec.dtype().isVariableLength()) {
      long strings = countAt(spec.raggedRank());
      if (values.shape().rank() != 1 || values.numElements() != strings || values.byteSize() < count) {
        throw new IllegalArgumentException("column '" + spec.name() + "': the offsets hold " + strings
            + " values of " + count + " bytes but the values tensor is " + values.dtype() + values.shape()
            + " of " + values.byteSize() + " bytes");
      }
    } else if (!values.shape().equals(spec.itemShape().prepend(count))) {
      throw new IllegalArgumentException("column '" + spec.name() + "': the offsets hold " + count
          + " items of shape " + spec.itemShape() + " but the values have shape " + values.shape());
    }
  }

  /**
   * A column of any field, nested or not.
   *
   * @param spec the per-row spec of the field
   * @param size rows
   * @param values the innermost values: {@code [n] + itemShape} for fixed-width values, or a
   *     rank-1 string/bytes tensor of the {@code n} strings
   * @param offsets one int64 tensor per level, outermost first (see the class description); empty
   *     for a fixed-length field
   * @param validity empty, or one entry per depth {@code 0 .. raggedRank}: a bool tensor with one
   *     flag per item at that depth, or null when every item there is valid
   * @throws IllegalArgumentException if a tensor does not fit the spec and the others
   */
  public static Column of(TensorSpec spec, int size, Tensor values, List<Tensor> offsets, List<Tensor> validity) {
    int depths = spec.raggedRank() + 1;
    if (!validity.isEmpty() && validity.size() != depths) {
      throw new IllegalArgumentException("column '" + spec.name() + "' " + spec + " has " + depths
          + " depth(s) but " + validity.size() + " validity entries were given");
    }
    Tensor[] v = validity.isEmpty() ? new Tensor[depths] : validity.toArray(new Tensor[0]);
    return new Column(spec, size, values, offsets.toArray(NONE), v, null);
  }

  /** A column over the same (already validated) tensors, bound to {@code batch}'s lifetime. */
  private Column(Column c, BatchMemory batch) {
    this.spec = c.spec;
    this.size = c.size;
    this.values = bind(c.values, batch);
    this.offsets = bind(c.offsets, batch);
    this.validity = bind(c.validity, batch);
    this.lengths = bind(c.lengths, batch);
    this.memory = batch;
  }

  /** This column as a column of the batch whose lifetime is {@code batch}. */
  Column bind(BatchMemory batch) {
    return new Column(this, batch);
  }

  private static Tensor bind(Tensor t, BatchMemory batch) {
    return t == null ? null : t.bind(batch);
  }

  private static Tensor[] bind(Tensor[] ts, BatchMemory batch) {
    if (ts.length == 0) {
      return ts;
    }
    Tensor[] out = new Tensor[ts.length];
    for (int i = 0; i < ts.length; i++) {
      out[i] = bind(ts[i], batch);
    }
    return out;
  }

  private void checkLive() {
    BatchMemory m = memory;
    if (m != null && m.isReleased()) {
      throw m.closed();
    }
  }

  private long countAt(int depth) {
    long c = size;
    for (int j = 0; j < depth && j < offsets.length; j++) {
      c = offsets[j].getLong(c);
    }
    return c;
  }

  /** The field this column holds: name, dtype, per-row shape and nullability. */
  public TensorSpec spec() {
    return spec;
  }

  /** The field name. */
  public String name() {
    return spec.name();
  }

  /** Number of rows. */
  public int size() {
    return size;
  }

  /**
   * True when rows differ in length (strings, bytes, a {@code -1} dimension): the values then come
   * with {@code int64} offsets.
   */
  public boolean isVariableLength() {
    return offsets.length > 0;
  }

  /** The values of every row (see the class description): for a nested field, the innermost ones. */
  public Tensor values() {
    checkLive();
    return values;
  }

  /** The {@code size + 1} int64 offsets of a variable-length column (its first level). */
  public Tensor offsets() {
    checkLive();
    if (offsets.length == 0) {
      throw new IllegalStateException("column '" + spec.name() + "' is fixed-length and has no offsets");
    }
    return offsets[0];
  }

  /** Number of offsets levels: the ragged levels, plus one for the bytes of string/bytes values. */
  public int offsetLevels() {
    return offsets.length;
  }

  /**
   * The offsets of the items at depth {@code depth} into those at {@code depth + 1} (or into the
   * bytes of the strings, for the last level of a string/bytes field): {@code count(depth) + 1}
   * int64 values.
   */
  public Tensor offsets(int depth) {
    checkLive();
    if (depth < 0 || depth >= offsets.length) {
      throw new IndexOutOfBoundsException("offsets level " + depth + " out of bounds for column '" + spec.name()
          + "' " + spec + " with " + offsets.length);
    }
    return offsets[depth];
  }

  /** Items at {@code depth}: the rows for 0, the elements of their lists for 1, ... */
  public long count(int depth) {
    checkLive();
    if (depth < 0 || depth > spec.raggedRank()) {
      throw new IndexOutOfBoundsException("depth " + depth + " out of bounds for column '" + spec.name() + "' "
          + spec + " of depths [0, " + spec.raggedRank() + "]");
    }
    return countAt(depth);
  }

  /** True when the column carries a validity vector for its rows (it has at least one null row). */
  public boolean hasValidity() {
    return validity[0] != null;
  }

  /** The validity vector of the rows, bool [size]. */
  public Tensor validity() {
    checkLive();
    if (validity[0] == null) {
      throw new IllegalStateException("column '" + spec.name() + "' has no nulls and no validity vector");
    }
    return validity[0];
  }

  /** True when some item at {@code depth} is null (0: a row, j: an element of a depth-(j - 1) list). */
  public boolean hasValidity(int depth) {
    if (depth < 0 || depth >= validity.length) {
      throw new IndexOutOfBoundsException("depth " + depth + " out of bounds for column '" + spec.name() + "' "
          + spec + " of depths [0, " + spec.raggedRank() + "]");
    }
    return validity[depth] != null;
  }

  /** The validity of the items at {@code depth}: bool [count(depth)], 1 valid, 0 null. */
  public Tensor validity(int depth) {
    checkLive();
    if (!hasValidity(depth)) {
      throw new IllegalStateException("column '" + spec.name() + "' has no null items at depth " + depth);
    }
    return validity[depth];
  }

  /** True when the rows were padded and the column keeps their true shapes ({@code paddedBatch}). */
  public boolean hasLengths() {
    return lengths != null;
  }

  /** The true shapes of padded rows: int64 [size, rank], row {@code i}'s dimensions in row {@code i}. */
  public Tensor lengths() {
    checkLive();
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

  /** False when row {@code row} is null; true for every row of a column without a validity vector. */
  public boolean isValid(int row) {
    checkRow(row);
    return validity[0] == null || validity[0].getBoolean(row);
  }

  /**
   * Number of items (first-dimension entries, or bytes for string/bytes) in row {@code row}; for a
   * padded column, the true (unpadded) first dimension.
   */
  public long length(int row) {
    checkRow(row);
    if (offsets.length == 0) {
      if (spec.shape().rank() == 0) {
        return 1;
      }
      return lengths != null ? lengths.getLong((long) row * spec.shape().rank()) : spec.shape().dim(0);
    }
    return offsets[0].getLong(row + 1L) - offsets[0].getLong(row);
  }

  /**
   * The value of row {@code row} as a tensor (valid until the batch closes): a view of the values,
   * with its own null items ({@link Tensor#isNull(long)}); a nested row is a ragged tensor.
   */
  public Tensor row(int row) {
    checkRow(row);
    if (offsets.length == 0 || offsets.length == 1 && spec.dtype().isVariableLength()) {
      return values.slice(row);
    }
    if (offsets.length == 1 && validity.length == 2 && validity[1] == null) {
      long from = offsets[0].getLong(row);
      return values.slice(from, offsets[0].getLong(row + 1L) - from);
    }
    return tensor().slice(row);
  }

  /**
   * The whole column as one tensor of shape {@code [size] + spec shape} (its {@code -1} dimensions
   * ragged), whose first-dimension nulls are the null rows: a view, valid until the batch closes.
   */
  public Tensor tensor() {
    checkLive();
    Tensor t = whole;
    if (t == null) {
      java.nio.ByteBuffer[] off = new java.nio.ByteBuffer[offsets.length];
      for (int j = 0; j < off.length; j++) {
        off[j] = offsets[j].rawData();
      }
      java.nio.ByteBuffer[] valid = new java.nio.ByteBuffer[validity.length];
      for (int j = 0; j < valid.length; j++) {
        valid[j] = validity[j] == null ? null : validity[j].rawData();
      }
      t = Tensor.ofLayout(spec.dtype(), spec.shape().prepend(size), values.rawData(), off, valid);
      if (memory != null) {
        t = t.bind(memory);
      }
      whole = t;
    }
    return t;
  }

  /** Bytes of values, offsets, validity and lengths. */
  public long byteSize() {
    long n = values.byteSize();
    for (Tensor o : offsets) {
      n += o.byteSize();
    }
    for (Tensor v : validity) {
      if (v != null) {
        n += v.byteSize();
      }
    }
    if (lengths != null) {
      n += lengths.byteSize();
    }
    return n;
  }

  private void checkRow(int row) {
    checkLive();
    if (row < 0 || row >= size) {
      throw new IndexOutOfBoundsException("row " + row + " out of bounds for column '" + spec.name() + "' of " + size + " rows");
    }
  }

  @Override
  public String toString() {
    boolean nullItems = Arrays.stream(validity).skip(1).anyMatch(v -> v != null);
    return "Column(" + spec + ", rows=" + size + (validity[0] != null ? ", with nulls" : "")
        + (nullItems ? ", with null elements" : "") + (lengths != null ? ", padded" : "") + ")";
  }
}
