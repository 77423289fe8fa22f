package dev.sluice.core;

import dev.sluice.core.internal.CoreAccess;
import dev.sluice.core.internal.SpiAccess;
import dev.sluice.core.spi.BufferPool;
import dev.sluice.core.spi.WaitCancellation;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;

/**
 * Hands out pooled off-heap buffers per stage, accounts for them, and keeps them within a limit.
 *
 * <p>Each pipeline stage that allocates (batch, gather, decode) takes its own named {@link BufferPool}
 * ({@link #pool(String)}); {@link #outstandingBytes()} and {@link #outstandingBytesByStage()} report
 * what has been handed out and not yet returned, so a test can assert that a pipeline released
 * everything after complete, error and cancel. Freed buffers are kept for reuse up to a per-pool
 * budget: fresh off-heap memory costs a page fault per 4 KiB on first touch, reused memory does not.
 *
 * <p><b>Limit.</b> {@link #setLimit(long)} bounds {@link #reservedBytes()}: the off-heap memory the
 * manager holds, that is the buffers handed out (each counted at its size class, the power of two
 * at or above the bytes asked for, at least 4 KiB) plus the freed buffers kept for reuse. Kept
 * buffers never push an allocation over the limit: they are dropped first. An allocation that
 * would exceed the limit waits for memory to come back, which is how a pipeline is backpressured
 * by its memory (the producer thread waits, the consumer goes on closing batches); it fails with a
 * {@link MemoryLimitException} naming the stages that hold memory when a single buffer is larger
 * than the limit (at once) or when nothing came back within {@link #maxWait()} (a consumer that
 * holds every batch while it asks for the next one would otherwise wait forever). A wait ends
 * the same way, without an interrupt, when the pass the allocation works for is cancelled or closed.
 * Unlimited by default. {@link #highWaterMark()} is the most {@link #reservedBytes()} has been.
 *
 * <p>Thread-safe. Most code uses {@link #shared()}; tests may create their own manager.
 */
public final class MemoryManager {
  static { // first: a pool made while this class initializes finds the accessor
    CoreAccess.register(new CoreAccessImpl());
  }

  /** Default bytes each pool keeps for reuse. */
  public static final long DEFAULT_RETAINED_BYTES_PER_POOL = 256L << 20;
  /** The limit of a manager without one. */
  public static final long UNLIMITED = Long.MAX_VALUE;
  /** Default of {@link #maxWait()}. */
  public static final Duration DEFAULT_MAX_WAIT = Duration.ofSeconds(60);

  private static final MemoryManager SHARED = new MemoryManager(DEFAULT_RETAINED_BYTES_PER_POOL);

  private final MemoryManager root; // this, or the manager a scope allocates from
  private final String scopeName; // null for a manager of its own
  private final long retainedBytesPerPool;
  private final Map<String, BufferPool> pools = new ConcurrentHashMap<>();

  // the limit and the memory held: used on the root only
  private volatile long limit = UNLIMITED;
  private volatile long maxWaitNanos = DEFAULT_MAX_WAIT.toNanos();
  private final AtomicLong reserved = new AtomicLong();
  private final AtomicLong highWater = new AtomicLong();
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition changed = lock.newCondition();
  private volatile int waiters;
  private final AtomicLong handedOut = new AtomicLong(); // size classes of the buffers handed out
  private final AtomicLong waitingInProgress = new AtomicLong(); // of those, held by batches whose allocation waits

  /** A manager whose pools keep at most {@code retainedBytesPerPool} freed bytes for reuse. */
  public MemoryManager(long retainedBytesPerPool) {
    if (retainedBytesPerPool < 0) {
      throw new IllegalArgumentException("retainedBytesPerPool >= 0 required but it was " + retainedBytesPerPool);
    }
    this.root = this;
    this.scopeName = null;
    this.retainedBytesPerPool = retainedBytesPerPool;
  }

  /** A manager whose pools keep at most {@link #DEFAULT_RETAINED_BYTES_PER_POOL} freed bytes each. */
  public MemoryManager() {
    this(DEFAULT_RETAINED_BYTES_PER_POOL);
  }

  private MemoryManager(MemoryManager root, String scopeName) {
    this.root = root;
    this.scopeName = scopeName;
    this.retainedBytesPerPool = root.retainedBytesPerPool;
  }

  /** The process-wide manager used by pipelines unless {@link Options} names another. */
  public static MemoryManager shared() {
    return SHARED;
  }

