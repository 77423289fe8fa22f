package dev.sluice.core;

import dev.sluice.core.internal.SpiAccess;
import dev.sluice.core.spi.PooledBuffer;

/**
 * Returns one batch's memory: run once, by the last {@link Batch#close()} or, for a batch collected
 * while open, by the leak detector's cleaner (which then reports the leak first). It holds what
 * release needs and a description for the report, never the batch or its {@link BatchMemory}, so
 * that watching a batch does not keep it reachable.
 */
final class BatchRelease implements Runnable {
  private final long id;
  private final int rows;
  private final Schema schema;
  private final AutoCloseable owner; // null when the batch owns pooled buffers
  private final PooledBuffer[] buffers; // null when an owner releases the memory
  private Throwable createdAt;
  private volatile boolean closed; // closed by its consumer: release without a report
  private volatile boolean done; // the memory went back

  BatchRelease(long id, int rows, Schema schema, AutoCloseable owner, PooledBuffer[] buffers) {
    this.id = id;
    this.rows = rows;
    this.schema = schema;
    this.owner = owner;
    this.buffers = buffers;
  }

  void recordCreation(Throwable where) {
    createdAt = where;
  }

  Throwable createdAt() {
    return createdAt;
  }

  /** The last handle was closed: what follows is a release, not a leak. */
  void markClosed() {
    closed = true;
  }

  /** True once the memory went back to its pool. */
  boolean isDone() {
    return done;
  }

  /**
   * Bytes this batch holds in pools of {@code manager}, 0 once released, or -1 when the batch
   * releases through an owner whose memory is not known.
   */
  long bytesIn(MemoryManager manager) {
    if (done) {
      return 0;
    }
    if (buffers == null) {
      return -1;
    }
    long n = 0;
    for (PooledBuffer b : buffers) {
      if (SpiAccess.get().manager(b) == manager && !b.isClosed()) {
        n += b.size();
      }
    }
    return n;
  }

  String describe() {
    return "batch#" + id + " (" + rows + " rows of " + schema + ")";
  }

  @Override
  public void run() {
    if (!closed) {
      try {
        LeakDetection.report(this);
      } catch (RuntimeException e) {
        // a failing logger must not keep the memory from going back
      }
    }
    try {
      if (buffers != null) {
        for (PooledBuffer b : buffers) {
          b.close();
        }
      } else {
        owner.close();
      }
    } catch (RuntimeException e) {
      throw e;
    } catch (Exception e) {
      throw new IllegalStateException("closing batch#" + id + " failed", e);
    } finally {
      done = true;
    }
  }
}
