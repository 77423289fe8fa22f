package dev.sluice.core;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The lifetime of one batch's memory, shared by the batch's handles and by every {@link Column} and
 * {@link Tensor} taken from it: once the last handle is closed (or the batch was collected without
 * being closed) the memory goes back to its pool and every read through a column or tensor of the
 * batch throws {@link IllegalStateException} naming the batch.
 *
 * <p>The leak detector watches this object: it stays reachable while the batch or any tensor of it
 * is, so memory a tensor still views is never handed to someone else.
 */
final class BatchMemory {
  private static final VarHandle RELEASED;

  static {
    try {
      RELEASED = MethodHandles.lookup().findVarHandle(BatchMemory.class, "released", boolean.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  private final long id;
  /**
   * Set once, when the memory is released (a volatile write). Bulk accessors read it with acquire
   * semantics; element accessors read it plainly, so that a loop over the elements of a tensor
   * checks it once rather than per element: the thread that closed the batch always sees its own
   * write, and a tensor whose batch another thread closes while it is read is a race in the caller.
   */
  @SuppressWarnings("unused") // through RELEASED, and plainly in isReleasedPlain
  private boolean released;

  BatchMemory(long id) {
    this.id = id;
  }

  long id() {
    return id;
  }

  /** {@code batch#17}. */
  String name() {
    return "batch#" + id;
  }

  boolean isReleased() {
    return (boolean) RELEASED.getAcquire(this);
  }

  /** {@link #isReleased()} without ordering, for the per-element check (see the field). */
  boolean isReleasedPlain() {
    return released;
  }

  void markReleased() {
    RELEASED.setVolatile(this, true);
  }

  IllegalStateException closed() {
    return new IllegalStateException(name() + " is closed: its memory went back to the pool and its columns and "
        + "tensors can no longer be read (retain() the batch, or copy the values, to keep them)");
  }
}
