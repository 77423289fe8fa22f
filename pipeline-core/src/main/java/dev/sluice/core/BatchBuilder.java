package dev.sluice.core;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Map;
import java.util.Objects;

/**
 * Fills the columns of one {@link Batch} in pooled memory, row by row or in bulk.
 *
 * <p>Fixed-length fields are preallocated ({@code capacity × rowBytes}); a source writes rows
 * straight into {@link #fixedColumn(int)} (absolute puts at {@code row × rowBytes}) and then
 * {@link #commitRows commits} them with their indices. Variable-length fields are appended with
 * {@link #appendVariable} and grow as needed. {@link #append(Example)} does both for one example.
 *
 * <p>{@link #build()} hands the memory to the batch; {@link #close()} releases it if the batch was
 * never built (error and cancel paths), so a builder is used in try-with-resources.
 */
public final class BatchBuilder implements AutoCloseable {
  private static final ByteBuffer EMPTY = ByteBuffer.allocate(0);

  private final Schema schema;
  private final int capacity;
  private final BufferPool pool;
  private final ColumnBuilder[] columns;
  private long[] indices; // allocated by the first commit or append that is not a range
  private long rangeFirst = -1; // >= 0 while the committed rows are rangeFirst, rangeFirst + 1, ...
  private int size;
  private boolean done;

  private BatchBuilder(Schema schema, int capacity, BufferPool pool) {
    this.schema = schema;
    this.capacity = capacity;
    this.pool = pool;
    this.columns = new ColumnBuilder[schema.size()];
    try {
      for (int i = 0; i < columns.length; i++) {
        columns[i] = new ColumnBuilder(schema.field(i));
      }
    } catch (RuntimeException e) {
      close();
      throw e;
    }
  }

  /**
   * A builder for at most {@code capacity} rows of {@code schema}, allocating from {@code pool}.
   *
   * @param capacity rows, &gt; 0
   */
  public static BatchBuilder create(Schema schema, int capacity, BufferPool pool) {
    Objects.requireNonNull(schema, "schema");
    Objects.requireNonNull(pool, "pool");
    if (capacity <= 0) {
      throw new IllegalArgumentException("capacity > 0 required but it was " + capacity);
    }
    return new BatchBuilder(schema, capacity, pool);
  }

  public Schema schema() {
    return schema;
  }

  public int capacity() {
    return capacity;
  }

  /** Rows committed so far. */
  public int size() {
    return size;
  }

  public boolean isFull() {
    return size == capacity;
  }

  /** Bytes per row of fixed-length field {@code field}. */
  public int rowBytes(int field) {
    ColumnBuilder c = columns[field];
    if (c.fixed == null) {
      throw new IllegalStateException("field '" + c.spec.name() + "' is variable-length");
    }
    return c.rowBytes;
  }

  /**
   * The whole buffer of fixed-length field {@code field} ({@code capacity × rowBytes} bytes,
   * little-endian). Write row {@code r} at byte {@code r × rowBytes(field)} with absolute puts,
   * then {@link #commitRows}.
   */
  public ByteBuffer fixedColumn(int field) {
    checkOpen();
    ColumnBuilder c = columns[field];
    if (c.fixed == null) {
      throw new IllegalStateException("field '" + c.spec.name() + "' is variable-length");
    }
    return c.fixed.buffer();
  }

  /**
   * Appends the next row's value of variable-length field {@code field}: its bytes from
   * {@code value}'s position to its limit (the position is not moved).
   */
  public void appendVariable(int field, ByteBuffer value) {
    checkOpen();
    columns[field].appendVariable(value);
  }

  /**
   * Marks row {@code row} of field {@code field} as null. Fixed-length rows are zeroed; for a
   * variable-length field append an empty value for the row as well.
   */
  public void setNull(int field, int row) {
    checkOpen();
    if (row < 0 || row >= capacity) {
      throw new IndexOutOfBoundsException("row " + row + " out of bounds for capacity " + capacity);
    }
    columns[field].setNull(row);
  }

  /** Commits {@code count} rows written past {@link #size()}, with indices {@code indices[from..from+count)}. */
  public void commitRows(long[] indices, int from, int count) {
    checkOpen();
    if (count < 0 || size + count > capacity) {
      throw new IllegalArgumentException(
          "cannot commit " + count + " rows: " + size + " of " + capacity + " are used");
    }
    if (size == 0 && count == capacity && this.indices == null) {
      // the usual whole batch: one copy, no zeroing of a fresh array first
      this.indices = Arrays.copyOfRange(indices, from, from + count);
    } else {
      System.arraycopy(indices, from, indices(), size, count);
    }
    size += count;
    checkVariableColumns();
  }

