package dev.sluice.core.spi;

import dev.sluice.core.MemoryLimitException;
import dev.sluice.core.MemoryManager;
import dev.sluice.core.internal.CoreAccess;
import dev.sluice.core.internal.SpiAccess;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The pooled off-heap buffers of one stage. Buffers come in power-of-two size classes (at least
 * 4 KiB); a closed {@link PooledBuffer} goes back to its class's free list while the pool keeps less
 * than its retention budget, else it is left to the GC. An allocation stays within its
 * {@link MemoryManager}'s limit: it reuses a kept buffer, drops kept buffers to make room, or waits
 * for memory to come back (see {@link MemoryManager}). Thread-safe.
 */
public final class BufferPool {
  static { // first: the accessor is there before anything else of this class runs
    SpiAccess.register(new SpiAccessImpl());
  }

  private static final CoreAccess CORE = CoreAccess.get();
  private static final int MIN_CLASS = 12; // 4 KiB
  private static final int MAX_CLASS = 30; // 1 GiB; a direct ByteBuffer holds < 2 GiB
  /** The largest buffer a pool hands out. */
  static final long MAX_BUFFER_BYTES = 1L << MAX_CLASS;

  private final String stage;
  private final MemoryManager manager;
  private final BufferPool parent; // a scope's pool: the manager's pool that holds the buffers
  private final long retainBudget;
  @SuppressWarnings("unchecked")
  private final ConcurrentLinkedDeque<ByteBuffer>[] free = new ConcurrentLinkedDeque[MAX_CLASS + 1];
  private final Shelf[] shelves = new Shelf[MAX_CLASS + 1];
  private final AtomicLong outstanding = new AtomicLong();
  private final AtomicLong retained = new AtomicLong();
  private final AtomicLong allocatedTotal = new AtomicLong();

  BufferPool(String stage, MemoryManager manager, BufferPool parent, long retainBudget) {
    this.stage = stage;
    this.manager = manager;
    this.parent = parent;
    this.retainBudget = retainBudget;
    for (int i = 0; i < free.length && parent == null; i++) { // a scope's pool keeps nothing itself
      free[i] = new ConcurrentLinkedDeque<>();
      shelves[i] = new Shelf(i);
    }
  }

  /** The name of the stage this pool serves ({@code "batch"}, {@code "parquet"}), used in leak reports. */
  public String stage() {
    return stage;
  }

  MemoryManager manager() {
    return manager;
  }

  /**
   * A zeroed-or-reused buffer of at least {@code bytes} bytes: little-endian, position 0, limit
   * {@code bytes}. Contents are unspecified (reused buffers are not cleared). Under a memory limit
   * this may wait for memory to come back.
   *
   * @throws MemoryLimitException if the buffer can never fit the limit, or nothing came back in time,
   *     or the pass this allocation works for was cancelled while it waited (a cancelled pass ends its
   *     producers' waits without interrupting their threads)
   */
  public PooledBuffer allocate(long bytes) {
    return allocate(bytes, 0);
  }

  /**
   * {@link #allocate(long)} for a batch being built that already holds {@code inProgress} bytes
   * (size classes) of this manager's buffers: when the allocation has to wait and every buffer
   * handed out belongs to such a batch whose allocation waits, none can come back, and it fails at
   * once instead of waiting.
   */
  PooledBuffer allocate(long bytes, long inProgress) {
    if (bytes < 0 || bytes > (1L << MAX_CLASS)) {
      throw new IllegalArgumentException(
          "stage '" + stage + "': buffer size must be in [0, " + (1L << MAX_CLASS) + "] but it was " + bytes);
    }
    int cls = sizeClass(bytes);
    ByteBuffer b = parent != null ? parent.acquire(cls, bytes, inProgress) : acquire(cls, bytes, inProgress);
    b.clear().limit((int) bytes);
    b.order(ByteOrder.LITTLE_ENDIAN);
    outstanding.addAndGet(bytes);
    if (parent != null) {
      parent.outstanding.addAndGet(bytes);
    }
    return new PooledBuffer(this, b, bytes);
  }

  /** A kept buffer of class {@code cls}, or fresh memory within the limit, waiting for it if need be. */
  private ByteBuffer acquire(int cls, long bytes, long inProgress) {
    return CORE.acquire(manager, stage, bytes, 1 << cls, inProgress, shelves[cls]);
  }

  /** The kept buffers of one size class and fresh memory of that class, as the manager takes them. */
  private final class Shelf implements CoreAccess.Shelf {
    private final int cls;

    Shelf(int cls) {
      this.cls = cls;
    }

    @Override
    public ByteBuffer take() {
      ByteBuffer b = free[cls].pollFirst();
      if (b != null) {
        retained.addAndGet(-b.capacity());
      }
      return b;
    }

    @Override
    public boolean holdsAny() {
      return !free[cls].isEmpty();
    }

    @Override
    public ByteBuffer fresh() {
      ByteBuffer b = allocateAligned(1 << cls);
      allocatedTotal.addAndGet(b.capacity());
      return b;
    }
  }

  void release(ByteBuffer b, long bytes) {
    outstanding.addAndGet(-bytes);
    if (parent != null) {
      parent.release(b, bytes);
      return;
    }
    int cap = b.capacity();
    int cls = Integer.numberOfTrailingZeros(cap);
    boolean keep = retained.get() + cap <= retainBudget;
    if (keep) {
      retained.addAndGet(cap);
      free[cls].addFirst(b);
    }
    CORE.returned(manager, cap, keep);
  }

  /** Drops one kept buffer (the largest first) to make room under the limit; false when none is kept. */
  boolean dropOneRetained() {
    for (int cls = MAX_CLASS; cls >= MIN_CLASS; cls--) {
      ByteBuffer b = free[cls].pollLast();
      if (b != null) {
        retained.addAndGet(-b.capacity());
        CORE.unreserve(manager, b.capacity());
        return true;
      }
    }
    return false;
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

  /** The bytes a buffer of {@code bytes} takes from the limit: its size class. */
  static long sizeClassBytes(long bytes) {
    return 1L << sizeClass(bytes);
  }

  private static int sizeClass(long bytes) {
    int cls = 64 - Long.numberOfLeadingZeros(Math.max(bytes, 1) - 1);
    return Math.max(cls, MIN_CLASS);
  }

  /** Bytes handed out and not yet returned (the bytes asked for, not their size classes). */
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
    if (parent != null) {
      parent.trim();
      return;
    }
    for (ConcurrentLinkedDeque<ByteBuffer> q : free) {
      ByteBuffer b;
      while ((b = q.pollFirst()) != null) {
        retained.addAndGet(-b.capacity());
        CORE.unreserve(manager, b.capacity());
      }
    }
  }

  @Override
  public String toString() {
    return "BufferPool[" + stage + ", outstanding=" + outstanding.get() + ", retained=" + retained.get() + "]";
  }
}
