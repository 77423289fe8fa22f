package dev.sluice.core;

import dev.sluice.core.spi.BatchBuilder;
import dev.sluice.core.spi.PooledBuffer;
import dev.sluice.core.spi.RefCount;
import java.lang.ref.Cleaner;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A batch of rows: one contiguous {@link Column} per field with a leading batch dimension, plus the
 * source {@link #indices()} of its rows.
 *
 * <p><b>Ownership.</b> A batch owns its memory (pooled off-heap buffers, or foreign memory with a
 * release callback) and the consumer closes it: {@code try (batch) { ... }}. {@link #close()} is
 * idempotent per holder; {@link #retain()} gives a second holder its own handle, and the memory is
 * released when every handle is closed. Column access through a closed handle throws
 * {@link IllegalStateException} naming the batch, and once the memory is released so does every
 * read through a {@link Column} or {@link Tensor} taken from the batch (never a silent read of
 * memory the pool handed to someone else).
 *
 * <p><b>Leaks.</b> A batch that becomes unreachable without being closed is reported through SLF4J
 * and its memory goes back to the pool ({@link LeakDetection}); closing is still the contract, since
 * until the collector finds the batch its bytes stay outstanding.
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
    check(schema, columns, indices);
    return create(schema, columns, indices, 0, indices.length, owner, null);
  }

  /**
   * A batch over columns in pooled memory: {@code buffers} go back to their pools when the last
   * handle closes. Prefer this to an owner callback for pooled memory: the batch then knows which
   * memory it holds ({@code Pipeline.iterate} accounts for it).
   *
   * @param schema the fields, in column order
   * @param columns one per field of {@code schema}, each with {@code indices.length} rows
   * @param indices the source index of each row (the array is not copied; do not modify it)
   * @param buffers the pooled buffers behind the columns, now owned by the batch
   */
  public static Batch ofPooled(Schema schema, List<Column> columns, long[] indices, List<PooledBuffer> buffers) {
    check(schema, columns, indices);
    return create(schema, columns, indices, 0, indices.length, null, buffers.toArray(new PooledBuffer[0]));
  }

  private static void check(Schema schema, List<Column> columns, long[] indices) {
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
  }

  /**
   * A batch over columns in pooled memory ({@link BatchBuilder}): {@code buffers} go back to their
   * pools when the last handle closes; {@code indices} null means the rows are {@code first,
   * first+1, ...} (the in-order batches of a random-access source, which then need no index array).
   */
  static Batch ofBuilt(Schema schema, List<Column> columns, long[] indices, long first, int size,
      PooledBuffer[] buffers) {
    return create(schema, columns, indices, first, size, null, buffers);
  }

  private static Batch create(Schema schema, List<Column> columns, long[] indices, long first, int size,
      AutoCloseable owner, PooledBuffer[] buffers) {
    long id = IDS.incrementAndGet();
    BatchMemory memory = new BatchMemory(id);
    List<Column> bound = new ArrayList<>(columns.size());
    for (Column c : columns) {
      bound.add(c.bind(memory));
    }
    BatchRelease release = new BatchRelease(id, size, schema, owner, buffers);
    Cleaner.Cleanable watch = LeakDetection.track(memory, release);
    return new Batch(new Shared(id, schema, List.copyOf(bound), indices, first, size, memory, release, watch));
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
    shared.retain();
    return new Batch(shared);
  }

  /** True once this handle has been closed (other handles from {@link #retain()} may still be open). */
  public boolean isClosed() {
    return closed != 0;
  }

  /** True once the memory went back to its pool: every handle was closed. */
  public boolean isReleased() {
    return shared.memory.isReleased();
  }

  /**
   * Releases this handle; the memory goes back when the last handle closes, and from then on the
   * columns and tensors taken from the batch throw when read. Idempotent.
   */
  @Override
  public void close() {
    if (CLOSED.compareAndSet(this, 0, 1)) {
      shared.release();
    }
  }

  /** How the memory of this batch goes back; for the iterator that accounts for what it handed out. */
  BatchRelease release() {
    return shared.release;
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

  /** What the handles of one batch share; the last handle closed returns the memory. */
  private static final class Shared extends RefCount {
    final long id; // the name is built only when a message needs it
    final Schema schema;
    final List<Column> columns;
    final long[] indices; // null: the rows are first, first + 1, ...
    final long first;
    final int size;
    final BatchMemory memory;
    final BatchRelease release;
    final Cleaner.Cleanable watch; // null when leak detection is disabled

    Shared(long id, Schema schema, List<Column> columns, long[] indices, long first, int size, BatchMemory memory,
        BatchRelease release, Cleaner.Cleanable watch) {
      this.id = id;
      this.schema = schema;
      this.columns = columns;
      this.indices = indices;
      this.first = first;
      this.size = size;
      this.memory = memory;
      this.release = release;
      this.watch = watch;
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

    @Override
    protected void onLastRelease() {
      memory.markReleased();
      release.markClosed();
      if (watch != null) {
        watch.clean(); // runs the release here, once, and stops watching
      } else {
        release.run();
      }
    }

    @Override
    public String toString() {
      return name();
    }
  }
}
