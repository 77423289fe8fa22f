package dev.sluice.core.internal.metrics;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.LockSupport;

/**
 * One daemon thread that looks at every measured stage of the process once per
 * {@value #TICK_MICROS} µs and notes which state its output is in (its downstream busy with an
 * element, waiting for it, or not asking), and hands each stage's interval to its meters every
 * {@value PassMetrics#FLUSH_MILLIS} ms: sampling in time, so that the element path pays no clock
 * read per element and a stream that arrives in bursts is measured as well as a steady one.
 *
 * <p>The thread starts with the first measured pass and ends after a second without one; it sleeps
 * between ticks (a tick reads each measured stage's state once and does nothing per element).
 */
final class StageSampler implements Runnable {
  /** Time between two looks at the stages. */
  static final long TICK_MICROS = 1_000;
  /** Idle ticks before the thread ends. */
  private static final int IDLE_TICKS = 1_000;

  private static final StageSampler INSTANCE = new StageSampler();

  private final Set<Sampled> stages = ConcurrentHashMap.newKeySet();
  private Thread thread; // guarded by this

  /** What the sampler looks at. */
  interface Sampled {
    /** Called on the sampler's thread at {@code now}. */
    void tick(long now);
  }

  private StageSampler() {}

  /** Starts looking at {@code s} (and the thread, when it is not running). */
  static void register(Sampled s) {
    INSTANCE.stages.add(s);
    INSTANCE.ensureRunning();
  }

  /** Stops looking at {@code s}. */
  static void unregister(Sampled s) {
    INSTANCE.stages.remove(s);
  }

  private synchronized void ensureRunning() {
    if (thread == null) {
      thread = new Thread(this, "sluice-metrics");
      thread.setDaemon(true);
      thread.start();
    }
  }

  /** Ends the thread unless a stage registered meanwhile; true when it may end. */
  private synchronized boolean mayEnd() {
    if (!stages.isEmpty()) {
      return false;
    }
    thread = null;
    return true;
  }

  @Override
  public void run() {
    int idle = 0;
    for (;;) {
      LockSupport.parkNanos(TICK_MICROS * 1_000);
      if (stages.isEmpty()) {
        if (++idle >= IDLE_TICKS && mayEnd()) {
          return;
        }
        continue;
      }
      idle = 0;
      long now = System.nanoTime();
      for (Sampled s : stages) {
        try {
          s.tick(now);
        } catch (RuntimeException e) {
          stages.remove(s); // a meter that fails (a registry refusing a meter) stops being sampled
        }
      }
    }
  }
}