  /**
   * A scope of this manager: its pools take their buffers from this manager's pools (reuse, limit
   * and accounting included) and it also counts, on its own, what it handed out. One pass of a
   * pipeline allocates through a scope so that its consumer can tell when the pass gave back what
   * it held.
   */
  MemoryManager newScope(String name) {
    return new MemoryManager(root, name);
  }

  /** The pool of stage {@code stage}, created on first use. */
  public BufferPool pool(String stage) {
    BufferPool p = pools.get(stage);
    if (p != null) {
      return p;
    }
    return pools.computeIfAbsent(stage, s -> root == this
        ? SpiAccess.get().newPool(s, this, null, retainedBytesPerPool)
        : SpiAccess.get().newPool(s, this, root.pool(s), 0));
  }

  /** Bytes handed out by every pool and not yet returned. */
  public long outstandingBytes() {
    long n = 0;
    for (BufferPool p : pools.values()) {
      n += p.outstandingBytes();
    }
    return n;
  }

  /**
   * Bytes of fresh off-heap memory the pools of this manager have ever allocated (reuse of a kept
   * buffer does not count). With no retention ({@code new MemoryManager(0)}) every allocation counts,
   * so a test can tell whether anything allocated from the manager after a given moment.
   */
  public long allocatedBytesTotal() {
    long n = 0;
    for (BufferPool p : pools.values()) {
      n += p.allocatedBytesTotal();
    }
    return n;
  }

  /** Outstanding bytes per stage, for the stages that have any. */
  public Map<String, Long> outstandingBytesByStage() {
    Map<String, Long> out = new TreeMap<>();
    for (BufferPool p : pools.values()) {
      long n = p.outstandingBytes();
      if (n != 0) {
        out.put(p.stage(), n);
      }
    }
    return out;
  }

  /**
   * Throws when any stage has bytes outstanding, naming the stages and their bytes.
   *
   * @throws IllegalStateException if memory is still handed out
   */
  public void checkNoOutstanding() {
    Map<String, Long> out = outstandingBytesByStage();
    if (!out.isEmpty()) {
      throw new IllegalStateException("off-heap memory still outstanding (bytes per stage): " + out);
    }
  }

  /**
   * Waits until no stage has bytes outstanding, for at most {@code timeout}; throws naming the
   * stages that still hold memory when the time runs out. A cancelled pass releases what its
   * subscriber's thread holds before {@code cancel()} returns, but a batch that a worker thread
   * (a {@code prefetch}, a parallel {@code map} or {@code batch}) is building at that moment is
   * released by that thread when its step ends: a test asserts zero after a cancel with this
   * method rather than {@link #checkNoOutstanding()}.
   *
   * <pre>{@code
   * StepVerifier.create(pipeline.flux(ctx), 0).thenRequest(1).expectNextCount(1).thenCancel().verify();
   * MemoryManager.shared().awaitNoOutstanding(Duration.ofSeconds(10));
   * }</pre>
   *
   * <p>The wait polls, pausing from 10 microseconds up to 1 millisecond between looks; it does
   * not depend on the batches being closed by the garbage collector.
   *
   * @param timeout how long to wait at most; zero checks once
   * @throws IllegalStateException naming the stages and their outstanding bytes when memory is
   *     still handed out after {@code timeout}
   * @throws IllegalArgumentException when {@code timeout} is negative
   */
  public void awaitNoOutstanding(Duration timeout) {
    if (timeout.isNegative()) {
      throw new IllegalArgumentException("timeout >= 0 required but it was " + timeout);
    }
    long wait = timeout.compareTo(Duration.ofDays(1000)) > 0 ? Long.MAX_VALUE / 4 : timeout.toNanos();
    long deadline = System.nanoTime() + wait;
    long pause = 10_000;
    while (outstandingBytes() != 0) {
      long left = deadline - System.nanoTime();
      if (left <= 0) {
        Map<String, Long> out = outstandingBytesByStage();
        if (out.isEmpty()) {
          return;
        }
        throw new IllegalStateException("off-heap memory still outstanding after " + timeout.toMillis()
            + " ms (bytes per stage): " + out);
      }
      LockSupport.parkNanos(Math.min(pause, left));
      pause = Math.min(pause * 2, 1_000_000);
    }
  }