  /**
   * Commits {@code count} rows written past {@link #size()} whose indices are {@code first,
   * first+1, ...}: what a source does for a batch it found to be one run, so that the batch keeps
   * no index array.
   */
  public void commitRange(long first, int count) {
    checkOpen();
    if (count < 0 || size + count > capacity) {
      throw new IllegalArgumentException(
          "cannot commit " + count + " rows: " + size + " of " + capacity + " are used");
    }
    if (first < 0) {
      throw new IllegalArgumentException("first index must be >= 0 but it was " + first);
    }
    if (size == 0 && indices == null) {
      rangeFirst = first;
    } else {
      long[] a = indices();
      for (int i = 0; i < count; i++) {
        a[size + i] = first + i;
      }
    }
    size += count;
    checkVariableColumns();
  }

  private void checkVariableColumns() {
    for (ColumnBuilder c : columns) {
      if (c.fixed == null && c.rows != size) {
        throw new IllegalStateException("field '" + c.spec.name() + "' has " + c.rows
            + " values appended but " + size + " rows are committed");
      }
    }
  }

  /** Copies one example (every field of the schema) into the next row. */
  public void append(Example example) {
    checkOpen();
    if (size == capacity) {
      throw new IllegalStateException("batch builder is full (" + capacity + " rows)");
    }
    for (int f = 0; f < columns.length; f++) {
      ColumnBuilder c = columns[f];
      String name = c.spec.name();
      Map<String, Tensor> fields = example.fields();
      Tensor t = fields.get(name); // one lookup per field: this runs once per element and field
      if (t == null) {
        if (!fields.containsKey(name)) {
          throw new IllegalArgumentException("example " + example.index() + " has no field '" + name
              + "'; the batch expects " + schema);
        }
        if (!c.spec.nullable()) {
          throw new IllegalArgumentException("field '" + name + "' of example " + example.index()
              + " is null but the field is not nullable");
        }
        c.setNull(size);
        if (c.fixed == null) {
          c.appendVariable(EMPTY);
        }
        continue;
      }
      if (t.dtype() != c.spec.dtype()) {
        throw new IllegalArgumentException("field '" + name + "' of example " + example.index()
            + " is " + t.dtype() + " but the batch expects " + c.spec.dtype());
      }
      if (c.fixed != null) {
        if (t.byteSize() != c.rowBytes || !t.shape().equals(c.spec.shape())) {
          throw new IllegalArgumentException("field '" + name + "' of example " + example.index()
              + " has shape " + t.shape() + " but the batch expects " + c.spec.shape()
              + " (use paddedBatch for variable shapes)");
        }
        c.fixed.buffer().put(size * c.rowBytes, t.rawData(), 0, c.rowBytes);
      } else {
        if (!c.spec.shape().isCompatibleWith(t.shape())) {
          throw new IllegalArgumentException("field '" + name + "' of example " + example.index()
              + " has shape " + t.shape() + " but the batch expects " + c.spec.shape());
        }
        c.appendVariable(t.rawData());
      }
    }
    indices()[size] = example.index();
    size++;
  }

  /** The batch of the rows committed so far; the memory now belongs to it. */
  public Batch build() {
    checkOpen();
    done = true;
    Column[] cols = new Column[columns.length];
    for (int i = 0; i < columns.length; i++) {
      cols[i] = columns[i].build(size);
    }
    ColumnBuilder[] owned = columns;
    AutoCloseable release = () -> {
      for (ColumnBuilder c : owned) {
        c.release();
      }
    };
    if (indices == null && size > 0) {
      return Batch.ofRange(schema, Arrays.asList(cols), rangeFirst, size, release);
    }
    long[] idx = size == capacity ? indices : size == 0 ? new long[0] : Arrays.copyOf(indices, size);
    return Batch.of(schema, Arrays.asList(cols), idx, release);
  }

  /** The index array, created (and filled with the range committed so far) on first use. */
  private long[] indices() {
    if (indices == null) {
      indices = new long[capacity];
      for (int i = 0; i < size; i++) {
        indices[i] = rangeFirst + i;
      }
    }
    return indices;
  }

  /** Releases the memory if {@link #build()} was not called; idempotent. */
  @Override
  public void close() {
    if (!done) {
      done = true;
      for (ColumnBuilder c : columns) {
        if (c != null) {
          c.release();
        }
      }
    }
  }

