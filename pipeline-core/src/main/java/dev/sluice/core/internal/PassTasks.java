package dev.sluice.core.internal;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * The tasks of one pass of a pipeline that are queued or running on a scheduler, so that whoever
 * ends the pass can wait until none is left.
 *
 * <p>A pass is <em>current</em> on a thread while that thread works on the pass's behalf: while the
 * consumer subscribes to, requests from or cancels the pass ({@link #enter()} / {@link #exit}), and
 * while a task of the pass runs. A task that a {@link TrackedScheduler} schedules while a pass is
 * current belongs to that pass from the moment it is scheduled until it returns, or until it is
 * disposed before it started; it runs with its pass current, so the tasks it schedules belong to the
 * pass too. {@link #awaitIdle(long)} returns once no task of the pass is queued or running: from
 * then on nothing of the pass runs again unless the pass is entered again.
 *
 * <p>Thread-safe.
 */
public final class PassTasks {
  private static final ThreadLocal<PassTasks> CURRENT = new ThreadLocal<>();

  private final AtomicInteger active = new AtomicInteger();
  private volatile Thread waiter;

  /** The pass current on the calling thread, or null. */
  public static PassTasks current() {
    return CURRENT.get();
  }

  /**
   * Makes this pass current on the calling thread and returns the pass that was current (possibly
   * null), to be handed to {@link #exit(PassTasks)} in a {@code finally} block.
   */
  public PassTasks enter() {
    PassTasks previous = CURRENT.get();
    if (previous != this) {
      CURRENT.set(this);
    }
    return previous;
  }

  /** Makes {@code previous}, which {@link #enter()} returned, current again. */
  public void exit(PassTasks previous) {
    if (previous != this) {
      CURRENT.set(previous);
    }
  }

  /** Tasks of this pass queued or running now. */
  public int active() {
    return active.get();
  }

  /**
   * Parks until no task of this pass is queued or running, or the deadline ({@link System#nanoTime()})
   * passes; returns whether the pass became idle. Called by one thread at a time.
   *
   * @throws InterruptedException if the calling thread is interrupted while it waits
   */
  public boolean awaitIdle(long deadlineNanos) throws InterruptedException {
    if (active.get() == 0) {
      return true;
    }
    waiter = Thread.currentThread();
    try {
      while (active.get() != 0) { // re-read after publishing the waiter: a task ending now sees it
        long left = deadlineNanos - System.nanoTime();
        if (left <= 0) {
          return false;
        }
        LockSupport.parkNanos(this, left);
        if (Thread.interrupted()) {
          throw new InterruptedException();
        }
      }
      return true;
    } finally {
      waiter = null;
    }
  }

  /** A task was scheduled. */
  void begin() {
    active.incrementAndGet();
  }

  /** A task returned, or was disposed before it started. */
  void end() {
    if (active.decrementAndGet() == 0) {
      Thread w = waiter;
      if (w != null) {
        LockSupport.unpark(w);
      }
    }
  }

  @Override
  public String toString() {
    return "PassTasks[active=" + active.get() + "]";
  }
}
