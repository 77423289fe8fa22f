package dev.sluice.core;

import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A buffer lent by a {@link BufferPool}. {@link #close()} returns it (idempotent); using
 * {@link #buffer()} after close throws.
 */
public final class PooledBuffer implements AutoCloseable {
  private final BufferPool pool;
  private final ByteBuffer buffer;
  private final long size;
  private final AtomicBoolean closed = new AtomicBoolean();

  PooledBuffer(BufferPool pool, ByteBuffer buffer, long size) {
    this.pool = pool;
    this.buffer = buffer;
    this.size = size;
  }

  /** The buffer: little-endian, limit = {@link #size()}. Shared, not duplicated: do not keep it past close. */
  public ByteBuffer buffer() {
    if (closed.get()) {
      throw new IllegalStateException("pooled buffer of stage '" + pool.stage() + "' already closed");
    }
    return buffer;
  }

  public long size() {
    return size;
  }

  public boolean isClosed() {
    return closed.get();
  }

  @Override
  public void close() {
    if (closed.compareAndSet(false, true)) {
      pool.release(buffer, size);
    }
  }
}
