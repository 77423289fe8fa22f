package dev.sluice.core;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The pooled off-heap buffers of one stage. Buffers come in power-of-two size classes (at least
 * 4 KiB); a closed {@link PooledBuffer} goes back to its class's free list while the pool keeps less
 * than its retention budget, else it is left to the GC. Thread-safe.
 */
public final class BufferPool {
  private static final int MIN_CLASS = 12; // 4 KiB
  private static final int MAX_CLASS = 30; // 1 GiB; a direct ByteBuffer holds < 2 GiB

  private final String stage;
  private final long retainBudget;
  @SuppressWarnings("unchecked")
  private final ConcurrentLinkedDeque<ByteBuffer>[] free = new ConcurrentLinkedDeque[MAX_CLASS + 1];
  private final AtomicLong outstanding = new AtomicLong();
  private final AtomicLong retained = new AtomicLong();
  private final AtomicLong allocatedTotal = new AtomicLong();

  BufferPool(String stage, long retainBudget) {
    this.stage = stage;
    this.retainBudget = retainBudget;
    for (int i = 0; i < free.length; i++) {
      free[i] = new ConcurrentLinkedDeque<>();
    }
  }

  /** The name of the stage this pool serves ({@code "batch"}, {@code "parquet"}), used in leak reports. */
  public String stage() {
    return stage;
  }

  /**
   * A zeroed-or-reused buffer of at least {@code bytes} bytes: little-endian, position 0, limit
   * {@code bytes}. Contents are unspecified (reused buffers are not cleared).
   */
  public PooledBuffer allocate(long bytes) {
    if (bytes < 0 || bytes > (1L << MAX_CLASS)) {
      throw new IllegalArgumentException(
          "stage '" + stage + "': buffer size must be in [0, " + (1L << MAX_CLASS) + "] but it was " + bytes);
    }
    int cls = sizeClass(bytes);
    ByteBuffer b = free[cls].pollFirst();
    if (b != null) {
      retained.addAndGet(-b.capacity());
    } else {
      b = allocateAligned(1 << cls);
      allocatedTotal.addAndGet(b.capacity());
    }
    b.clear().limit((int) bytes);
    b.order(ByteOrder.LITTLE_ENDIAN);
    outstanding.addAndGet(bytes);
    return new PooledBuffer(this, b, bytes);
  }

  void release(ByteBuffer b, long bytes) {
    outstanding.addAndGet(-bytes);
    int cls = Integer.numberOfTrailingZeros(b.capacity());
    if (retained.get() + b.capacity() <= retainBudget) {
      retained.addAndGet(b.capacity());
      free[cls].addFirst(b);
    }
  }

  /**
   * A direct buffer of exactly {@code bytes} bytes starting on a 64-byte (cache line) boundary, as
   * Arrow aligns its buffers; {@code allocateDirect} gives malloc's 16-byte alignment. Vector loads of
   * a column then never straddle two lines, and the speed of bulk copies into a batch does not
   * depend on where malloc put it.
   */
  private static ByteBuffer allocateAligned(int bytes) {
    return ByteBuffer.allocateDirect(bytes + ALIGNMENT).alignedSlice(ALIGNMENT).limit(bytes).slice();
  }

  private static final int ALIGNMENT = 64;

  private static int sizeClass(long bytes) {
    int cls = 64 - Long.numberOfLeadingZeros(Math.max(bytes, 1) - 1);
    return Math.max(cls, MIN_CLASS);
  }

  /** Bytes handed out and not yet returned. */
  public long outstandingBytes() {
    return outstanding.get();
  }

  /** Bytes kept for reuse. */
  public long retainedBytes() {
    return retained.get();
  }

  /** Bytes of fresh off-heap memory this pool has ever allocated (reuse does not count). */
  public long allocatedBytesTotal() {
    return allocatedTotal.get();
  }

  /** Drops the buffers kept for reuse. */
  public void trim() {
    for (ConcurrentLinkedDeque<ByteBuffer> q : free) {
      ByteBuffer b;
      while ((b = q.pollFirst()) != null) {
        retained.addAndGet(-b.capacity());
      }
    }
  }

  @Override
  public String toString() {
    return "BufferPool[" + stage + ", outstanding=" + outstanding.get() + ", retained=" + retained.get() + "]";
  }
}
