package dev.sluice.core.spi;

import dev.sluice.core.Column;
import dev.sluice.core.DType;
import dev.sluice.core.Shape;
import dev.sluice.core.Tensor;
import dev.sluice.core.TensorSpec;
import dev.sluice.core.spi.ColumnMemory.Buf;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * Fills one column of a batch being built ({@link BatchBuilder#column(int)}): where sources (npy
 * gathers, Parquet decoders, the element path) write column memory row by row and item by item. A
 * source that writes a column's buffers whole and wraps them itself uses {@link ColumnBuffers}.
 *
 * <p><b>Fixed-length fields</b> have a preallocated buffer of {@code capacity × rowBytes} bytes
 * ({@link #fixedBuffer()}): a source writes row {@code r} at byte {@code r × rowBytes} and marks
 * nulls with {@link #setNull(int)}; the rows count when the batch builder commits them.
 *
 * <p><b>Variable-length and nested fields</b> are appended in order, item by item, at a
 * <em>depth</em>: depth 0 is a row, depth {@code j > 0} an element of a list at depth
 * {@code j - 1}, down to depth {@link TensorSpec#raggedRank()} whose items are the innermost values
 * (a block of the spec's {@link TensorSpec#itemShape() item shape}, or one string or blob).
 * {@link #startList(int)} starts a list (its elements are the items added one depth below until
 * the next list at its depth or above starts), {@link #reserveValues(int)} adds fixed-width
 * innermost values in bulk, {@link #addBytes} adds a string or blob, {@link #addNull(int)} adds a
 * null item, and {@link #appendRow(Tensor)} appends a whole row value. Every buffer grows as needed;
 * the layout is Arrow's {@code LargeList} applied per level (see {@link Column}).
 *
 * <p><b>Padded fields</b> ({@code paddedBatch}) are fixed-length fields whose rows may be
 * shorter than the spec's shape: after {@link #pad(Number)} every row holds the pad value, and
 * {@link #setPadded(int, Tensor)} writes a value into the leading corner of its row and records its
 * true dimensions, which the built column keeps ({@link Column#lengths()}).
 *
 * <p>Memory comes from the batch builder's pool and goes to the batch it builds, or back to the
 * pool when the builder is closed unbuilt. Not thread-safe.
 */
public final class ColumnBuilder {
  // package-private fields: ColumnCopies and ColumnValues write the column through them
  private final TensorSpec spec;
  private final int capacity;
  private final BufferPool pool; // null: heap memory (values built inside core)
  private final long[] held; // bytes of pooled buffers the batch being built holds (shared by its columns)
  final int ragged; // k: the ragged levels of the spec
  final boolean varLeaf;
  final int levels; // offsets buffers: k + (varLeaf ? 1 : 0)
  final int rowBytes; // fixed-length fields, else -1
  final int itemBytes; // bytes of one innermost item (1 for string/bytes)
  Buf fixed;
  Buf values;
  long valueBytes;
  final Buf[] offsets;
  final ColumnValidity nulls; // the null flags per depth 0..k
  final long[] counts; // items per depth 0..k (variable-length fields)
  private Buf lengths; // padded fields: int64 [capacity, rank], each row's true dimensions
  private boolean padded;

  ColumnBuilder(TensorSpec spec, int capacity, BufferPool pool) {
    this(spec, capacity, pool, new long[1]);
  }

  /**
   * A column builder whose pooled buffers count in {@code held}, the bytes (size classes) the
   * batch being built holds, shared by its columns: an allocation that has to wait for memory
   * fails at once when nothing but such in-progress batches holds any ({@link BufferPool}).
   */
  ColumnBuilder(TensorSpec spec, int capacity, BufferPool pool, long[] held) {
    this.held = held;
    this.spec = spec;
    this.capacity = capacity;
    this.pool = pool;
    this.ragged = spec.raggedRank();
    this.varLeaf = spec.dtype().isVariableLength();
    this.levels = ragged + (varLeaf ? 1 : 0);
    this.offsets = new Buf[levels];
    this.nulls = new ColumnValidity(pool, held, spec.name(), capacity, ragged + 1);
    this.counts = new long[ragged + 1];
    try {
      if (spec.isFixedLength()) {
        this.rowBytes = Math.toIntExact(spec.rowBytes());
        this.itemBytes = rowBytes;
        this.fixed = ColumnMemory.allocate(pool, held, (long) rowBytes * capacity);
      } else {
        this.rowBytes = -1;
        this.itemBytes = varLeaf ? 1 : Math.toIntExact(spec.itemShape().numElements() * spec.dtype().byteSize());
        for (int j = 0; j < levels; j++) {
          offsets[j] = ColumnMemory.allocate(pool, held, 8L * (capacity + 1));
          offsets[j].buf.putLong(0, 0L);
        }
        this.values = ColumnMemory.allocate(pool, held, pool == null ? 64 : Math.max(4096, (long) capacity * 16));
      }
    } catch (RuntimeException e) {
      release();
      throw e;
    }
  }

  /** The field this column holds. */
  public TensorSpec spec() {
    return spec;
  }

  /** Rows this column can hold. */
  public int capacity() {
    return capacity;
  }

  /** True for a fixed-length field: rows are written into {@link #fixedBuffer()}. */
  public boolean isFixedLength() {
    return rowBytes >= 0;
  }

  /** Bytes per row of a fixed-length field. */
  public int rowBytes() {
    if (rowBytes < 0) {
      throw new IllegalStateException("field '" + spec.name() + "' " + spec + " is variable-length");
    }
    return rowBytes;
  }

  /** The whole buffer of a fixed-length field ({@code capacity × rowBytes} bytes, little-endian). */
  public ByteBuffer fixedBuffer() {
    if (fixed == null) {
      throw new IllegalStateException("field '" + spec.name() + "' " + spec + " is variable-length");
    }
    return fixed.buf;
  }

  /**
   * Marks row {@code row} of a fixed-length field null and zeroes it. (Variable-length fields add
   * a null row with {@link #addNull(int) addNull(0)}.)
   */
  public void setNull(int row) {
    if (fixed == null) {
      throw new IllegalStateException("field '" + spec.name() + "' " + spec
          + " is variable-length: add a null row with addNull(0)");
    }
    if (row < 0 || row >= capacity) {
      throw new IndexOutOfBoundsException("row " + row + " out of bounds for capacity " + capacity);
    }
    nulls.markRowNull(row);
    RowGathers.fill(fixed.buf, row * rowBytes, (row + 1) * rowBytes, (byte) 0);
  }

  // ------------------------------------------------------------------ padding

  /**
   * Makes this fixed-length column a padded one: every row now holds {@code fill} (null: zeros),
   * rows are written with {@link #setPadded}, and the built column keeps each row's true
   * dimensions ({@link Column#lengths()}; a field of scalars keeps none). Call it before any row is
   * written.
   *
   * @param fill the pad value, converted to the field's dtype; null for zeros
   * @throws IllegalStateException if the field is variable-length or already padded
   * @throws IllegalArgumentException if {@code fill} is not zero and the dtype is not a real number type
   */
  public void pad(Number fill) {
    if (fixed == null) {
      throw new IllegalStateException("field '" + spec.name() + "' " + spec + " is variable-length: only "
          + "fixed-length fields are padded");
    }
    if (padded) {
      throw new IllegalStateException("field '" + spec.name() + "' is already padded");
    }
    lengths = ColumnPadding.pad(fixed.buf, spec, capacity, fill, pool, held);
    padded = true;
  }

  /**
   * Writes {@code value} into row {@code row} of a {@link #pad padded} column: each element at
   * its own position in the spec's shape (a ragged value's items each in their own padded block),
   * the rest of the row keeping the pad value, and records the value's true dimensions (for a
   * ragged dimension, its longest item).
   *
   * @param row in {@code [0, capacity)}
   * @param value not null, of the field's dtype and rank, without null elements, no dimension
   *     longer than the spec's
   * @throws IllegalArgumentException if the value does not fit the row
   */
  public void setPadded(int row, Tensor value) {
    if (!padded) {
      throw new IllegalStateException("field '" + spec.name() + "' is not padded: call pad first");
    }
    Objects.checkIndex(row, capacity);
    ColumnPadding.setPadded(fixed.buf, row * rowBytes, lengths, row, spec, value);
  }

  /**
   * The smallest dense shape that holds {@code value}: its dimensions, where a ragged dimension is
   * the longest of its items (what {@link #setPadded} records as the row's true dimensions).
   */
  public static long[] paddedDims(Tensor value) {
    return ColumnPadding.bound(value);
  }

  /** Rows appended so far (variable-length fields). */
  public int rows() {
    return (int) counts[0];
  }

  /** Items added so far at {@code depth} (variable-length fields). */
  public long count(int depth) {
    return counts[depth];
  }

  // ------------------------------------------------------------------ appending

  /**
   * Starts the next list at {@code depth} (a row when 0) of a variable-length field.
   *
   * @param depth below {@link TensorSpec#raggedRank()}
   */
  public void startList(int depth) {
    if (depth < 0 || depth >= ragged) {
      throw new IllegalArgumentException("field '" + spec.name() + "' " + spec + " has lists at depths [0, "
          + ragged + ") but startList got " + depth);
    }
    begin(depth);
  }

  /**
   * Adds a null item at {@code depth}: a null row (0), or a null element of the current list one
   * depth up. It holds nothing: an empty list or string, or zeros for a fixed-width value.
   *
   * @throws IllegalStateException if the spec does not allow nulls there
   */
  public void addNull(int depth) {
    if (depth < 0 || depth > ragged || fixed != null) {
      throw new IllegalArgumentException("field '" + spec.name() + "' " + spec + " takes addNull at depths [0, "
          + ragged + "] of a variable-length field but got " + depth);
    }
    if (!spec.nullableAt(depth)) {
      throw new IllegalStateException("field '" + spec.name() + "' " + spec + " allows no null "
          + (depth == 0 ? "rows" : "elements at list level " + (depth - 1)));
    }
    if (depth == ragged && !varLeaf) {
      int at = reserveValues(1);
      RowGathers.fill(values.buf, at, at + itemBytes, (byte) 0);
    } else {
      begin(depth);
    }
    markNull(depth, counts[depth] - 1);
  }

  /**
   * Adds {@code n} fixed-width innermost values (elements of the current list at the deepest list
   * level) and returns the byte position in {@link #valueBuffer()} where the caller writes their
   * {@code n × itemBytes} bytes.
   */
  public int reserveValues(int n) {
    if (varLeaf || fixed != null) {
      throw new IllegalStateException("field '" + spec.name() + "' " + spec
          + " has no fixed-width innermost values to reserve");
    }
    long at = valueBytes;
    ensureValues((long) n * itemBytes);
    valueBytes = at + (long) n * itemBytes;
    counts[ragged] += n;
    return (int) at;
  }

  /**
   * Makes room for {@code bytes} more bytes of innermost values at once (nothing is added): a source
   * that knows from an offset index how much it is about to append grows the buffer once instead of
   * doubling it, copying each time, as the appends arrive.
   *
   * @param bytes &gt;= 0
   */
  public void reserveBytes(long bytes) {
    if (fixed != null) {
      throw new IllegalStateException("field '" + spec.name() + "' " + spec + " is fixed-length");
    }
    if (bytes < 0) {
      throw new IllegalArgumentException("bytes >= 0 required but it was " + bytes);
    }
    ensureValues(bytes);
  }

  /** The values buffer as it is now (it moves when it grows): write reserved values here. */
  public ByteBuffer valueBuffer() {
    return values.buf;
  }

  /** Bytes of innermost values so far. */
  public long valueBytes() {
    return valueBytes;
  }

  /** Bytes per innermost item (1 for string/bytes). */
  public int itemBytes() {
    return itemBytes;
  }

  /** Adds a string or blob: bytes {@code [pos, pos + len)} of {@code src}. */
  public void addBytes(ByteBuffer src, int pos, int len) {
    if (!varLeaf) {
      throw new IllegalStateException("field '" + spec.name() + "' " + spec + " holds no strings or bytes");
    }
    begin(ragged);
    ensureValues(len);
    values.buf.put((int) valueBytes, src, pos, len);
    valueBytes += len;
  }

  /** Adds a string or blob: all of {@code src}. */
  public void addBytes(byte[] src) {
    addBytes(ByteBuffer.wrap(src), 0, src.length);
  }

  /**
   * Appends one row of a single-level variable-length field: a string or blob, or a list of
   * fixed-width items given as their bytes (from {@code value}'s position to its limit; the
   * position is not moved).
   */
  public void appendVariable(ByteBuffer value) {
    if (fixed != null) {
      throw new IllegalStateException("field '" + spec.name() + "' is fixed-length");
    }
    int n = value.remaining();
    if (ragged == 0) {
      addBytes(value, value.position(), n);
      return;
    }
    if (ragged != 1 || varLeaf) {
      throw new IllegalStateException("field '" + spec.name() + "' " + spec
          + " is nested: append its rows with appendRow");
    }
    if (n % itemBytes != 0) {
      throw new IllegalArgumentException("field '" + spec.name() + "': a value of " + n
          + " bytes is not a whole number of " + itemBytes + "-byte items");
    }
    begin(0);
    int at = reserveValues(n / itemBytes);
    values.buf.put(at, value, value.position(), n);
  }

  /**
   * Appends one row of a variable-length field: {@code value} (null for a null row), whose shape
   * fits the spec's (a concrete dimension fits a {@code -1}); its null items stay null.
   *
   * @throws IllegalArgumentException if the value's dtype or shape does not fit the field
   */
  public void appendRow(Tensor value) {
    if (fixed != null) {
      throw new IllegalStateException("field '" + spec.name() + "' is fixed-length: write it into fixedBuffer()");
    }
    if (value == null) {
      addNull(0);
      return;
    }
    if (value.dtype() != spec.dtype()) {
      throw new IllegalArgumentException("field '" + spec.name() + "' is " + spec.dtype() + " but the value is "
          + value.dtype());
    }
    if (value.shape().rank() != spec.shape().rank()) {
      throw new IllegalArgumentException("field '" + spec.name() + "' " + spec + " takes values of rank "
          + spec.shape().rank() + " but the value has shape " + value.shape());
    }
    appendItem(0, value);
  }

  /** Appends {@code t} (not null, rank = spec rank - depth) as the next item at {@code depth} ({@link ColumnValues}). */
  void appendItem(int depth, Tensor t) {
    ColumnValues.appendItem(this, depth, t);
  }

  /** Starts item {@code counts[depth]} at {@code depth}: records where its children (or bytes) start. */
  void begin(int depth) {
    long c = counts[depth];
    if (depth < levels) {
      Buf o = offsets[depth];
      growOffsets(o, (c + 2) * 8, c * 8 + 8);
      o.buf.putLong((int) (c * 8), depth < ragged ? counts[depth + 1] : valueBytes);
    }
    counts[depth] = c + 1;
    if (depth == 0) {
      checkRows();
    }
  }

  private void checkRows() {
    if (counts[0] > capacity) {
      counts[0]--;
      throw new IllegalStateException("field '" + spec.name() + "' already has " + capacity + " rows");
    }
  }

  void markNull(int depth, long item) {
    nulls.markNull(depth, item);
  }

  /** Makes room for {@code more} bytes of values after the {@link #valueBytes} there are. */
  void ensureValues(long more) {
    long need = valueBytes + more;
    if (need > values.size) {
      if (need > Integer.MAX_VALUE - 8) {
        throw new IllegalStateException("field '" + spec.name() + "': more than 2 GiB of values in one batch; "
            + "use a smaller batch size");
      }
      ColumnMemory.grow(pool, held, spec.name(), values, Math.min(Integer.MAX_VALUE - 8, Math.max(need, values.size * 2)),
          valueBytes, "values");
    }
  }

  /** Grows offsets buffer {@code o} to at least {@code need} bytes, keeping its first {@code keep}. */
  void growOffsets(Buf o, long need, long keep) {
    if (need > o.size) {
      ColumnMemory.grow(pool, held, spec.name(), o, need, keep, "offsets");
    }
  }

  /**
   * Drops every row from {@code rows} on (variable-length fields), and clears the null flags of
   * fixed-length rows from {@code rows} on: undoes a row whose append failed half way.
   */
  void truncate(int rows) {
    if (fixed != null) {
      nulls.rowsValidFrom(rows);
      return;
    }
    long c = rows;
    for (int j = 0; j <= ragged; j++) {
      if (c >= counts[j]) {
        return; // nothing of the dropped rows at this depth, so none below
      }
      counts[j] = c;
      nulls.truncate(j, c);
      c = j < levels ? offsets[j].buf.getLong((int) (c * 8)) : c * itemBytes;
    }
    valueBytes = c;
  }

  /**
   * Empties the column for reuse (a buffer that one field after another is decoded into): no rows,
   * and no null flags at any depth, so that a field without nulls decoded after one with nulls has
   * none either. The memory is kept, except the flags'.
   */
  void clear() {
    nulls.clear();
    truncate(0);
  }

  // ------------------------------------------------------------------ copying from columns

  /** Copies rows {@code [from, from + count)} of {@code src} to the rows from {@code at} on ({@link ColumnCopies#copyRange}). */
  void copyRange(Column src, int from, int count, int at) {
    ColumnCopies.copyRange(this, src, from, count, at);
  }

  // ------------------------------------------------------------------ building

  /** The column of {@code n} rows; the memory now belongs to the caller (released by {@link #release()}). */
  Column build(int n) {
    Tensor[] valid = new Tensor[ragged + 1];
    if (fixed != null) {
      valid[0] = nulls.build(0, n);
      Tensor v = Tensor.wrap(spec.dtype(), spec.shape().prepend(n), fixed.buf.slice(0, n * rowBytes));
      if (padded) {
        int rank = spec.shape().rank();
        Tensor len = lengths == null ? null : Tensor.wrap(DType.INT64, Shape.of(n, rank),
            lengths.buf.slice(0, 8 * n * rank).order(ByteOrder.LITTLE_ENDIAN));
        return new Column(spec, n, v, null, valid[0], len);
      }
      return Column.of(spec, n, v, List.of(), Arrays.asList(valid));
    }
    if (counts[0] != n) {
      throw new IllegalStateException("field '" + spec.name() + "' has " + counts[0] + " rows but the batch has " + n);
    }
    List<Tensor> off = new ArrayList<>(levels);
    ByteBuffer lastOffsets = null;
    for (int j = 0; j < levels; j++) {
      long c = counts[j];
      offsets[j].buf.putLong((int) (c * 8), j < ragged ? counts[j + 1] : valueBytes);
      ByteBuffer o = offsets[j].buf.slice(0, (int) ((c + 1) * 8)).order(ByteOrder.LITTLE_ENDIAN);
      off.add(Tensor.wrap(DType.INT64, Shape.of(c + 1), o));
      lastOffsets = o;
    }
    for (int j = 0; j <= ragged; j++) {
      valid[j] = nulls.build(j, (int) counts[j]);
    }
    ByteBuffer data = values.buf.slice(0, (int) valueBytes);
    Tensor v = varLeaf ? Tensor.wrapVariable(spec.dtype(), data, lastOffsets)
        : Tensor.wrap(spec.dtype(), spec.itemShape().prepend(counts[ragged]), data);
    return Column.of(spec, n, v, off, Arrays.asList(valid));
  }

  /** Adds this column's pooled buffers to {@code out}: they belong to the batch being built. */
  void addBuffers(List<PooledBuffer> out) {
    ColumnMemory.addPooled(out, fixed);
    ColumnMemory.addPooled(out, values);
    ColumnMemory.addPooled(out, lengths);
    for (Buf b : offsets) {
      ColumnMemory.addPooled(out, b);
    }
    nulls.addBuffers(out);
  }

  /** Returns this column's memory to the pool; each buffer is released at most once. */
  void release() {
    ColumnMemory.release(held, fixed);
    ColumnMemory.release(held, values);
    ColumnMemory.release(held, lengths);
    for (Buf b : offsets) {
      ColumnMemory.release(held, b);
    }
    nulls.release();
  }

  @Override
  public String toString() {
    return "ColumnBuilder(" + spec + ", capacity=" + capacity + ")";
  }
}
