package dev.sluice.core.internal;

import dev.sluice.core.Column;
import dev.sluice.core.MemoryManager;
import dev.sluice.core.Tensor;
import dev.sluice.core.TensorSpec;
import dev.sluice.core.spi.BufferPool;
import dev.sluice.core.spi.PooledBuffer;
import java.lang.invoke.MethodHandles;
import java.nio.ByteBuffer;
import java.util.List;

/**
 * The members of the buffer pools and column builders ({@code dev.sluice.core.spi}) that
 * {@code dev.sluice.core} calls and that source authors must not see: making a manager's pools,
 * dropping what they keep, and building a column of values on the heap. The pools register the one
 * implementation when {@link BufferPool} is initialized; {@link #get()} initializes it first.
 */
public abstract class SpiAccess {
  private static volatile SpiAccess access;

  /** For the implementation beside the pools. */
  protected SpiAccess() {}

  /** The accessor, after initializing the class that registers it. */
  public static SpiAccess get() {
    SpiAccess a = access;
    if (a == null) {
      try {
        MethodHandles.lookup().ensureInitialized(BufferPool.class);
      } catch (IllegalAccessException e) {
        throw new IllegalStateException("cannot initialize " + BufferPool.class.getName(), e);
      }
      a = access;
      if (a == null) {
        throw new IllegalStateException(BufferPool.class.getPackageName() + " registered no SpiAccess");
      }
    }
    return a;
  }

  /**
   * Registers the implementation: once, from the package of the pools.
   *
   * @throws IllegalStateException if one is registered already or {@code a} is not of that package
   */
  public static synchronized void register(SpiAccess a) {
    if (access != null || !a.getClass().getPackageName().equals(BufferPool.class.getPackageName())) {
      throw new IllegalStateException("SpiAccess is registered by " + BufferPool.class.getPackageName() + ", once");
    }
    access = a;
  }

  /**
   * A new pool of stage {@code stage} of {@code manager}: one that keeps up to {@code retainBudget}
   * bytes of freed buffers, or, with a {@code parent}, a scope's pool that takes its buffers from it.
   */
  public abstract BufferPool newPool(String stage, MemoryManager manager, BufferPool parent, long retainBudget);

  /** Drops one buffer {@code pool} keeps (the largest first); false when it keeps none. */
  public abstract boolean dropOneRetained(BufferPool pool);

  /** The manager of the pool that lent {@code buffer}. */
  public abstract MemoryManager manager(PooledBuffer buffer);

  /**
   * One row on the heap: a list (of field {@code spec}, ragged from its first dimension) of
   * {@code elements}, each a value of rank {@code spec}'s rank minus 1 or null.
   */
  public abstract Tensor heapList(TensorSpec spec, List<Tensor> elements);

  /**
   * Copies {@code n} int64 offsets from {@code so} (from offset {@code a}) to {@code dst} (from
   * offset {@code c}), each plus {@code base}.
   */
  public abstract void rebase(ByteBuffer so, long a, long n, long base, ByteBuffer dst, long c);
}
