package dev.sluice.core.spi;

import dev.sluice.core.Column;
import dev.sluice.core.Schema;
import dev.sluice.core.TensorSpec;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * A window of rows decoded one field at a time from {@link ColumnCursor}s, the source of
 * {@link BatchBuilder#appendRows(ColumnWindow, int[], int, int, List)}. The window's rows are the
 * next rows of its cursors in turn ({@link #add}). The gather decodes one field of all of them into
 * a buffer of its own, gathers that field into the target batches while the buffer is in the cache,
 * and only then decodes the next field; at the end it moves every cursor past its rows and empties
 * the window. The window's rows are thus never written out whole: a window of {@code W} rows needs
 * one column of {@code W} rows at a time (two for fields gathered in pairs) instead of {@code W}
 * whole rows.
 *
 * <p>The buffers, one or two per kind of field (type, shape and nullability), are kept from window
 * to window and returned to the pool by {@link #close()}. The cursors belong to the caller. Not
 * thread-safe.
 */
public final class ColumnWindow implements AutoCloseable {
  private final Schema schema;
  private final int capacity;
  private final BufferPool pool;
  private final String name;
  private final TensorSpec[] kinds; // per field: its spec without its name, the key of its buffers
  private final Map<TensorSpec, ColumnBuilder[]> buffers = new HashMap<>();
  private final List<ColumnCursor> cursors = new ArrayList<>();
  private int[] counts = new int[2];
  private long[] firstIndex = new long[2];
  private int size;
  private boolean closed;

  /**
   * An empty window of at most {@code capacity} rows of {@code schema}, its buffers allocated from
   * {@code pool} as fields are decoded.
   *
   * @param name what errors call the window's rows (the source)
   */
  public ColumnWindow(Schema schema, int capacity, BufferPool pool, String name) {
    this.schema = Objects.requireNonNull(schema, "schema");
    this.pool = Objects.requireNonNull(pool, "pool");
    this.name = Objects.requireNonNull(name, "name");
    if (capacity <= 0) {
      throw new IllegalArgumentException("capacity > 0 required but it was " + capacity);
    }
    this.capacity = capacity;
    this.kinds = new TensorSpec[schema.size()];
    for (int f = 0; f < kinds.length; f++) {
      kinds[f] = schema.field(f).withName("window"); // fields of the same type, shape and nullability share buffers
    }
  }

  /** The fields of the window's rows. */
  public Schema schema() {
    return schema;
  }

  /** The most rows the window holds. */
  public int capacity() {
    return capacity;
  }

  /** The window's rows so far. */
  public int size() {
    return size;
  }

  /** What errors call the window's rows. */
  public String name() {
    return name;
  }

  /**
   * Makes the next {@code rows} rows of {@code cursor} the window's next rows. A cursor is added at
   * most once per window.
   *
   * @throws IllegalArgumentException if the cursor's fields differ from the window's, the cursor
   *     has fewer rows left, it is already in the window, or the window has no room for them
   */
  public void add(ColumnCursor cursor, int rows) {
    checkOpen();
    Schema other = cursor.schema();
    if (other != schema && !other.equals(schema)) {
      throw new IllegalArgumentException(cursor + " has the fields " + other + " but the window holds " + schema);
    }
    if (rows <= 0 || rows > cursor.remaining()) {
      throw new IllegalArgumentException("cannot take " + rows + " rows of " + cursor + ", which has "
          + cursor.remaining() + " left");
    }
    if (rows > capacity - size) {
      throw new IllegalArgumentException("cannot add " + rows + " rows to a window of " + size + " of " + capacity);
    }
    if (cursors.stream().anyMatch(c -> c == cursor)) {
      throw new IllegalArgumentException(cursor + " is already in the window");
    }
    int n = cursors.size();
    if (n == counts.length) {
      counts = Arrays.copyOf(counts, 2 * n);
      firstIndex = Arrays.copyOf(firstIndex, 2 * n);
    }
    counts[n] = rows;
    firstIndex[n] = cursor.index();
    cursors.add(cursor);
    size += rows;
  }

  /**
   * Field {@code field} of the window's rows, decoded into buffer {@code slot} (0 or 1): a view
   * valid until the next decode into a buffer of that slot.
   */
  Column decode(int field, int slot) {
    checkOpen();
    ColumnBuilder b = buffer(kinds[field], slot);
    b.clear();
    int at = 0;
    for (int i = 0; i < cursors.size(); i++) {
      cursors.get(i).decode(field, b, at, counts[i]);
      at += counts[i];
    }
    return b.build(size);
  }

  /** The global index of row {@code row} of the window. */
  long index(int row) {
    if (cursors.size() == 1 && row >= 0 && row < size) {
      return firstIndex[0] + row; // the usual window: the rows of one cursor
    }
    int r = row;
    for (int i = 0; i < cursors.size(); i++) {
      if (r < counts[i]) {
        return firstIndex[i] + r;
      }
      r -= counts[i];
    }
    throw new IndexOutOfBoundsException("row " + row + " out of bounds for a window of " + size + " rows");
  }

  /** Decodes every field of the window's rows without keeping them: rows passed over. */
  void pass() {
    for (int f = 0; f < schema.size(); f++) {
      decode(f, 0);
    }
    finish();
  }

  /** Moves each cursor past its rows (every field has decoded them) and empties the window. */
  void finish() {
    for (int i = 0; i < cursors.size(); i++) {
      cursors.get(i).advance(counts[i]);
    }
    clear();
  }

  /** Empties the window without moving its cursors (after a failure, before they are closed). */
  public void clear() {
    cursors.clear();
    size = 0;
  }

  private ColumnBuilder buffer(TensorSpec kind, int slot) {
    ColumnBuilder[] pair = buffers.computeIfAbsent(kind, k -> new ColumnBuilder[2]);
    if (pair[slot] == null) {
      pair[slot] = new ColumnBuilder(kind, capacity, pool);
    }
    return pair[slot];
  }

  private void checkOpen() {
    if (closed) {
      throw new IllegalStateException("column window of " + name + " is closed");
    }
  }

  /** Returns the buffers to the pool; idempotent. The cursors are not closed. */
  @Override
  public void close() {
    if (!closed) {
      closed = true;
      cursors.clear();
      for (ColumnBuilder[] pair : buffers.values()) {
        for (ColumnBuilder b : pair) {
          if (b != null) {
            b.release();
          }
        }
      }
      buffers.clear();
    }
  }

  @Override
  public String toString() {
    return "ColumnWindow(" + name + ", " + size + " of " + capacity + " rows)";
  }
}
