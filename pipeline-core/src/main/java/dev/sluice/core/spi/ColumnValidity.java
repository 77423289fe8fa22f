package dev.sluice.core.spi;

import dev.sluice.core.DType;
import dev.sluice.core.Shape;
import dev.sluice.core.Tensor;
import dev.sluice.core.spi.ColumnMemory.Buf;
import java.util.List;

/**
 * The null flags of the column of a {@link ColumnBuilder} or {@link ColumnBuffers}, one byte per
 * item (1 valid, 0 null) at each depth ({@code 0} the rows, then each list level). A depth has no
 * flags until its first null; past the last flag written, items are valid. A fixed-length field's
 * row flags are made for the whole capacity at once. Not thread-safe.
 */
final class ColumnValidity {
  private final BufferPool pool; // null: heap memory
  private final long[] held;
  private final String field;
  private final int capacity;
  private final Buf[] flags; // per depth, null until the first null there
  private final long[] validUpTo; // per depth: flags written below this item (the rest are valid)

  ColumnValidity(BufferPool pool, long[] held, String field, int capacity, int depths) {
    this.pool = pool;
    this.held = held;
    this.field = field;
    this.capacity = capacity;
    this.flags = new Buf[depths];
    this.validUpTo = new long[depths];
  }

  /** Marks item {@code item} at {@code depth} null, the items before it without a flag valid. */
  void markNull(int depth, long item) {
    Buf v = flags[depth];
    if (v == null) {
      v = ColumnMemory.allocate(pool, held, depth == 0 ? capacity : Math.max(64, item + 1));
      flags[depth] = v;
    } else if (item + 1 > v.size) {
      ColumnMemory.grow(pool, held, field, v, Math.max(item + 1, v.size * 2), validUpTo[depth], "validity");
    }
    if (validUpTo[depth] < item) {
      RowGathers.fill(v.buf, (int) validUpTo[depth], (int) item, (byte) 1);
    }
    v.buf.put((int) item, (byte) 0);
    validUpTo[depth] = Math.max(validUpTo[depth], item + 1);
  }

  /** Marks items {@code at + p} at {@code depth} null, for each {@code p} of {@code positions} (ascending). */
  void markNulls(int depth, long at, int[] positions) {
    for (int p : positions) {
      markNull(depth, at + p);
    }
  }

  /** Marks row {@code row} of a fixed-length field null (its flags cover the whole capacity). */
  void markRowNull(int row) {
    if (flags[0] == null) {
      flags[0] = ColumnMemory.allocate(pool, held, capacity);
      RowGathers.fill(flags[0].buf, 0, capacity, (byte) 1);
      validUpTo[0] = capacity;
    }
    flags[0].buf.put(row, (byte) 0);
  }

  /** Marks rows {@code at + p} of a fixed-length field null, for each {@code p} of {@code positions}. */
  void markRowsNull(int at, int[] positions) {
    for (int p : positions) {
      markRowNull(at + p);
    }
  }

  /** Makes the rows of a fixed-length field from {@code row} on valid again. */
  void rowsValidFrom(int row) {
    if (flags[0] != null) {
      RowGathers.fill(flags[0].buf, row, capacity, (byte) 1);
    }
  }

  /** Forgets the flags of the items from {@code items} on at {@code depth} (they are being dropped). */
  void truncate(int depth, long items) {
    validUpTo[depth] = Math.min(validUpTo[depth], items);
  }

  /** Drops every flag of every depth, returning their memory. */
  void clear() {
    for (int j = 0; j < flags.length; j++) {
      ColumnMemory.release(held, flags[j]);
      flags[j] = null;
      validUpTo[j] = 0;
    }
  }

  /**
   * The flags of the first {@code count} items at {@code depth} as a bool tensor over this column's
   * memory, or null when none of them was marked null.
   */
  Tensor build(int depth, int count) {
    Buf v = flags[depth];
    if (v == null) {
      return null;
    }
    if (count > v.size) {
      ColumnMemory.grow(pool, held, field, v, count, validUpTo[depth], "validity");
    }
    if (validUpTo[depth] < count) {
      RowGathers.fill(v.buf, (int) validUpTo[depth], count, (byte) 1);
      validUpTo[depth] = count;
    }
    return Tensor.wrap(DType.BOOL, Shape.of(count), v.buf.slice(0, count));
  }

  /** Adds the pooled buffers of the flags to {@code out}. */
  void addBuffers(List<PooledBuffer> out) {
    for (Buf b : flags) {
      ColumnMemory.addPooled(out, b);
    }
  }

  /** Returns the flags' memory to the pool; each buffer at most once. */
  void release() {
    for (Buf b : flags) {
      ColumnMemory.release(held, b);
    }
  }

}
