package dev.sluice.core.spi;

import dev.sluice.core.Column;
import dev.sluice.core.Tensor;
import dev.sluice.core.TensorSpec;
import dev.sluice.core.internal.CoreAccess;
import dev.sluice.core.spi.ColumnMemory.Buf;
import java.nio.ByteBuffer;
import java.util.Objects;

/**
 * The buffers of one column that a source writes itself and wraps as the column's tensors (the
 * Arrow reader's converted buffers: null flags, widened offsets, converted values), where the
 * {@link ColumnBuilder} would append item by item.
 *
 * <p>Each buffer is allocated by its first request and only then: a column whose values stay views
 * of a file but whose null flags are converted holds flags and nothing else. The buffers are
 * pooled memory from the given pool, or heap memory ({@link #onHeap}). A source builds the column
 * from views of them ({@link Column#of}); the views stay valid until {@link #close()}, which gives
 * the pooled buffers back, so the owner of the built column closes these buffers when it releases
 * the column. Not thread-safe.
 */
public final class ColumnBuffers implements AutoCloseable {
  private static final CoreAccess CORE = CoreAccess.get();

  private final TensorSpec spec;
  private final int capacity;
  private final BufferPool pool; // null: heap memory
  private final long[] held = new long[1]; // bytes (size classes) of the pooled buffers this column holds
  private final int ragged;
  private final ColumnValidity nulls;
  private final Buf[] offsets; // per level, null until asked for
  private Buf values; // null until asked for
  private boolean closed;

  private ColumnBuffers(TensorSpec spec, int capacity, BufferPool pool) {
    if (capacity <= 0) {
      throw new IllegalArgumentException("capacity > 0 required but it was " + capacity);
    }
    this.spec = spec;
    this.capacity = capacity;
    this.pool = pool;
    this.ragged = spec.raggedRank();
    this.offsets = new Buf[spec.isFixedLength() ? 0 : ragged + (spec.dtype().isVariableLength() ? 1 : 0)];
    this.nulls = new ColumnValidity(pool, held, spec.name(), capacity, ragged + 1);
  }

  /**
   * The buffers of a column of {@code spec} with at most {@code capacity} rows, allocated from
   * {@code pool} as they are asked for and given back by {@link #close()}.
   *
   * @param capacity rows, &gt; 0
   */
  public static ColumnBuffers create(TensorSpec spec, int capacity, BufferPool pool) {
    return new ColumnBuffers(Objects.requireNonNull(spec, "spec"), capacity, Objects.requireNonNull(pool, "pool"));
  }

  /**
   * The buffers of a column of {@code spec} with at most {@code capacity} rows in heap memory, which
   * the garbage collector frees: for columns kept beyond the batches of a pass (decoded dictionary
   * values, a record batch decoded for random access). Closing them releases nothing.
   *
   * @param capacity rows, &gt; 0
   */
  public static ColumnBuffers onHeap(TensorSpec spec, int capacity) {
    return new ColumnBuffers(Objects.requireNonNull(spec, "spec"), capacity, null);
  }

  /** The field the column holds. */
  public TensorSpec spec() {
    return spec;
  }

  /** Rows the column can hold. */
  public int capacity() {
    return capacity;
  }

  /**
   * The null flags of the first {@code count} items at {@code depth}: one byte per item, 1 (valid)
   * until the source writes 0 for a null item, whose value it leaves zero or empty. Little-endian,
   * position 0, limit {@code count}; a later call for the same depth and count returns the same
   * flags, and {@link #validity} wraps them.
   *
   * @param depth in {@code [0, raggedRank]}: 0 the rows, {@code j > 0} the elements of list level {@code j - 1}
   * @param count items at that depth, &gt; 0 (rows: at most the capacity)
   * @throws IllegalArgumentException if the depth or the count is out of range
   */
  public ByteBuffer validityBuffer(int depth, int count) {
    checkOpen();
    if (depth < 0 || depth > ragged) {
      throw new IllegalArgumentException("field '" + spec.name() + "' " + spec + " has depths [0, " + ragged
          + "] but validityBuffer got " + depth);
    }
    if (count <= 0 || depth == 0 && count > capacity || count > Integer.MAX_VALUE - 8) {
      throw new IllegalArgumentException("field '" + spec.name() + "' of capacity " + capacity
          + ": validityBuffer needs a count in [1, " + (depth == 0 ? capacity : Integer.MAX_VALUE - 8) + "] but got "
          + count);
    }
    Tensor t = nulls.build(depth, count);
    if (t == null) {
      nulls.markNull(depth, count - 1); // creates the depth's flags, all valid below it
      t = nulls.build(depth, count);
      CORE.rawData(t).put(count - 1, (byte) 1);
    }
    return CORE.rawData(t);
  }

