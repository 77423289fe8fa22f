package dev.sluice.core;

import dev.sluice.core.ColumnMemory.Buf;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Fills one column of a batch being built ({@link BatchBuilder#column(int)}): the one place where
 * sources (npy gathers, Parquet decoders, the element path) write column memory.
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
 * <p>Memory comes from the batch builder's pool and goes to the batch it builds, or back to the
 * pool when the builder is closed unbuilt. Not thread-safe.
 */
public final class ColumnBuilder {
  private final TensorSpec spec;
  private final int capacity;
  private final BufferPool pool; // null: heap memory (values built inside core)
  private final long[] held; // bytes of pooled buffers the batch being built holds (shared by its columns)
  private final int ragged; // k: the ragged levels of the spec
  private final boolean varLeaf;
  private final int levels; // offsets buffers: k + (varLeaf ? 1 : 0)
  private final int rowBytes; // fixed-length fields, else -1
  private final int itemBytes; // bytes of one innermost item (1 for string/bytes)
  private Buf fixed;
  private Buf values;
  private long valueBytes;
  private final Buf[] offsets;
  private final Buf[] validity; // per depth 0..k
  private final long[] validUpTo; // per depth: flags written below this item (the rest are valid)
  private final long[] counts; // items per depth 0..k (variable-length fields)

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
    this.validity = new Buf[ragged + 1];
    this.validUpTo = new long[ragged + 1];
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
    if (validity[0] == null) {
      validity[0] = ColumnMemory.allocate(pool, held, capacity);
      fillValid(validity[0].buf, 0, capacity);
      validUpTo[0] = capacity;
    }
    validity[0].buf.put(row, (byte) 0);
    zero(fixed.buf, row * rowBytes, rowBytes);
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
      zero(values.buf, at, itemBytes);
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

  /** Appends {@code t} (not null, rank = spec rank - depth) as the next item at {@code depth}. */
  void appendItem(int depth, Tensor t) {
    if (depth == ragged) {
      if (varLeaf) {
        ByteBuffer d = t.rawData();
        addBytes(d, 0, d.remaining());
        return;
      }
      if (t.isRagged() || !t.shape().equals(spec.itemShape())) {
        throw new IllegalArgumentException("field '" + spec.name() + "' " + spec + ": an item of shape "
            + t.shape() + " does not fit the item shape " + spec.itemShape());
      }
      int at = reserveValues(1);
      values.buf.put(at, t.rawData(), 0, itemBytes);
      return;
    }
    begin(depth);
    long n = t.shape().dim(0);
    int child = depth + 1;
    if (child == ragged && !t.isRagged() && (varLeaf ? t.shape().rank() == 1
        : t.shape().dropFirst().equals(spec.itemShape()))) {
      appendLeaves(t, n);
      return;
    }
    for (long i = 0; i < n; i++) {
      if (t.isNull(i)) {
        addNull(child);
      } else {
        appendItem(child, t.slice(i));
      }
    }
  }

  /** The {@code n} innermost items of dense {@code t} (one list), in bulk where possible. */
  private void appendLeaves(Tensor t, long n) {
    ByteBuffer[] tv = t.rawValidity();
    ByteBuffer nulls = tv == null ? null : tv[0];
    if (nulls != null && !spec.nullableAt(ragged)) {
      throw new IllegalStateException("field '" + spec.name() + "' " + spec + " allows no null elements at list level "
          + (ragged - 1) + " but the value has some");
    }
    if (varLeaf) {
      ByteBuffer o = t.rawOffsets()[0];
      ByteBuffer d = t.rawData();
      for (int i = 0; i < n; i++) {
        long from = o.getLong(i * 8);
        addBytes(d, (int) from, (int) (o.getLong((i + 1) * 8) - from));
        if (nulls != null && nulls.get(i) == 0) {
          markNull(ragged, counts[ragged] - 1);
        }
      }
      return;
    }
    long first = counts[ragged];
    int at = reserveValues(Math.toIntExact(n));
    values.buf.put(at, t.rawData(), 0, Math.toIntExact(n * itemBytes));
    if (nulls != null) {
      for (int i = 0; i < n; i++) {
        if (nulls.get(i) == 0) {
          zero(values.buf, at + i * itemBytes, itemBytes);
          markNull(ragged, first + i);
        }
      }
    }
  }

  /** Starts item {@code counts[depth]} at {@code depth}: records where its children (or bytes) start. */
  private void begin(int depth) {
    long c = counts[depth];
    if (depth < levels) {
      Buf o = offsets[depth];
      long need = (c + 2) * 8;
      if (need > o.size) {
        ColumnMemory.grow(pool, held, spec.name(), o, need, c * 8 + 8, "offsets");
      }
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

  private void markNull(int depth, long item) {
    Buf v = validity[depth];
    if (v == null) {
      v = ColumnMemory.allocate(pool, held, depth == 0 ? capacity : Math.max(64, item + 1));
      validity[depth] = v;
    } else if (item + 1 > v.size) {
      ColumnMemory.grow(pool, held, spec.name(), v, Math.max(item + 1, v.size * 2), validUpTo[depth], "validity");
    }
    fillValid(v.buf, (int) validUpTo[depth], (int) item);
    v.buf.put((int) item, (byte) 0);
    validUpTo[depth] = item + 1;
  }

  private void ensureValues(long more) {
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

  /**
   * Drops every row from {@code rows} on (variable-length fields), and clears the null flags of
   * fixed-length rows from {@code rows} on: undoes a row whose append failed half way.
   */
  void truncate(int rows) {
    if (fixed != null) {
      if (validity[0] != null) {
        fillValid(validity[0].buf, rows, capacity);
      }
      return;
    }
    long c = rows;
    for (int j = 0; j <= ragged; j++) {
      if (c >= counts[j]) {
        return; // nothing of the dropped rows at this depth, so none below
      }
      counts[j] = c;
      validUpTo[j] = Math.min(validUpTo[j], c);
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
    for (int j = 0; j < validity.length; j++) {
      ColumnMemory.release(held, validity[j]);
      validity[j] = null;
      validUpTo[j] = 0;
    }
    truncate(0);
  }

  // ------------------------------------------------------------------ copying from columns

  /**
   * Copies rows {@code [from, from + count)} of {@code src} (a column of the same field) to the rows
   * from {@code at} on: a fixed-length field in one bulk copy; a variable-length or nested field
   * level by level, each level's offsets rebased onto this column's items and its values copied in
   * bulk; the null flags of every depth.
   */
  void copyRange(Column src, int from, int count, int at) {
    if (fixed != null) {
      fixed.buf.put(at * rowBytes, src.values().rawData(), from * rowBytes, count * rowBytes);
      if (src.hasValidity(0)) {
        copyRowFlags(src.validity(0).rawData(), from, count, at);
      }
      return;
    }
    if (counts[0] + count > capacity) {
      throw new IllegalStateException("field '" + spec.name() + "' already has " + counts[0] + " rows of " + capacity);
    }
    long a = from;
    long b = (long) from + count;
    for (int j = 0; j <= ragged; j++) {
      if (src.hasValidity(j)) {
        copyFlags(j, src.validity(j).rawData(), a, b - a);
      }
      long c = counts[j];
      if (j < levels) {
        ByteBuffer so = src.offsets(j).rawData();
        long childA = so.getLong((int) (a * 8));
        long childB = so.getLong((int) (b * 8));
        long base = (j < ragged ? counts[j + 1] : valueBytes) - childA;
        Buf o = offsets[j];
        long need = (c + (b - a) + 1) * 8;
        if (need > o.size) {
          ColumnMemory.grow(pool, held, spec.name(), o, need, c * 8, "offsets");
        }
        for (long i = a; i < b; i++) {
          o.buf.putLong((int) ((c + i - a) * 8), base + so.getLong((int) (i * 8)));
        }
        counts[j] = c + (b - a);
        a = childA;
        b = childB;
      } else {
        counts[j] = c + (b - a); // the innermost fixed-width items
      }
    }
    long bytes = varLeaf ? b - a : (b - a) * itemBytes;
    long start = varLeaf ? a : a * itemBytes;
    ensureValues(bytes);
    values.buf.put((int) valueBytes, src.values().rawData(), (int) start, (int) bytes);
    valueBytes += bytes;
  }

  /**
   * Copies row {@code rows[i]} of {@code src}, {@code i} in {@code [from, from + count)}, to the rows
   * from {@code at} on: fixed-width fields value by value in tight loops per width, a single-level
   * variable-length field row by row, a nested field as one range per row. Each loop is a small
   * method of its own: a window's gather runs each loop thousands of times per call, and small
   * methods are compiled once, early, instead of being compiled again on the stack (OSR) inside a
   * large one. Every row must be below {@code rowsBelow}, the rows of {@code src}: the caller has
   * checked them once for all fields, and the gathers by address ({@link RawGather}) rely on it.
   * {@code raw}, the same rows for gathers by address, is null where they are not used.
   */
  void copyRows(Column src, int rowsBelow, int[] rows, int from, int count, int at, RawGather.Rows raw) {
    if (fixed != null) {
      ByteBuffer data = src.values().rawData();
      ByteBuffer dst = fixed.buf;
      RawGather.Offsets offsets = raw != null && (rowBytes == 4 || rowBytes == 8) && RawGather.serves(data, dst)
          ? raw.offsets(rowBytes == 4 ? 2 : 3)
          : null;
      if (offsets != null) {
        RawGather.gather(data, offsets, from, count, dst, at);
      } else if (rowBytes == 4) {
        RowGathers.gather4(data, rows, from, count, dst, at);
      } else if (rowBytes == 8) {
        RowGathers.gather8(data, rows, from, count, dst, at);
      } else {
        RowGathers.gatherRows(data, rowBytes, rowsBelow, rows, from, count, dst, at);
      }
      copyNullRows(src, rowsBelow, rows, from, count, at);
      return;
    }
    if (levels != 1 || src.hasValidity(ragged) && ragged > 0) {
      for (int i = 0; i < count; i++) {
        copyRange(src, rows[from + i], 1, at + i);
      }
      return;
    }
    // one level: a string/bytes value or a list of fixed-width items per row
    if (counts[0] + count > capacity) {
      throw new IllegalStateException("field '" + spec.name() + "' already has " + counts[0] + " rows of " + capacity);
    }
    ByteBuffer so = src.offsets(0).rawData();
    int unit = varLeaf ? 1 : itemBytes;
    ensureValues(RowGathers.unitsOf(so, rowsBelow, rows, from, count) * unit);
    Buf o = offsets[0];
    long c = counts[0];
    if ((c + count + 1) * 8 > o.size) {
      ColumnMemory.grow(pool, held, spec.name(), o, (c + count + 1) * 8, c * 8, "offsets");
    }
    ByteBuffer data = src.values().rawData();
    int per = varLeaf ? 1 : itemBytes;
    long end = RawGather.serves(so, data, values.buf, o.buf)
        ? RawGather.gatherValues(so, data, unit, per, rowsBelow, rows, from, count, values.buf, o.buf, c, valueBytes)
        : RowGathers.gatherValues(so, data, unit, per, rows, from, count, values.buf, o.buf, c, valueBytes);
    if (src.hasValidity(0)) {
      for (int i : RowGathers.nullRows(src.validity(0).rawData(), rowsBelow, rows, from, count)) {
        markNull(0, c + i);
      }
    }
    counts[0] = c + count;
    if (!varLeaf) {
      counts[1] += (end - valueBytes) / itemBytes;
    }
    valueBytes = end;
  }

  /** The bytes of a row of a fixed-width field, 0 for any other field. */
  int fixedRowBytes() {
    return fixed != null ? rowBytes : 0;
  }

  /**
   * {@link #copyRows} for this field and {@code other}, both fixed-width with rows of 4 bytes, in one
   * pass by address ({@link RawGather#gather4(ByteBuffer, ByteBuffer, RawGather.Offsets, int, int,
   * ByteBuffer, ByteBuffer, int)}); returns false, having copied nothing, where a buffer cannot be
   * gathered by address.
   */
  boolean copyRowsWith(ColumnBuilder other, Column src, Column otherSrc, int rowsBelow, int[] rows, int from,
      int count, int at, RawGather.Rows raw) {
    if (fixedRowBytes() != 4 || other.fixedRowBytes() != 4) {
      throw new IllegalStateException("fields '" + spec.name() + "' and '" + other.spec.name()
          + "' do not both have rows of 4 bytes");
    }
    ByteBuffer a = src.values().rawData();
    ByteBuffer b = otherSrc.values().rawData();
    RawGather.Offsets offsets = RawGather.serves(a, b, fixed.buf, other.fixed.buf) ? raw.offsets(2) : null;
    if (offsets == null) {
      return false;
    }
    RawGather.gather4(a, b, offsets, from, count, fixed.buf, other.fixed.buf, at);
    copyNullRows(src, rowsBelow, rows, from, count, at);
    other.copyNullRows(otherSrc, rowsBelow, rows, from, count, at);
    return true;
  }

  /** Marks the rows from {@code at} on null where their source rows are (a fixed-width field's gather). */
  private void copyNullRows(Column src, int rowsBelow, int[] rows, int from, int count, int at) {
    if (src.hasValidity(0)) {
      for (int i : RowGathers.nullRows(src.validity(0).rawData(), rowsBelow, rows, from, count)) {
        markRowNull(at + i); // the source's null rows are zeros already
      }
    }
  }

  /** Row flags {@code [from, from + count)} of a fixed-length field's source copied to rows {@code at ..}. */
  private void copyRowFlags(ByteBuffer flags, int from, int count, int at) {
    for (int i = 0; i < count; i++) {
      if (flags.get(from + i) == 0) {
        markRowNull(at + i);
      }
    }
  }

  /** Marks row {@code row} of a fixed-length field null without zeroing it (the copied row is zeros). */
  private void markRowNull(int row) {
    if (validity[0] == null) {
      validity[0] = ColumnMemory.allocate(pool, held, capacity);
      fillValid(validity[0].buf, 0, capacity);
      validUpTo[0] = capacity;
    }
    validity[0].buf.put(row, (byte) 0);
  }

  /** The flags of source items {@code [from, from + n)} at {@code depth} copied to the next {@code n} items there. */
  private void copyFlags(int depth, ByteBuffer flags, long from, long n) {
    long at = counts[depth];
    for (long i = 0; i < n; i++) {
      if (flags.get((int) (from + i)) == 0) {
        markNull(depth, at + i);
      }
    }
  }

  // ------------------------------------------------------------------ building

  /** The column of {@code n} rows; the memory now belongs to the caller (released by {@link #release()}). */
  Column build(int n) {
    Tensor[] valid = new Tensor[ragged + 1];
    if (fixed != null) {
      if (validity[0] != null) {
        valid[0] = Tensor.wrap(DType.BOOL, Shape.of(n), validity[0].buf.slice(0, n));
      }
      Tensor v = Tensor.wrap(spec.dtype(), spec.shape().prepend(n), fixed.buf.slice(0, n * rowBytes));
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
      if (validity[j] != null) {
        int c = (int) counts[j];
        if (c > validity[j].size) {
          ColumnMemory.grow(pool, held, spec.name(), validity[j], c, validUpTo[j], "validity");
        }
        fillValid(validity[j].buf, (int) validUpTo[j], c);
        validUpTo[j] = c;
        valid[j] = Tensor.wrap(DType.BOOL, Shape.of(c), validity[j].buf.slice(0, c));
      }
    }
    ByteBuffer data = values.buf.slice(0, (int) valueBytes);
    Tensor v = varLeaf ? Tensor.wrapVariable(spec.dtype(), data, lastOffsets)
        : Tensor.wrap(spec.dtype(), spec.itemShape().prepend(counts[ragged]), data);
    return Column.of(spec, n, v, off, Arrays.asList(valid));
  }

  /** Adds this column's pooled buffers to {@code out}: they belong to the batch being built. */
  void addBuffers(List<PooledBuffer> out) {
    add(out, fixed);
    add(out, values);
    for (Buf b : offsets) {
      add(out, b);
    }
    for (Buf b : validity) {
      add(out, b);
    }
  }

  private static void add(List<PooledBuffer> out, Buf b) {
    if (b != null && b.pooled != null) {
      out.add(b.pooled);
    }
  }

  /** Returns this column's memory to the pool; each buffer is released at most once. */
  void release() {
    ColumnMemory.release(held, fixed);
    ColumnMemory.release(held, values);
    for (Buf b : offsets) {
      ColumnMemory.release(held, b);
    }
    for (Buf b : validity) {
      ColumnMemory.release(held, b);
    }
  }

  private static void fillValid(ByteBuffer b, int from, int to) {
    for (int i = from; i < to; i++) {
      b.put(i, (byte) 1);
    }
  }

  static void zero(ByteBuffer b, int from, int len) {
    int i = from;
    int end = from + len;
    for (; i + 8 <= end; i += 8) {
      b.putLong(i, 0L);
    }
    for (; i < end; i++) {
      b.put(i, (byte) 0);
    }
  }

  @Override
  public String toString() {
    return "ColumnBuilder(" + spec + ", capacity=" + capacity + ")";
  }
}
