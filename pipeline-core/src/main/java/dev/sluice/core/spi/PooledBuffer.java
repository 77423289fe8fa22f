package dev.sluice.core.spi;

import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;

/**
 * A buffer lent by a {@link BufferPool}. {@link #close()} returns it (idempotent); using
 * {@link #buffer()} after close throws.
 */
public final class PooledBuffer implements AutoCloseable {
  private final BufferPool pool;
  private final ByteBuffer buffer;
  private final long size;
  private static final AtomicIntegerFieldUpdater<PooledBuffer> CLOSED =
      AtomicIntegerFieldUpdater.newUpdater(PooledBuffer.class, "closed");

  private volatile int closed; // 0 open, 1 closed

  PooledBuffer(BufferPool pool, ByteBuffer buffer, long size) {
    this.pool = pool;
    this.buffer = buffer;
    this.size = size;
  }

  /** The buffer: little-endian, limit = {@link #size()}. Shared, not duplicated: do not keep it past close. */
  public ByteBuffer buffer() {
    if (closed != 0) {
      throw new IllegalStateException("pooled buffer of stage '" + pool.stage() + "' already closed");
    }
    return buffer;
  }

  /** The pool that lent it (the accounting pool: a pass's scope, or a manager's own pool). */
  BufferPool pool() {
    return pool;
  }

  /** The usable size in bytes (the buffer's limit); the pooled capacity behind it may be larger. */
  public long size() {
    return size;
  }

  /** True once the buffer has gone back to its pool. */
  public boolean isClosed() {
    return closed != 0;
  }

  @Override
  public void close() {
    if (CLOSED.compareAndSet(this, 0, 1)) {
      pool.release(buffer, size);
    }
  }
}