  /**
   * The null flags of the first {@code count} items at {@code depth} (1 valid, 0 null) as a bool
   * tensor, or null when no {@link #validityBuffer} of that depth was asked for: a view of this
   * column's memory, in which later writes to the flags of those items show.
   *
   * @param depth in {@code [0, raggedRank]}
   * @param count items at that depth, &gt;= 0
   * @throws IllegalArgumentException if the depth or the count is out of range
   */
  public Tensor validity(int depth, int count) {
    checkOpen();
    if (depth < 0 || depth > ragged || count < 0) {
      throw new IllegalArgumentException("field '" + spec.name() + "' " + spec + ": validity(" + depth + ", "
          + count + ") needs a depth in [0, " + ragged + "] and a count >= 0");
    }
    return nulls.build(depth, count);
  }

  /**
   * The int64 offsets buffer of list level {@code level} of a variable-length field (the last level
   * of a string or bytes field holds the byte offsets), allocated or grown to hold at least
   * {@code items + 1} offsets: the source writes the offsets itself and wraps the first
   * {@code items + 1} of them as the level's offsets. Little-endian; its contents are unspecified
   * until written; the buffer moves (without its contents) when a later call grows it.
   *
   * @param level in {@code [0, raggedRank)}, or up to {@code raggedRank} for strings and bytes
   * @param items the items at that level, &gt;= 0
   * @throws IllegalArgumentException if the field has no such level or the offsets do not fit one buffer
   */
  public ByteBuffer offsetsBuffer(int level, long items) {
    checkOpen();
    if (level < 0 || level >= offsets.length) {
      throw new IllegalArgumentException("field '" + spec.name() + "' " + spec + " has " + offsets.length
          + " offsets level(s) but offsetsBuffer got " + level);
    }
    if (items < 0 || items > (Integer.MAX_VALUE - 8) / 8 - 1) {
      throw new IllegalArgumentException("field '" + spec.name() + "': " + items + " items at list level " + level
          + " do not fit one offsets buffer");
    }
    offsets[level] = sized(offsets[level], (items + 1) * 8, "offsets");
    return offsets[level].buf;
  }

  /**
   * The buffer of the column's values, allocated or grown to hold at least {@code bytes} bytes:
   * the rows of a fixed-length field ({@code rowBytes} each, at most {@code capacity × rowBytes} in
   * all), else the innermost values (a string or bytes field's bytes). Little-endian; its contents
   * are unspecified until written; the buffer moves (without its contents) when a later call grows it.
   *
   * @param bytes &gt;= 0
   * @throws IllegalArgumentException if the bytes do not fit the field or one buffer
   */
  public ByteBuffer valuesBuffer(long bytes) {
    checkOpen();
    long max = Integer.MAX_VALUE - 8;
    if (spec.isFixedLength() && spec.rowBytes() <= max / capacity) {
      max = spec.rowBytes() * capacity;
    }
    if (bytes < 0 || bytes > max) {
      throw new IllegalArgumentException("field '" + spec.name() + "' " + spec + " of capacity " + capacity
          + ": valuesBuffer needs bytes in [0, " + max + "] but got " + bytes);
    }
    values = sized(values, bytes, "values");
    return values.buf;
  }

  /** {@code b}, or a new buffer in its place when it is null or smaller than {@code bytes}. */
  private Buf sized(Buf b, long bytes, String what) {
    if (b == null) {
      return ColumnMemory.allocate(pool, held, bytes);
    }
    if (bytes > b.size) {
      ColumnMemory.grow(pool, held, spec.name(), b, bytes, 0, what);
    }
    return b;
  }

  private void checkOpen() {
    if (closed) {
      throw new IllegalStateException("the buffers of field '" + spec.name() + "' are already closed");
    }
  }

  /** Gives the pooled buffers back (the views of them are then invalid); idempotent. */
  @Override
  public void close() {
    if (!closed) {
      closed = true;
      ColumnMemory.release(held, values);
      for (Buf b : offsets) {
        ColumnMemory.release(held, b);
      }
      nulls.release();
    }
  }

  @Override
  public String toString() {
    return "ColumnBuffers(" + spec + ", capacity=" + capacity + ")";
  }
}
