package dev.sluice.io.arrow.internal;

import dev.sluice.core.TensorSpec;
import dev.sluice.core.internal.Resources;
import dev.sluice.core.spi.BufferPool;
import dev.sluice.core.spi.ColumnBuffers;
import dev.sluice.core.spi.PooledBuffer;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;

/**
 * Where decoding writes what it cannot share with the file: the column buffers that the columns'
 * converted buffers (validity flags, widened offsets, converted values) are written into, and
 * the decompressed buffers of a compressed record batch. Pooled memory owned by the batches it goes
 * into, or heap memory left to the garbage collector (the views that examples and the random-access
 * cache hold).
 */
abstract class Memory implements AutoCloseable {
  /** A zeroed-or-reused little-endian buffer of exactly {@code bytes} bytes (position 0, limit {@code bytes}). */
  abstract ByteBuffer allocate(long bytes);

  /**
   * The buffers (each allocated when first asked for) that the written buffers of a column of
   * {@code spec} with {@code rows} rows go to; this memory owns them until {@link #close()}.
   */
  abstract ColumnBuffers column(TensorSpec spec, int rows);

  /**
   * Checks that one buffer of {@code bytes} bytes can be handed out (and counts it against a
   * {@link #limited} memory's budget) before column buffers are asked for it.
   *
   * @throws TooLarge if it cannot
   */
  abstract void check(long bytes);

  /** Gives back what was allocated (pooled memory); idempotent. */
  @Override
  public abstract void close();

  /**
   * Counts {@code bytes} of working memory held outside these buffers (a list of slots) against
   * the budget of a {@link #limited} memory; nothing for the others.
   */
  void charge(long bytes) {
  }

  /**
   * {@code base}, refusing (with {@link TooLarge}) to hand out more than {@code budget} bytes in
   * all: what one record batch may decode into, so that damaged counts in its metadata cannot make
   * it allocate more than its data could ever need. Closing it closes {@code base}.
   */
  static Memory limited(Memory base, long budget) {
    return new Limited(base, budget);
  }

  /**
   * The decode budget of a record batch whose body holds {@code bodyBytes}: at least 256 MiB, and 64
   * times the body (dictionaries and bit-packed booleans expand; nothing else does by much).
   */
  static long budget(long bodyBytes) {
    return Math.max(256L << 20, bodyBytes >= Long.MAX_VALUE / 64 ? Long.MAX_VALUE : 64 * bodyBytes);
  }

  /** Heap memory: nothing to give back. */
  static Memory heap() {
    return Heap.INSTANCE;
  }

  /** Pooled memory from {@code pool}, given back by {@link #close()}. */
  static Memory pooled(BufferPool pool) {
    return new Pooled(pool);
  }

  private static void checkSize(long bytes, long max) {
    if (bytes < 0 || bytes > max) {
      throw new TooLarge("a decoded buffer of " + bytes + " bytes is larger than the " + max + " bytes one buffer holds");
    }
  }

  /** A buffer larger than the memory can hand out in one piece. */
  static final class TooLarge extends RuntimeException {
    private static final long serialVersionUID = 1L;

    TooLarge(String message) {
      super(message);
    }
  }

  private static final class Limited extends Memory {
    private final Memory base;
    private final long budget;
    private long used;

    Limited(Memory base, long budget) {
      this.base = base;
      this.budget = budget;
    }

    @Override
    synchronized void charge(long bytes) {
      if (bytes > budget - used) {
        throw new TooLarge("decoding needs more than " + budget + " bytes, more than its data can hold");
      }
      used += bytes;
    }

    @Override
    ByteBuffer allocate(long bytes) {
      charge(bytes);
      return base.allocate(bytes);
    }

    @Override
    ColumnBuffers column(TensorSpec spec, int rows) {
      return base.column(spec, rows);
    }

    @Override
    void check(long bytes) {
      charge(bytes);
      base.check(bytes);
    }

    @Override
    public void close() {
      base.close();
    }
  }

  private static final class Heap extends Memory {
    static final Heap INSTANCE = new Heap();

    @Override
    ByteBuffer allocate(long bytes) {
      checkSize(bytes, Integer.MAX_VALUE - 8);
      return ByteBuffer.allocate((int) bytes).order(ByteOrder.LITTLE_ENDIAN);
    }

    @Override
    ColumnBuffers column(TensorSpec spec, int rows) {
      return ColumnBuffers.onHeap(spec, Math.max(1, rows));
    }

    @Override
    void check(long bytes) {
      checkSize(bytes, Integer.MAX_VALUE - 8);
    }

    @Override
    public void close() {
      // the collector frees heap buffers
    }
  }

  private static final class Pooled extends Memory {
    private static final long MAX_POOLED = 1L << 30; // a pool's largest buffer

    private final BufferPool pool;
    private final List<PooledBuffer> held = new ArrayList<>();
    private final List<ColumnBuffers> columns = new ArrayList<>();
    private boolean closed;

    Pooled(BufferPool pool) {
      this.pool = pool;
    }

    @Override
    synchronized ByteBuffer allocate(long bytes) {
      checkSize(bytes, MAX_POOLED);
      if (closed) {
        throw new IllegalStateException("decode memory already released");
      }
      PooledBuffer b = pool.allocate(bytes);
      held.add(b);
      return b.buffer().order(ByteOrder.LITTLE_ENDIAN);
    }

    @Override
    synchronized ColumnBuffers column(TensorSpec spec, int rows) {
      if (closed) {
        throw new IllegalStateException("decode memory already released");
      }
      ColumnBuffers c = ColumnBuffers.create(spec, Math.max(1, rows), pool);
      columns.add(c);
      return c;
    }

    @Override
    void check(long bytes) {
      checkSize(bytes, MAX_POOLED);
    }

    @Override
    public synchronized void close() {
      if (!closed) {
        closed = true;
        try {
          Resources.closeAll(columns);
        } finally {
          columns.clear();
          Resources.closeAll(held);
          held.clear();
        }
      }
    }
  }
}
