package dev.sluice.core;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A batch of rows: one contiguous {@link Column} per field with a leading batch dimension, plus the
 * source {@link #indices()} of its rows.
 *
 * <p><b>Ownership.</b> A batch owns its memory (pooled off-heap buffers, or foreign memory with a
 * release callback) and the consumer closes it: {@code try (batch) { ... }}. {@link #close()} is
 * idempotent per holder; {@link #retain()} gives a second holder its own handle, and the memory is
 * released when every handle is closed. Column access through a closed handle throws
 * {@link IllegalStateException} naming the batch.
 */
public final class Batch implements AutoCloseable {
  private static final AtomicLong IDS = new AtomicLong();

  private final Shared shared;
  private static final AtomicIntegerFieldUpdater<Batch> CLOSED =
      AtomicIntegerFieldUpdater.newUpdater(Batch.class, "closed");

  private volatile int closed; // per handle: 0 open, 1 closed

  private Batch(Shared shared) {
    this.shared = shared;
  }

  /**
   * A batch over the given columns; {@code owner} is closed when the last handle closes.
   *
   * @param schema the fields, in column order
   * @param columns one per field of {@code schema}, each with {@code indices.length} rows
   * @param indices the source index of each row (the array is not copied; do not modify it)
   * @param owner releases the memory behind the columns
   */
  public static Batch of(Schema schema, List<Column> columns, long[] indices, AutoCloseable owner) {
    Objects.requireNonNull(owner, "owner");
    if (columns.size() != schema.size()) {
      throw new IllegalArgumentException("schema has " + schema.size() + " fields but there are " + columns.size() + " columns");
    }
    for (int i = 0; i < columns.size(); i++) {
      Column c = columns.get(i);
      if (!c.name().equals(schema.field(i).name())) {
        throw new IllegalArgumentException("column " + i + " is '" + c.name() + "' but the schema says '" + schema.field(i).name() + "'");
      }
      if (c.size() != indices.length) {
        throw new IllegalArgumentException("column '" + c.name() + "' has " + c.size() + " rows but there are " + indices.length + " indices");
      }
    }
    return new Batch(new Shared(IDS.incrementAndGet(), schema, List.copyOf(columns), indices, 0, indices.length, owner));
  }

  /**
   * A batch whose rows have the consecutive source indices {@code first, first+1, ...}: the in-order
   * batches of a random-access source, which then need no index array.
   */
  static Batch ofRange(Schema schema, List<Column> columns, long first, int size, AutoCloseable owner) {
    return new Batch(new Shared(IDS.incrementAndGet(), schema, List.copyOf(columns), null, first, size, owner));
  }

  /** A name for messages ({@code batch#17}). */
  public String name() {
    return shared.name();
  }

  /** Number of rows. */
  public int size() {
    return shared.size;
  }

  /** The fields of the rows, one column per field in this order. */
  public Schema schema() {
    return shared.schema;
  }

  /** A copy of the source indices of the rows, in row order. */
  public long[] indices() {
    return shared.indices();
  }

  /** Source index of row {@code row}. */
  public long index(int row) {
    return shared.index(row);
  }

  /** The column of field {@code name}. */
  public Column column(String name) {
    checkOpen();
    return shared.columns.get(shared.schema.indexOf(name));
  }

  /** The column at position {@code i}. */
  public Column column(int i) {
    checkOpen();
    return shared.columns.get(i);
  }

  /** Total bytes of values, offsets and validity (of every level). */
  public long byteSize() {
    checkOpen();
    long n = 0;
    for (Column c : shared.columns) {
      n += c.byteSize();
    }
    return n;
  }

  /**
   * Row {@code row} as an {@link Example} whose tensors are copies, so it owns nothing and stays
   * valid after this batch is closed.
   */
  public Example copyRow(int row) {
    checkOpen();
    Map<String, Tensor> fields = new LinkedHashMap<>();
    for (Column c : shared.columns) {
      if (!c.isValid(row)) {
        fields.put(c.name(), null);
        continue;
      }
      fields.put(c.name(), c.row(row).copy());
    }
    return Example.of(shared.index(row), fields);
  }

  /** A second handle on the same memory; each handle must be closed once. */
  public Batch retain() {
    checkOpen();
    shared.refs.incrementAndGet();
    return new Batch(shared);
  }

  /** True once this handle has been closed (other handles from {@link #retain()} may still be open). */
  public boolean isClosed() {
    return closed != 0;
  }

  /** Releases this handle; the memory goes back when the last handle closes. Idempotent. */
  @Override
  public void close() {
    if (CLOSED.compareAndSet(this, 0, 1) && shared.refs.decrementAndGet() == 0) {
      try {
        shared.owner.close();
      } catch (RuntimeException e) {
        throw e;
      } catch (Exception e) {
        throw new IllegalStateException("closing " + shared.name() + " failed", e);
      }
    }
  }

  private void checkOpen() {
    if (closed != 0) {
      throw new IllegalStateException(shared.name() + " is already closed");
    }
  }

  @Override
  public String toString() {
    return shared.name() + "{rows=" + size() + ", fields=" + shared.schema + ", indices="
        + Arrays.toString(Arrays.copyOf(shared.indices(), Math.min(8, shared.size)))
        + (shared.size > 8 ? "..." : "") + (closed != 0 ? ", closed" : "") + "}";
  }

  private static final class Shared {
    final long id; // the name is built only when a message needs it
    final Schema schema;
    final List<Column> columns;
    final long[] indices; // null: the rows are first, first + 1, ...
    final long first;
    final int size;
    final AutoCloseable owner;
    final AtomicInteger refs = new AtomicInteger(1);

    Shared(long id, Schema schema, List<Column> columns, long[] indices, long first, int size, AutoCloseable owner) {
      this.id = id;
      this.schema = schema;
      this.columns = columns;
      this.indices = indices;
      this.first = first;
      this.size = size;
      this.owner = owner;
    }

    long index(int row) {
      if (indices != null) {
        return indices[row];
      }
      Objects.checkIndex(row, size);
      return first + row;
    }

    long[] indices() {
      if (indices != null) {
        return indices.clone();
      }
      long[] a = new long[size];
      for (int i = 0; i < size; i++) {
        a[i] = first + i;
      }
      return a;
    }

    String name() {
      return "batch#" + id;
    }
  }
}
