package dev.sluice.core.spi;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * The buffers of a {@link ColumnBuilder} or {@link ColumnBuffers}: pooled (counted in the bytes
 * {@code held} by the batch or column being built) or heap, replaced by bigger ones as the column
 * grows, each returned to its pool at most once. Static, so that building a column allocates
 * nothing beyond its buffers.
 */
final class ColumnMemory {
  private ColumnMemory() {}

  /** A pooled or heap buffer that may be replaced by a bigger one. */
  static final class Buf {
    PooledBuffer pooled;
    ByteBuffer buf;
    long size;
  }

  /**
   * A buffer of {@code bytes} bytes from {@code pool} (counted in {@code held[0]}), or from the heap
   * when {@code pool} is null.
   */
  static Buf allocate(BufferPool pool, long[] held, long bytes) {
    Buf b = new Buf();
    if (pool != null) {
      b.pooled = pool.allocate(bytes, held[0]);
      b.buf = b.pooled.buffer();
      held[0] += b.buf.capacity();
    } else {
      b.buf = ByteBuffer.allocate(Math.toIntExact(bytes)).order(ByteOrder.LITTLE_ENDIAN);
    }
    b.size = bytes;
    return b;
  }

  /**
   * Replaces {@code b}'s memory by at least {@code bytes} bytes, keeping its first {@code keep} bytes.
   *
   * @param field the field, for the message when a batch would need more than 2 GiB
   * @param what what the buffer holds, for that message
   */
  static void grow(BufferPool pool, long[] held, String field, Buf b, long bytes, long keep, String what) {
    long size = Math.max(bytes, b.size * 2);
    if (size > Integer.MAX_VALUE - 8) {
      size = bytes;
    }
    if (size > Integer.MAX_VALUE - 8) {
      throw new IllegalStateException("field '" + field + "': more than 2 GiB of " + what
          + " in one batch; use a smaller batch size");
    }
    Buf bigger = allocate(pool, held, size);
    bigger.buf.put(0, b.buf, 0, (int) keep);
    release(held, b);
    b.pooled = bigger.pooled;
    b.buf = bigger.buf;
    b.size = bigger.size;
  }

  /** Adds {@code b}'s pooled buffer to {@code out} (a null or heap buffer: nothing). */
  static void addPooled(java.util.List<PooledBuffer> out, Buf b) {
    if (b != null && b.pooled != null) {
      out.add(b.pooled);
    }
  }

  /** Returns {@code b}'s pooled memory (a null or heap buffer: nothing); at most once. */
  static void release(long[] held, Buf b) {
    if (b != null && b.pooled != null) {
      held[0] -= b.buf.capacity();
      b.pooled.close();
      b.pooled = null;
    }
  }
}