  private void checkOpen() {
    if (done) {
      throw new IllegalStateException("batch builder already built or closed");
    }
  }

  private final class ColumnBuilder {
    final TensorSpec spec;
    final int rowBytes;
    final int itemBytes; // variable-length: bytes per first-dimension item (1 for string/bytes)
    PooledBuffer fixed;
    PooledBuffer values;
    PooledBuffer offsets;
    PooledBuffer validity;
    long valueBytes;
    int rows;

    ColumnBuilder(TensorSpec spec) {
      this.spec = spec;
      if (spec.isFixedLength()) {
        this.rowBytes = Math.toIntExact(spec.rowBytes());
        this.itemBytes = 0;
        this.fixed = pool.allocate((long) rowBytes * capacity);
      } else {
        this.rowBytes = -1;
        if (spec.dtype().isVariableLength()) {
          this.itemBytes = 1;
        } else {
          Shape s = spec.shape();
          if (s.rank() == 0 || !s.dropFirst().isFullyDefined()) {
            throw new IllegalArgumentException("field '" + spec.name() + "' " + spec
                + ": only the first dimension may be variable");
          }
          this.itemBytes = Math.toIntExact(s.dropFirst().numElements() * spec.dtype().byteSize());
        }
        this.offsets = pool.allocate(8L * (capacity + 1));
        this.offsets.buffer().putLong(0, 0L);
        this.values = pool.allocate(Math.max(4096, (long) capacity * 16));
      }
    }

    void appendVariable(ByteBuffer value) {
      if (fixed != null) {
        throw new IllegalStateException("field '" + spec.name() + "' is fixed-length");
      }
      if (rows == capacity) {
        throw new IllegalStateException("field '" + spec.name() + "' already has " + capacity + " values");
      }
      int n = value.remaining();
      if (itemBytes > 1 && n % itemBytes != 0) {
        throw new IllegalArgumentException("field '" + spec.name() + "': a value of " + n
            + " bytes is not a whole number of " + itemBytes + "-byte items");
      }
      long need = valueBytes + n;
      if (need > values.size()) {
        PooledBuffer bigger = pool.allocate(Math.max(need, values.size() * 2));
        bigger.buffer().put(0, values.buffer(), 0, (int) valueBytes);
        values.close();
        values = bigger;
      }
      values.buffer().put((int) valueBytes, value, value.position(), n);
      valueBytes = need;
      rows++;
      offsets.buffer().putLong(rows * 8, itemBytes == 0 ? valueBytes : valueBytes / itemBytes);
    }

    void setNull(int row) {
      if (validity == null) {
        validity = pool.allocate(capacity);
        ByteBuffer v = validity.buffer();
        for (int i = 0; i < capacity; i++) {
          v.put(i, (byte) 1);
        }
      }
      validity.buffer().put(row, (byte) 0);
      if (fixed != null) {
        ByteBuffer b = fixed.buffer();
        for (int i = row * rowBytes, end = i + rowBytes; i < end; i++) {
          b.put(i, (byte) 0);
        }
      }
    }

    Column build(int n) {
      Tensor valid = validity == null ? null
          : Tensor.wrap(DType.BOOL, Shape.of(n), validity.buffer().slice(0, n));
      if (fixed != null) {
        Tensor v = Tensor.wrap(spec.dtype(), spec.shape().prepend(n), fixed.buffer().slice(0, n * rowBytes));
        return new Column(spec, n, v, null, valid);
      }
      Tensor off = Tensor.wrap(DType.INT64, Shape.of(n + 1L), offsets.buffer().slice(0, (n + 1) * 8));
      ByteBuffer data = values.buffer().slice(0, (int) valueBytes);
      Tensor v;
      if (spec.dtype().isVariableLength()) {
        v = Tensor.wrapVariable(spec.dtype(), data, offsets.buffer().slice(0, (n + 1) * 8));
      } else {
        long items = valueBytes / itemBytes;
        v = Tensor.wrap(spec.dtype(), spec.shape().dropFirst().prepend(items), data);
      }
      return new Column(spec, n, v, off, valid);
    }

    /** Returns this column's memory to the pool (each buffer closes at most once). */
    void release() {
      close(fixed);
      close(values);
      close(offsets);
      close(validity);
    }

    private static void close(PooledBuffer b) {
      if (b != null) {
        b.close();
      }
    }
  }
}
