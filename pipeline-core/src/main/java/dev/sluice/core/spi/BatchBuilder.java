package dev.sluice.core.spi;

import dev.sluice.core.Batch;
import dev.sluice.core.Column;
import dev.sluice.core.DatasetException;
import dev.sluice.core.Example;
import dev.sluice.core.MemoryLimitException;
import dev.sluice.core.MemoryManager;
import dev.sluice.core.Schema;
import dev.sluice.core.Tensor;
import dev.sluice.core.TensorSpec;
import dev.sluice.core.internal.CoreAccess;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.IntToLongFunction;

/**
 * Fills the columns of one {@link Batch} in pooled memory, row by row or in bulk.
 *
 * <p>Fixed-length fields are preallocated ({@code capacity × rowBytes}); a source writes rows
 * straight into {@link #fixedColumn(int)} (absolute puts at {@code row × rowBytes}) and then
 * {@link #commitRows commits} them with their indices. Variable-length and nested fields are
 * appended row by row through their {@link #column(int) column builder} (or {@link #appendVariable}
 * for a single level) and grow as needed. {@link #append(Example)} does both for one example, at
 * every nesting level.
 *
 * <p>{@link #build()} hands the memory to the batch; {@link #close()} releases it if the batch was
 * never built (error and cancel paths), so a builder is used in try-with-resources.
 */
public final class BatchBuilder implements AutoCloseable {
  private static final CoreAccess CORE = CoreAccess.get();

  private final Schema schema;
  private final int capacity;
  private final BufferPool pool;
  private final ColumnBuilder[] columns;
  private final long[] held = new long[1]; // bytes (size classes) of the pooled buffers the columns hold
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
        columns[i] = new ColumnBuilder(schema.field(i), capacity, pool, held);
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

  /**
   * A builder for at most {@code capacity} rows of {@code schema} in heap memory, which the garbage
   * collector frees: for columns kept beyond the batches of a pass (decoded dictionary values, a
   * decoded record batch cached for random access). Closing it releases nothing.
   *
   * @param capacity rows, &gt; 0
   */
  public static BatchBuilder onHeap(Schema schema, int capacity) {
    Objects.requireNonNull(schema, "schema");
    if (capacity <= 0) {
      throw new IllegalArgumentException("capacity > 0 required but it was " + capacity);
    }
    return new BatchBuilder(schema, capacity, null);
  }

  /**
   * Checks, before any work, that a batch of {@code rows} rows of {@code schema} can be built from
   * {@code memory}: every buffer the builder allocates up front (a fixed-length field's values, a
   * variable-length field's offsets per level and first values buffer, each at its size class) fits
   * in one buffer, and all of them together fit under the manager's limit. Buffers that grow later
   * (variable-length values) and validity vectors are not counted, so a pass this refuses could
   * never build its first batch.
   *
   * @param what the stage that builds the batches, for messages ({@code "batch(1000)"})
   * @param rows the rows of the largest batch the stage builds, &gt; 0
   * @throws IllegalArgumentException if one of the buffers is larger than a buffer can be
   * @throws MemoryLimitException if the buffers of one batch are more than the limit
   */
  public static void checkFits(String what, Schema schema, long rows, MemoryManager memory) {
    Objects.requireNonNull(schema, "schema");
    Objects.requireNonNull(memory, "memory");
    if (rows <= 0) {
      return;
    }
    Map<String, Long> needs = new java.util.LinkedHashMap<>();
    long total = 0;
    for (TensorSpec f : schema.fields()) {
      long n = 0;
      for (long b : firstBuffers(f, rows)) {
        if (b < 0 || b > BufferPool.MAX_BUFFER_BYTES) {
          throw new IllegalArgumentException(what + ": one batch of " + rows + " rows needs "
              + (b < 0 ? "more than " + Long.MAX_VALUE + " bytes" : CORE.bytes(b)) + " in one buffer for field '"
              + f.name() + "' (" + f + ") but a buffer holds at most " + CORE.bytes(BufferPool.MAX_BUFFER_BYTES)
              + ": use a smaller batch size");
        }
        n += BufferPool.sizeClassBytes(b);
      }
      needs.merge(f.name(), n, Long::sum);
      total += n;
    }
    CORE.checkCanHold(memory, what, rows, total, needs);
  }