  /** Drops every buffer kept for reuse (outstanding buffers are unaffected). */
  public void trim() {
    root.pools.values().forEach(BufferPool::trim);
  }

  /** The limit on {@link #reservedBytes()} in bytes; {@link #UNLIMITED} when there is none. */
  public long limit() {
    return root.limit;
  }

  /**
   * Limits the off-heap memory this manager holds (see the class description). Buffers kept for
   * reuse beyond the new limit are dropped; if more than the limit is handed out, allocations wait
   * until enough comes back.
   *
   * @param bytes &gt; 0, or {@link #UNLIMITED}
   */
  public void setLimit(long bytes) {
    if (bytes <= 0) {
      throw new IllegalArgumentException("memory limit > 0 required but it was " + bytes);
    }
    checkRoot("setLimit");
    limit = bytes;
    trimFor(0); // kept buffers never count against a pipeline
    signal();
  }

  /** How long an allocation waits for memory to come back before it fails. */
  public Duration maxWait() {
    return Duration.ofNanos(root.maxWaitNanos);
  }

  /**
   * Sets how long an allocation over the limit waits for memory to come back before it fails
   * (default {@link #DEFAULT_MAX_WAIT}).
   *
   * @param wait &ge; 0
   */
  public void setMaxWait(Duration wait) {
    Objects.requireNonNull(wait, "wait");
    if (wait.isNegative()) {
      throw new IllegalArgumentException("maxWait >= 0 required but it was " + wait);
    }
    checkRoot("setMaxWait");
    maxWaitNanos = wait.toNanos();
  }

  /**
   * The off-heap bytes this manager holds: buffers handed out, each at its size class, plus the
   * buffers kept for reuse. This is what the limit bounds.
   */
  public long reservedBytes() {
    return root.reserved.get();
  }

  /** The most {@link #reservedBytes()} has been since the manager was made or {@link #resetHighWaterMark()}. */
  public long highWaterMark() {
    return root.highWater.get();
  }

  /** Starts the high-water mark again from what is held now. */
  public void resetHighWaterMark() {
    root.highWater.set(root.reserved.get());
  }

  private void checkRoot(String what) {
    if (root != this) {
      throw new UnsupportedOperationException(what + " on a scope of a memory manager; set it on the manager");
    }
  }

  // ---- the root's reservation, used by its pools ----

