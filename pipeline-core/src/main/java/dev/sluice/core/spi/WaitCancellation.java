package dev.sluice.core.spi;

import java.util.concurrent.CancellationException;

/**
 * A cancel signal that ends the blocking waits of work done for a pass, so that cancelling the pass
 * never has to interrupt the thread the work runs on. An operator that runs a producer on a thread
 * of its own (prefetch, ordered parallel work) runs the producer's work within one and cancels it
 * when its subscription ends; the wait for pooled memory under a limit observes it, and so may any
 * other blocking wait of a source. An interrupt is no way to stop a producer that may read a file:
 * a {@code FileChannel} read or map under way when its thread is interrupted closes the channel
 * ({@code ClosedByInterruptException}), and a source that keeps its channel open across passes
 * would then fail on every later pass.
 *
 * <p>Work runs within a cancellation ({@link #run(Runnable)}), which is then {@linkplain #current()
 * current} on its thread. A wait that observes it (the wait for pooled memory under a limit)
 * registers how to wake it ({@link #beginWait(Runnable)}) and looks at {@link #isCancelled()} before
 * it blocks and whenever it wakes up; {@link #cancel()} wakes it, and it then ends by throwing a
 * {@link CancellationException} ({@link #throwIfCancelled()}). No cancel is lost: {@code cancel()}
 * sets the flag before it reads the registered wake-up, and a wait registers its wake-up before it
 * reads the flag.
 *
 * <p>One wait at a time: the thread the work runs on. Thread-safe otherwise.
 */
public final class WaitCancellation {
  private static final ThreadLocal<WaitCancellation> CURRENT = new ThreadLocal<>();

  private volatile boolean cancelled;
  private volatile Runnable wakeUp;

  /** A cancellation not cancelled yet. */
  public WaitCancellation() {}

  /** The cancellation the calling thread's work runs within, or null. */
  public static WaitCancellation current() {
    return CURRENT.get();
  }

  /** Runs {@code task} on the calling thread with this cancellation current, then restores the one before. */
  public void run(Runnable task) {
    WaitCancellation previous = CURRENT.get();
    CURRENT.set(this);
    try {
      task.run();
    } finally {
      if (previous == null) {
        CURRENT.remove();
      } else {
        CURRENT.set(previous);
      }
    }
  }

  /** Cancels: a wait under way is woken and ends, and every later wait ends at once. Idempotent. */
  public void cancel() {
    cancelled = true;
    Runnable w = wakeUp;
    if (w != null) {
      w.run();
    }
  }

  /** True once {@link #cancel()} was called. */
  public boolean isCancelled() {
    return cancelled;
  }

  /**
   * Throws when cancelled.
   *
   * @throws CancellationException once {@link #cancel()} was called
   */
  public void throwIfCancelled() {
    if (cancelled) {
      throw new CancellationException("the pass was cancelled");
    }
  }

  /**
   * A wait begins: until {@link #endWait()}, {@link #cancel()} calls {@code wakeUp} (on the
   * cancelling thread), which must wake the waiting thread so that it looks at {@link #isCancelled()}.
   */
  public void beginWait(Runnable wakeUp) {
    this.wakeUp = wakeUp;
  }

  /** The wait {@link #beginWait(Runnable)} began is over. */
  public void endWait() {
    this.wakeUp = null;
  }
}
