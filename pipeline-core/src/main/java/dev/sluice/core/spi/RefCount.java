package dev.sluice.core.spi;

import dev.sluice.core.Batch;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * A reference count for memory or a resource shared by several holders: it starts at one (the
 * creator's reference), {@link #retain()} adds a holder, {@link #release()} drops one, and the
 * last release runs {@link #onLastRelease()} exactly once, on the releasing thread. It is what a
 * {@link Batch}'s handles share, and what a source uses when several batches it emits share one
 * piece of foreign memory: each batch's release callback releases once, and the last frees it.
 *
 * <p>A holder that must tolerate being closed twice (a {@code Batch} handle) keeps its own closed
 * flag and releases once; the count itself refuses a retain after the last release and a release
 * past zero with an {@link IllegalStateException}, rather than resurrect or release twice.
 * Subclass it with the state it guards, so that counting costs no object of its own.
 *
 * <pre>{@code
 * final class Shared extends RefCount {
 *   protected void onLastRelease() { memory.close(); }
 * }
 * Shared shared = new Shared();           // count 1: the source's own reference
 * shared.retain();                        // a batch's release callback will call shared.release()
 * Batch b = Batch.of(schema, columns, indices, shared::release);
 * shared.release();                       // the source is done; the batch still holds the memory
 * }</pre>
 */
public abstract class RefCount {
  private static final VarHandle REFS;

  static {
    try {
      REFS = MethodHandles.lookup().findVarHandle(RefCount.class, "refs", int.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  @SuppressWarnings("unused") // accessed through REFS
  private volatile int refs = 1;

  /** A count of one: the creator's reference. */
  protected RefCount() {}

  /**
   * Adds a holder.
   *
   * @throws IllegalStateException after the last release
   */
  public final void retain() {
    int n;
    do {
      n = (int) REFS.getVolatile(this);
      if (n <= 0) {
        throw new IllegalStateException(this + " is already released");
      }
    } while (!REFS.compareAndSet(this, n, n + 1));
  }

  /**
   * Drops a holder; the last one runs {@link #onLastRelease()}.
   *
   * @return true when this was the last holder
   * @throws IllegalStateException when every holder has already released
   */
  public final boolean release() {
    int n = (int) REFS.getAndAdd(this, -1) - 1;
    if (n == 0) {
      onLastRelease();
      return true;
    }
    if (n < 0) {
      REFS.getAndAdd(this, 1);
      throw new IllegalStateException(this + " is released more often than it was retained");
    }
    return false;
  }

  /** The holders now (0 once released). */
  public final int refCount() {
    return Math.max(0, (int) REFS.getVolatile(this));
  }

  /** Frees what the holders shared; called once, by the last {@link #release()}. */
  protected abstract void onLastRelease();
}