  /** The bytes of the buffers a column builder of {@code rows} rows allocates at once (-1: overflows a long). */
  private static long[] firstBuffers(TensorSpec f, long rows) {
    if (f.isFixedLength()) {
      long rowBytes = f.rowBytes();
      return new long[] {rowBytes != 0 && rows > Long.MAX_VALUE / rowBytes ? -1 : rowBytes * rows};
    }
    int levels = f.raggedRank() + (f.dtype().isVariableLength() ? 1 : 0);
    long[] out = new long[levels + 1];
    for (int j = 0; j < levels; j++) {
      out[j] = rows >= Long.MAX_VALUE / 8 ? -1 : 8 * (rows + 1);
    }
    out[levels] = rows >= Long.MAX_VALUE / 16 ? -1 : Math.max(4096, rows * 16);
    return out;
  }

  /** The fields of the batch being built. */
  public Schema schema() {
    return schema;
  }

  /** The most rows this builder takes. */
  public int capacity() {
    return capacity;
  }

  /** Rows committed so far. */
  public int size() {
    return size;
  }

  /** True when {@link #size()} has reached {@link #capacity()}. */
  public boolean isFull() {
    return size == capacity;
  }

  /**
   * The builder of field {@code field}'s column: where a source decoding column by column (Parquet)
   * writes its rows, lists and values.
   */
  public ColumnBuilder column(int field) {
    checkOpen();
    return columns[field];
  }

  /** Bytes per row of fixed-length field {@code field}. */
  public int rowBytes(int field) {
    return columns[field].rowBytes();
  }

  /**
   * The whole buffer of fixed-length field {@code field} ({@code capacity × rowBytes} bytes,
   * little-endian). Write row {@code r} at byte {@code r × rowBytes(field)} with absolute puts,
   * then {@link #commitRows}.
   */
  public ByteBuffer fixedColumn(int field) {
    checkOpen();
    return columns[field].fixedBuffer();
  }

  /**
   * Appends the next row's value of single-level variable-length field {@code field}: its bytes
   * from {@code value}'s position to its limit (the position is not moved).
   */
  public void appendVariable(int field, ByteBuffer value) {
    checkOpen();
    columns[field].appendVariable(value);
  }

