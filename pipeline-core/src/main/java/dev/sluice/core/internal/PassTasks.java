package dev.sluice.core.internal;

import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * The work of one pass of a pipeline that is under way, so that whoever ends the pass can wait until
 * none is left: the calls the consumer makes into the pass, and the pass's tasks queued or running
 * on a scheduler.
 *
 * <p>A pass is <em>current</em> on a thread while that thread works on the pass's behalf: during a
 * call of the consumer into the pass (subscribe, request, cancel: {@link #enterCall()} /
 * {@link #exitCall}), which counts as work of the pass while it lasts, and while a task of the pass
 * runs. A task that a {@link TrackedScheduler} schedules while a pass is current belongs to that pass
 * from the moment it is scheduled until it returns, or until it is disposed before it started; it
 * runs with its pass current, so the tasks it schedules belong to the pass too.
 * {@link #awaitIdle(long)} returns once no call is under way and no task is queued or running: from
 * then on nothing of the pass runs again unless the consumer calls into it again.
 *
 * <p><b>Failures.</b> Whatever a task of the pass throws ({@link Error}s included) ends the pass
 * instead of being lost on the worker thread: the task hands it to {@link #fail(Throwable)}, which
 * passes it to the most recent {@link FailureRoute} still open (the boundary of the pass,
 * {@link FluxPass}), and that one cancels what runs above it and signals the error to its
 * subscriber.
 *
 * <p>Thread-safe.
 */
public final class PassTasks {
  private static final ThreadLocal<PassTasks> CURRENT = new ThreadLocal<>();

  private final AtomicInteger active = new AtomicInteger();
  private final CopyOnWriteArrayList<FailureRoute> routes = new CopyOnWriteArrayList<>();
  private volatile Thread waiter;

  /** Where the failure of a task of the pass goes: the boundary of a pass ({@link FluxPass}). */
  @FunctionalInterface
  public interface FailureRoute {
    /**
     * Ends the pass with {@code error}; false when this route has ended already and did nothing.
     * Called on the thread of the task that failed.
     */
    boolean fail(Throwable error);
  }

  /** From now on failures of the pass's tasks go to {@code route} (the most recent open route first). */
  public void addRoute(FailureRoute route) {
    routes.add(route);
  }

  /** {@code route} no longer takes failures. */
  public void removeRoute(FailureRoute route) {
    routes.remove(route);
  }

  /**
   * A task of the pass threw {@code error}: hands it to the most recent route that takes it; false
   * when none did (the caller then lets the error go on as it would without a pass).
   */
  public boolean fail(Throwable error) {
    Object[] r = routes.toArray();
    for (int i = r.length - 1; i >= 0; i--) {
      if (((FailureRoute) r[i]).fail(error)) {
        return true;
      }
    }
    return false;
  }

  /** The pass current on the calling thread, or null. */
  public static PassTasks current() {
    return CURRENT.get();
  }

  /**
   * A call of the consumer into the pass begins: it counts as work of the pass, and the pass is
   * current on the calling thread, until {@link #exitCall(PassTasks)} (in a {@code finally} block)
   * with what this returns (the pass that was current, possibly null).
   */
  public PassTasks enterCall() {
    begin();
    return enter();
  }

  /** The call {@link #enterCall()} began has returned. */
  public void exitCall(PassTasks previous) {
    exit(previous);
    end();
  }

  /** Makes this pass current on the calling thread; returns the pass that was current, for {@link #exit}. */
  PassTasks enter() {
    PassTasks previous = CURRENT.get();
    if (previous != this) {
      CURRENT.set(this);
    }
    return previous;
  }

  /** Makes {@code previous}, which {@link #enter()} returned, current again. */
  void exit(PassTasks previous) {
    if (previous != this) {
      CURRENT.set(previous);
    }
  }

  /** Calls under way and tasks queued or running now. */
  public int active() {
    return active.get();
  }

  /**
   * Parks until no call into this pass is under way and no task of it is queued or running, or the
   * deadline ({@link System#nanoTime()}) passes; returns whether the pass became idle. Called by one
   * thread at a time.
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

  /** A task was scheduled, or a call began. */
  void begin() {
    active.incrementAndGet();
  }

  /** A task returned or was disposed before it started, or a call returned. */
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
