package dev.sluice.core.internal;

import dev.sluice.core.Batch;
import dev.sluice.core.Column;
import dev.sluice.core.MemoryLimitException;
import dev.sluice.core.MemoryManager;
import dev.sluice.core.Schema;
import dev.sluice.core.Tensor;
import dev.sluice.core.spi.PooledBuffer;
import java.lang.invoke.MethodHandles;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;

/**
 * The members of {@code dev.sluice.core} that the column builders and buffer pools of
 * {@code dev.sluice.core.spi} call, and that users must not see (the JDK's {@code SharedSecrets}
 * pattern). {@code dev.sluice.core} registers the one implementation when {@link MemoryManager} is
 * initialized; {@link #get()} initializes it first, so the accessor is there whichever class is
 * loaded first.
 *
 * <p>Each method does what the member of the same name in {@code dev.sluice.core} does, for the
 * object given as the first argument: the methods taking a {@link MemoryManager} are how a
 * manager's pools take memory from it (waiting under its limit) and give it back, the others read a
 * tensor's own buffers or make a batch that owns pooled buffers.
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

  // ---- a manager's memory, for its pools ----

  /** A pool's buffers of one size class, as {@link #acquire} takes them. */
  public interface Shelf {
    /** A buffer of the class the pool keeps for reuse, taken off the shelf; null when none is kept. */
    ByteBuffer take();

    /** True when the pool keeps a buffer of the class. */
    boolean holdsAny();

    /** A fresh buffer of the class, its memory already reserved under the limit. */
    ByteBuffer fresh();
  }

  /**
   * A buffer of size class {@code sizeClass} from {@code shelf} or fresh memory, waiting for memory
   * under {@code m}'s limit.
   *
   * @param stage the pool's stage, for errors
   * @param asked the bytes asked for, for errors
   * @param inProgress bytes of {@code m}'s buffers the asking batch already holds
   * @throws MemoryLimitException if the buffer can never fit, nothing came back in time, nothing can
   *     come back, or the wait was interrupted or its pass cancelled
   */
  public abstract ByteBuffer acquire(MemoryManager m, String stage, long asked, int sizeClass, long inProgress,
      Shelf shelf);

  /** A buffer of size class {@code sizeClass} came back to a pool of {@code m}, which kept it or not. */
  public abstract void returned(MemoryManager m, int sizeClass, boolean kept);

  /** {@code bytes} of {@code m}'s reserved memory were given up by a pool. */
  public abstract void unreserve(MemoryManager m, long bytes);

  /**
   * Fails when {@code total} bytes, what {@code what} needs at once for one batch of {@code rows}
   * rows ({@code parts}: bytes per field), can never be held under {@code m}'s limit.
   */
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
