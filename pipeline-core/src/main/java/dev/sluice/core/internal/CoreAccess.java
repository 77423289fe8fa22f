package dev.sluice.core.internal;

import dev.sluice.core.Batch;
import dev.sluice.core.Column;
import dev.sluice.core.MemoryLimitException;
import dev.sluice.core.MemoryManager;
import dev.sluice.core.Schema;
import dev.sluice.core.Tensor;
import dev.sluice.core.spi.PooledBuffer;
import dev.sluice.core.spi.WaitCancellation;
import java.lang.invoke.MethodHandles;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;

/**
 * The members of {@code dev.sluice.core} that the column builders and buffer pools of
 * {@code dev.sluice.core.spi} call, and that users must not see (the JDK's {@code SharedSecrets}
 * pattern). {@code dev.sluice.core} registers the one implementation when {@link MemoryManager} is
 * initialized; {@link #get()} initializes it first, so the accessor is there whichever class is
 * loaded first.
 *
 * <p>Each method does what the member of the same name in {@code dev.sluice.core} does, for the
 * object given as the first argument: the methods taking a {@link MemoryManager} are the
 * reservation and wait protocol of a manager's pools, the others read a tensor's own buffers or
 * make a batch that owns pooled buffers.
 */
public abstract class CoreAccess {
  private static volatile CoreAccess access;

  /** For the implementation in {@code dev.sluice.core}. */
  protected CoreAccess() {}

  /** The accessor, after initializing the class that registers it. */
  public static CoreAccess get() {
    CoreAccess a = access;
    if (a == null) {
      try {
        MethodHandles.lookup().ensureInitialized(MemoryManager.class);
      } catch (IllegalAccessException e) {
        throw new IllegalStateException("cannot initialize " + MemoryManager.class.getName(), e);
      }
      a = access;
      if (a == null) {
        throw new IllegalStateException("dev.sluice.core registered no CoreAccess");
      }
    }
    return a;
  }

  /**
   * Registers the implementation: once, from {@code dev.sluice.core}.
   *
   * @throws IllegalStateException if one is registered already or {@code a} is not of that package
   */
  public static synchronized void register(CoreAccess a) {
    if (access != null || !a.getClass().getPackageName().equals(MemoryManager.class.getPackageName())) {
      throw new IllegalStateException("CoreAccess is registered by dev.sluice.core, once");
    }
    access = a;
  }

  // ---- a manager's reservation and wait, for its pools ----

  /** A buffer of {@code sizeClass} bytes can never fit the manager's limit. */
  public abstract MemoryLimitException tooLarge(MemoryManager m, String stage, long asked, long sizeClass);

  /** {@code bytes} (a size class, negative when it comes back) more are handed out. */
  public abstract void handedOut(MemoryManager m, long bytes);

  /** Reserves {@code bytes} of fresh memory if the limit allows. */
  public abstract boolean tryReserve(MemoryManager m, long bytes);

  /** {@code bytes} of memory were given up (dropped, not kept for reuse). */
  public abstract void unreserve(MemoryManager m, long bytes);

  /** True when {@code bytes} more would fit now. */
  public abstract boolean fits(MemoryManager m, long bytes);

  /** True when some pool keeps a freed buffer that could be dropped to make room. */
  public abstract boolean keepsBuffers(MemoryManager m);

  /** Drops kept buffers until {@code bytes} more fit; true when any was dropped. */
  public abstract boolean trimFor(MemoryManager m, long bytes);

  /** How long an allocation waits for memory to come back, in nanoseconds. */
  public abstract long maxWaitNanos(MemoryManager m);

  /** An allocation begins to wait while its batch holds {@code inProgress} bytes. */
  public abstract void beginWait(MemoryManager m, long inProgress);

  /** The wait {@link #beginWait} began is over. */
  public abstract void endWait(MemoryManager m, long inProgress);

  /** True when no buffer handed out can come back: each belongs to a batch whose allocation waits. */
  public abstract boolean nothingComesBack(MemoryManager m);

  /**
   * Parks until {@code done} is true or the deadline passes; returns whether it became true.
   *
   * @param cancel ends the wait with a {@link java.util.concurrent.CancellationException} when
   *     cancelled, or null for none
   */
  public abstract boolean await(MemoryManager m, BooleanSupplier done, long deadlineNanos, WaitCancellation cancel)
      throws InterruptedException;

  /** Wakes whoever waits for memory. */
  public abstract void signal(MemoryManager m);

  /** The error of an allocation that waits while nothing can come back. */
  public abstract MemoryLimitException deadlocked(MemoryManager m, String stage, long asked, long sizeClass,
      long inProgress);

  /** The error of an allocation that waited in vain ({@code cause}: an interrupt, or null). */
  public abstract MemoryLimitException limitReached(MemoryManager m, String stage, long asked, long sizeClass,
      Throwable cause);

  /** Fails when the {@code total} bytes one batch of {@code rows} rows needs at once can never fit. */
  public abstract void checkCanHold(MemoryManager m, String what, long rows, long total, Map<String, Long> parts);

  /** {@code n} bytes for a message: {@code 64.0 MiB (67108864 bytes)}. */
  public abstract String bytes(long n);

  // ---- tensors and batches ----

  /** The tensor's data buffer itself (position 0, little-endian); never handed to users. */
  public abstract ByteBuffer rawData(Tensor t);

  /** The tensor's offsets buffers themselves. */
  public abstract ByteBuffer[] rawOffsets(Tensor t);

  /** The tensor's validity buffers themselves (null when nothing is null). */
  public abstract ByteBuffer[] rawValidity(Tensor t);

  /**
   * A batch of the built {@code columns} that owns {@code buffers}: indices {@code indices}, or
   * {@code first, first + 1, ...} when {@code indices} is null.
   */
  public abstract Batch builtBatch(Schema schema, List<Column> columns, long[] indices, long first, int size,
      PooledBuffer[] buffers);
}