  /**
   * Marks row {@code row} of field {@code field} as null. Fixed-length rows are zeroed; a
   * variable-length field gets its next row as a null row (an empty value), so {@code row} must be
   * the next one.
   */
  public void setNull(int field, int row) {
    checkOpen();
    if (row < 0 || row >= capacity) {
      throw new IndexOutOfBoundsException("row " + row + " out of bounds for capacity " + capacity);
    }
    ColumnBuilder c = columns[field];
    if (c.isFixedLength()) {
      c.setNull(row);
    } else {
      if (row != c.rows()) {
        throw new IllegalArgumentException("field '" + c.spec().name() + "' is variable-length: its next row is "
            + c.rows() + " but setNull got " + row);
      }
      c.addNull(0);
    }
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
      if (!c.isFixedLength() && c.rows() != size) {
        throw new IllegalStateException("field '" + c.spec().name() + "' has " + c.rows()
            + " values appended but " + size + " rows are committed");
      }
    }
  }

  /**
   * Copies one example (every field of the schema, at every nesting level) into the next row. An
   * example that does not fit the schema is refused naming the example and the field, and leaves
   * the builder as it was.
   */
  public void append(Example example) {
    checkOpen();
    if (size == capacity) {
      throw new IllegalStateException("batch builder is full (" + capacity + " rows)");
    }
    try {
      appendFields(example);
    } catch (RuntimeException e) {
      for (ColumnBuilder c : columns) {
        c.truncate(size); // the builder stays as it was before this example
      }
      throw e;
    }
    indices()[size] = example.index();
    size++;
  }

  private void appendFields(Example example) {
    for (int f = 0; f < columns.length; f++) {
      ColumnBuilder c = columns[f];
      TensorSpec spec = c.spec();
      String name = spec.name();
      Map<String, Tensor> fields = example.fields();
      Tensor t = fields.get(name); // one lookup per field: this runs once per element and field
      if (t == null) {
        if (!fields.containsKey(name)) {
          throw new IllegalArgumentException("example " + example.index() + " has no field '" + name
              + "'; the batch expects " + schema);
        }
        if (!spec.nullable()) {
          throw new IllegalArgumentException("field '" + name + "' of example " + example.index()
              + " is null but the field is not nullable");
        }
        if (c.isFixedLength()) {
          c.setNull(size);
        } else {
          c.addNull(0);
        }
        continue;
      }
      if (t.dtype() != spec.dtype()) {
        throw new IllegalArgumentException("field '" + name + "' of example " + example.index()
            + " is " + t.dtype() + " but the batch expects " + spec.dtype());
      }
      if (c.isFixedLength()) {
        int rowBytes = c.rowBytes();
        if (t.byteSize() != rowBytes || !t.shape().equals(spec.shape()) || t.hasNulls()) {
          throw new IllegalArgumentException("field '" + name + "' of example " + example.index()
              + " has shape " + t.shape() + (t.hasNulls() ? " with null elements" : "")
              + " but the batch expects " + spec.shape() + " (use paddedBatch for variable shapes)");
        }
        c.fixedBuffer().put(size * rowBytes, CORE.rawData(t), 0, rowBytes);
      } else {
        if (!spec.shape().isCompatibleWith(t.shape())) {
          throw new IllegalArgumentException("field '" + name + "' of example " + example.index()
              + " has shape " + t.shape() + " but the batch expects " + spec.shape());
        }
        if (!t.hasNulls() && !t.isRagged() && (spec.raggedRank() == 0 || spec.raggedRank() == 1 && !spec.dtype().isVariableLength())) {
          c.appendVariable(CORE.rawData(t));
        } else {
          try {
            c.appendRow(t);
          } catch (IllegalArgumentException | IllegalStateException e) {
            throw new IllegalArgumentException("example " + example.index() + ": " + e.getMessage(), e);
          }
        }
      }
    }
  }

  /**
   * Copies rows {@code [fromRow, fromRow + count)} of {@code source} into the next {@code count}
   * rows, every column as one range (fixed-width values in bulk; variable-length and nested values in
   * bulk with their offsets rebased at every level; validity at every depth), and commits them with
   * their source indices. The source is neither changed nor closed.
   *
   * @throws IllegalArgumentException if the source's fields differ from this builder's, or the rows
   *     do not fit
   */
  public void appendRange(Batch source, int fromRow, int count) {
    checkOpen();
    checkSource(source);
    checkRoom(count);
    if (fromRow < 0 || count < 0 || fromRow + count > source.size()) {
      throw new IndexOutOfBoundsException("rows [" + fromRow + ", " + (fromRow + count) + ") out of bounds for "
          + source.name() + " of " + source.size() + " rows");
    }
    for (int f = 0; f < columns.length; f++) {
      columns[f].copyRange(source.column(f), fromRow, count, size);
    }
    commitCopied(count, i -> source.index(fromRow + i));
  }

  /**
   * Copies row {@code rows[i]} of {@code source}, for each {@code i} in {@code [from, from + count)}
   * in that order, into the next {@code count} rows (a gather, column by column) and commits them
   * with their source indices. The source is neither changed nor closed. To gather from several
   * batches, join them first with {@link #appendRange}; to spread one gather over several batches,
   * see {@link #appendRows(Batch, int[], int, int, List)}.
   *
   * @throws IllegalArgumentException if the source's fields differ from this builder's, or the rows
   *     do not fit
   * @throws IndexOutOfBoundsException if an entry of {@code rows} is not a row of the source
   */
  public void appendRows(Batch source, int[] rows, int from, int count) {
    checkOpen();
    checkSource(source);
    checkRoom(count);
    appendRows(source, rows, from, count, List.of(this));
  }

  /**
   * Copies row {@code rows[i]} of {@code source}, for each {@code i} in {@code [from, from + count)}
   * in that order, into {@code targets} in turn: each target up to its capacity, then the next, so
   * that the last target used may be left partly filled. The gather runs column by column across all
   * the targets, so each column of the source is read while it is in the cache (one pass over the
   * source, however many batches it is spread over). Each target commits its rows with their source
   * indices; the source is neither changed nor closed.
   *
   * @throws IllegalArgumentException if a target's fields differ from the source's, or the targets
   *     have room for fewer than {@code count} rows
   * @throws IndexOutOfBoundsException if an entry of {@code rows} is not a row of the source
   */
  public static void appendRows(Batch source, int[] rows, int from, int count, List<BatchBuilder> targets) {
    Objects.checkFromIndexSize(from, count, rows.length);
    int[] take = take(source.schema(), source.name(), count, targets);
    if (count == 0) {
      return; // nothing to copy, and there may be no targets
    }
    checkRows(rows, from, count, source.size(), source.name());
    gather((f, slot) -> source.column(f), source.schema(), source.size(), rows, from, count, take, targets);
    commit(source::index, rows, from, take, targets);
  }

  /**
   * As {@link #appendRows(Batch, int[], int, int, List)} from the rows of {@code window}, which are
   * decoded one field at a time: each field of the window's rows is decoded and at once gathered
   * into every target, then the next. The window is consumed: every field of all its rows is
   * decoded (also where {@code count} is 0, to pass rows over), its cursors are moved past them and
   * it is left empty.
   *
   * @throws IllegalArgumentException if a target's fields differ from the window's, or the targets
   *     have room for fewer than {@code count} rows
   * @throws IndexOutOfBoundsException if an entry of {@code rows} is not a row of the window
   * @throws DatasetException if a cursor cannot decode its rows
   */
  public static void appendRows(ColumnWindow window, int[] rows, int from, int count, List<BatchBuilder> targets) {
    Objects.checkFromIndexSize(from, count, rows.length);
    int[] take = take(window.schema(), window.name(), count, targets);
    if (count == 0) {
      window.pass();
      return;
    }
    checkRows(rows, from, count, window.size(), window.name());
    gather(window::decode, window.schema(), window.size(), rows, from, count, take, targets);
    commit(window::index, rows, from, take, targets);
    window.finish();
  }

  /** The source columns of a gather: field {@code field}, in buffer {@code slot} (0, or 1 for the second of a pair). */
  @FunctionalInterface
  private interface Columns {
    Column column(int field, int slot);
  }

  /** The rows each target takes of {@code count}, each up to its capacity, in turn; the targets checked. */
  private static int[] take(Schema schema, String name, int count, List<BatchBuilder> targets) {
    int[] take = new int[targets.size()];
    int left = count;
    for (int t = 0; t < take.length; t++) {
      BatchBuilder target = targets.get(t);
      target.checkOpen();
      target.checkSource(schema, name);
      take[t] = Math.min(left, target.capacity - target.size);
      left -= take[t];
    }
    if (left > 0) {
      throw new IllegalArgumentException("cannot append " + count + " rows: the " + targets.size()
          + " batches being built have room for " + (count - left));
    }
    return take;
  }

  /**
   * Every field of the source rows {@code rows[from ..]} gathered into the targets ({@code take[t]}
   * rows into target {@code t} in turn), field by field; fields of 4-byte rows two at a time.
   */
  private static void gather(Columns source, Schema schema, int below, int[] rows, int from, int count, int[] take,
      List<BatchBuilder> targets) {
    RawGather.Rows raw = RawGather.ENABLED ? new RawGather.Rows(rows, from, count, below) : null;
    int waiting = -1; // a field of 4-byte rows waiting for a second one to be gathered with
    for (int f = 0; f < schema.size(); f++) {
      if (raw != null && fourByteRows(schema.field(f))) {
        if (waiting < 0) {
          waiting = f;
        } else {
          copyRows(source.column(waiting, 0), source.column(f, 1), waiting, f, below, rows, from, take, targets, raw);
          waiting = -1;
        }
      } else {
        copyRows(source.column(f, 0), null, f, -1, below, rows, from, take, targets, raw);
      }
    }
    if (waiting >= 0) {
      copyRows(source.column(waiting, 0), null, waiting, -1, below, rows, from, take, targets, raw);
    }
  }

  /** Commits each target's gathered rows with the indices of their source rows ({@code index} of a source row). */
  private static void commit(IntToLongFunction index, int[] rows, int from, int[] take, List<BatchBuilder> targets) {
    for (int t = 0, at = from; t < take.length; at += take[t], t++) {
      if (take[t] > 0) {
        int first = at;
        targets.get(t).commitCopied(take[t], i -> index.applyAsLong(rows[first + i]));
      }
    }
  }

  private static boolean fourByteRows(TensorSpec spec) {
    return spec.isFixedLength() && spec.rowBytes() == 4;
  }

  /**
   * Field {@code f} (source column {@code a}) of the rows {@code rows[from ..]}, {@code take[t]} of
   * them into target {@code t} in turn, and field {@code g} (column {@code b}) in the same pass where
   * {@code g >= 0} (two fields of 4-byte rows, gathered together by address where the buffers allow).
   */
  private static void copyRows(Column a, Column b, int f, int g, int below, int[] rows, int from, int[] take,
      List<BatchBuilder> targets, RawGather.Rows raw) {
    for (int t = 0, at = from; t < take.length; at += take[t], t++) {
      if (take[t] > 0) { // a target that is already full takes nothing
        BatchBuilder target = targets.get(t);
        ColumnBuilder ca = target.columns[f];
        if (g < 0) {
          ColumnCopies.copyRows(ca, a, below, rows, at, take[t], target.size, raw);
        } else if (!ColumnCopies.copyRowsPaired(ca, target.columns[g], a, b, below, rows, at, take[t], target.size,
            raw)) {
          ColumnCopies.copyRows(ca, a, below, rows, at, take[t], target.size, raw);
          ColumnCopies.copyRows(target.columns[g], b, below, rows, at, take[t], target.size, raw);
        }
      }
    }
  }

  /** Checks that {@code rows[from .. from + count)} are rows of a source of {@code n} rows called {@code name}. */
  private static void checkRows(int[] rows, int from, int count, int n, String name) {
    for (int i = from; i < from + count; i++) {
      if (rows[i] < 0 || rows[i] >= n) {
        throw new IndexOutOfBoundsException("row " + rows[i] + " out of bounds for " + name + " of " + n + " rows");
      }
    }
  }

  private void checkSource(Batch source) {
    checkSource(source.schema(), source.name());
  }

  private void checkSource(Schema other, String name) {
    if (other != schema && !other.equals(schema)) {
      throw new IllegalArgumentException(name + " has the fields " + other + " but the batch expects " + schema);
    }
  }

  private void checkRoom(int count) {
    if (count < 0 || size + count > capacity) {
      throw new IllegalArgumentException("cannot append " + count + " rows: " + size + " of " + capacity + " are used");
    }
  }

  /**
   * Commits {@code count} copied rows, the {@code i}-th with index {@code index.applyAsLong(i)}:
   * kept a range when they continue the batch's range, else written straight into the index array.
   */
  private void commitCopied(int count, IntToLongFunction index) {
    if (count == 0) {
      return;
    }
    long first = index.applyAsLong(0);
    boolean run = indices == null && (size == 0 || rangeFirst + size == first);
    for (int i = 1; i < count && run; i++) {
      run = index.applyAsLong(i) == first + i;
    }
    if (run) {
      if (size == 0) {
        rangeFirst = first;
      }
    } else {
      long[] a = indices();
      for (int i = 0; i < count; i++) {
        a[size + i] = index.applyAsLong(i);
      }
    }
    size += count;
    checkVariableColumns();
  }

  /** The batch of the rows committed so far; the memory now belongs to it. */
  public Batch build() {
    checkOpen();
    done = true;
    Column[] cols = new Column[columns.length];
    for (int i = 0; i < columns.length; i++) {
      cols[i] = columns[i].build(size);
    }
    List<PooledBuffer> owned = new ArrayList<>(columns.length * 2);
    for (ColumnBuilder c : columns) {
      c.addBuffers(owned);
    }
    PooledBuffer[] buffers = owned.toArray(new PooledBuffer[0]);
    held[0] = 0; // the batch's now
    if (indices == null && size > 0) {
      return CORE.builtBatch(schema, Arrays.asList(cols), null, rangeFirst, size, buffers);
    }
    long[] idx = size == capacity ? indices : size == 0 ? new long[0] : Arrays.copyOf(indices, size);
    return CORE.builtBatch(schema, Arrays.asList(cols), idx, 0, idx.length, buffers);
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
}