  /**
   * A buffer of size class {@code sizeClass} for a pool of stage {@code stage} asking for
   * {@code asked} bytes: one the pool keeps ({@code shelf.take()}), or fresh memory within the limit
   * ({@code shelf.fresh()}, after dropping kept buffers of any pool to make room), waiting for memory
   * to come back when neither is possible. {@code inProgress}: bytes the asking batch already holds
   * (see {@link #nothingComesBack}). The wait ends with a {@link MemoryLimitException} when nothing
   * comes back in time, when nothing can come back, on an interrupt (the flag is restored) or when
   * the pass this allocation works for is cancelled ({@link WaitCancellation#current()}).
   */
  ByteBuffer acquire(String stage, long asked, int sizeClass, long inProgress, CoreAccess.Shelf shelf) {
    if (sizeClass > limit()) {
      throw tooLarge(stage, asked, sizeClass);
    }
    long deadline = 0;
    for (;;) {
      handedOut(sizeClass); // counted before it is taken: a waiter never sees too little handed out
      ByteBuffer b = shelf.take();
      if (b != null) {
        return b;
      }
      if (tryReserve(sizeClass)) {
        try {
          return shelf.fresh();
        } catch (RuntimeException | Error e) {
          handedOut(-sizeClass);
          unreserve(sizeClass);
          throw e;
        }
      }
      handedOut(-sizeClass);
      if (trimFor(sizeClass)) {
        continue;
      }
      if (deadline == 0) {
        deadline = System.nanoTime() + maxWaitNanos();
      }
      boolean ready;
      beginWait(inProgress);
      try {
        ready = await(() -> shelf.holdsAny() || fits(sizeClass) || keepsBuffers() || nothingComesBack(), deadline,
            WaitCancellation.current());
        if (nothingComesBack() && !shelf.holdsAny() && !fits(sizeClass) && !keepsBuffers()) {
          throw deadlocked(stage, asked, sizeClass, inProgress);
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw limitReached(stage, asked, sizeClass, e);
      } catch (CancellationException e) {
        throw limitReached(stage, asked, sizeClass, e); // the pass was cancelled: no interrupt to restore
      } finally {
        endWait(inProgress);
      }
      if (!ready) {
        throw limitReached(stage, asked, sizeClass, null);
      }
    }
  }

  /**
   * A buffer of size class {@code sizeClass} came back to its pool, which {@code kept} it for reuse
   * or gave its memory up.
   */
  void returned(int sizeClass, boolean kept) {
    handedOut(-sizeClass);
    if (kept) {
      signal();
    } else {
      unreserve(sizeClass);
    }
  }

  /** Reserves {@code bytes} of fresh memory if the limit allows. */
  private boolean tryReserve(long bytes) {
    for (;;) {
      long r = reserved.get();
      if (bytes > limit - r) {
        return false;
      }
      if (reserved.compareAndSet(r, r + bytes)) {
        long peak = r + bytes;
        for (long h = highWater.get(); h < peak && !highWater.compareAndSet(h, peak); h = highWater.get()) {
          // retry
        }
        return true;
      }
    }
  }

  /** {@code bytes} of memory were given up (dropped, not kept for reuse). */
  void unreserve(long bytes) {
    reserved.addAndGet(-bytes);
    signal();
  }

  /** True when {@code bytes} more would fit now. */
  private boolean fits(long bytes) {
    return bytes <= limit - reserved.get();
  }

  /** True when some pool keeps a freed buffer that could be dropped to make room. */
  private boolean keepsBuffers() {
    for (BufferPool p : pools.values()) {
      if (p.retainedBytes() > 0) {
        return true;
      }
    }
    return false;
  }

  /** Drops kept buffers until {@code bytes} more fit; true when any was dropped. */
  private boolean trimFor(long bytes) {
    boolean any = false;
    for (BufferPool p : pools.values()) {
      while (!fits(bytes)) {
        if (!SpiAccess.get().dropOneRetained(p)) {
          break;
        }
        any = true;
      }
      if (fits(bytes)) {
        break;
      }
    }
    return any;
  }

  /** {@code bytes} (a size class, negative when it comes back) more are handed out. */
  private void handedOut(long bytes) {
    handedOut.addAndGet(bytes);
  }

  /**
   * An allocation begins to wait while its batch holds {@code inProgress} bytes: every waiter looks
   * again whether anything can still come back.
   */
  private void beginWait(long inProgress) {
    waitingInProgress.addAndGet(inProgress);
    signal();
  }

  /** The wait {@link #beginWait} began is over. */
  private void endWait(long inProgress) {
    waitingInProgress.addAndGet(-inProgress);
  }

  /**
   * True when every buffer handed out belongs to a batch being built whose allocation waits: none of
   * them can come back, so waiting longer cannot help.
   */
  private boolean nothingComesBack() {
    return handedOut.get() <= waitingInProgress.get();
  }

  private MemoryLimitException deadlocked(String stage, long asked, long sizeClass, long inProgress) {
    Map<String, Long> held = root.outstandingBytesByStage();
    return new MemoryLimitException("memory limit of " + bytes(limit) + " reached: stage '" + stage + "' needs "
        + bytes(sizeClass) + " more for a batch that already holds " + bytes(inProgress) + ", and every buffer handed "
        + "out (per stage: " + describe(held) + ") belongs to a batch still being built, so none can come back: "
        + "raise the limit or make the batches smaller", limit, sizeClass, held, null);
  }

  /** Wakes whoever waits for memory; called when a buffer comes back or the limit changes. */
  void signal() {
    MemoryManager r = root;
    if (r.waiters > 0) {
      r.lock.lock();
      try {
        r.changed.signalAll();
      } finally {
        r.lock.unlock();
      }
    }
  }

  /**
   * Parks until {@code done} is true (re-checked whenever memory comes back) or the deadline
   * passes; returns whether {@code done} became true.
   */
  boolean await(BooleanSupplier done, long deadlineNanos) throws InterruptedException {
    return await(done, deadlineNanos, null);
  }

  /**
   * {@link #await(BooleanSupplier, long)} that also ends when {@code cancel} (null: none) is
   * cancelled, by throwing {@link CancellationException}: a cancelled pass ends its producer's wait
   * for memory without interrupting its thread.
   */
  boolean await(BooleanSupplier done, long deadlineNanos, WaitCancellation cancel) throws InterruptedException {
    MemoryManager r = root;
    r.lock.lock();
    try {
      r.waiters++; // under the lock; volatile, so a releaser that misses it is seen by the check below
      if (cancel != null) {
        cancel.beginWait(() -> {
          r.lock.lock();
          try {
            r.changed.signalAll();
          } finally {
            r.lock.unlock();
          }
        });
      }
      try {
        while (!done.getAsBoolean()) {
          if (cancel != null) {
            cancel.throwIfCancelled();
          }
          long left = deadlineNanos - System.nanoTime();
          if (left <= 0) {
            return false;
          }
          r.changed.awaitNanos(left);
        }
        return true;
      } finally {
        if (cancel != null) {
          cancel.endWait();
        }
        r.waiters--;
      }
    } finally {
      r.lock.unlock();
    }
  }

  private long maxWaitNanos() {
    return root.maxWaitNanos;
  }

  /**
   * Fails when {@code total} bytes, what {@code what} needs at once for one batch of {@code rows}
   * rows ({@code parts}: bytes per field), can never be held under the limit.
   */
  void checkCanHold(String what, long rows, long total, Map<String, Long> parts) {
    long max = root.limit;
    if (total > max) {
      throw new MemoryLimitException(what + ": one batch of " + rows + " rows needs " + bytes(total)
          + " of buffers at once (" + brief(parts) + "; each buffer counts at its size class, at least 4 KiB) but the "
          + "memory limit is " + bytes(max) + ": raise the limit or make the batches smaller",
          max, total, root.outstandingBytesByStage(), null);
    }
  }

  private MemoryLimitException tooLarge(String stage, long asked, long sizeClass) {
    return new MemoryLimitException("stage '" + stage + "' asked for " + bytes(asked)
        + (sizeClass != asked ? " (a buffer of " + bytes(sizeClass) + ")" : "") + " but the memory limit is "
        + bytes(limit) + ": no single buffer can be larger than the limit; raise the limit or make the batches smaller",
        limit, sizeClass, root.outstandingBytesByStage(), null);
  }

  private MemoryLimitException limitReached(String stage, long asked, long sizeClass, Throwable cause) {
    Map<String, Long> held = root.outstandingBytesByStage();
    String why = cause instanceof InterruptedException
        ? "the thread was interrupted while it waited for memory to come back"
        : cause instanceof CancellationException ? "the pass was cancelled while it waited for memory to come back"
        : "nothing came back within " + seconds(maxWaitNanos);
    return new MemoryLimitException("memory limit of " + bytes(limit) + " reached: stage '" + stage + "' needs "
        + bytes(sizeClass) + " more while " + bytes(reserved.get()) + " are held (handed out per stage: "
        + describe(held) + "), and " + why + ". Close batches sooner, hold fewer ahead (prefetch, parallel "
        + "calls, shuffle buffers) or raise the limit", limit, sizeClass, held, cause);
  }

  private static String describe(Map<String, Long> byStage) {
    if (byStage.isEmpty()) {
      return "none";
    }
    StringBuilder sb = new StringBuilder();
    byStage.forEach((stage, n) -> sb.append(sb.length() == 0 ? "" : ", ").append(stage).append(' ').append(bytes(n)));
    return sb.toString();
  }

  /** {@code x 64.0 KiB, label 8.0 KiB}. */
  private static String brief(Map<String, Long> parts) {
    StringBuilder sb = new StringBuilder();
    parts.forEach((part, n) -> {
      String b = bytes(n);
      int paren = b.indexOf(" (");
      sb.append(sb.length() == 0 ? "" : ", ").append(part).append(' ').append(paren > 0 ? b.substring(0, paren) : b);
    });
    return sb.toString();
  }

  private static String seconds(long nanos) {
    return String.format(Locale.ROOT, "%.3g s", nanos / 1e9);
  }

  /** {@code 64.0 MiB (67108864 bytes)}. */
  static String bytes(long n) {
    String[] units = {"KiB", "MiB", "GiB", "TiB"};
    double v = n;
    int u = -1;
    while (v >= 1024 && u < units.length - 1) {
      v /= 1024;
      u++;
    }
    return u < 0 ? n + " bytes" : String.format(Locale.ROOT, "%.1f %s (%d bytes)", v, units[u], n);
  }

  @Override
  public String toString() {
    return scopeName != null ? "MemoryManager[scope " + scopeName + "]"
        : "MemoryManager[reserved=" + reserved.get() + (limit != UNLIMITED ? ", limit=" + limit : "") + "]";
  }


}
