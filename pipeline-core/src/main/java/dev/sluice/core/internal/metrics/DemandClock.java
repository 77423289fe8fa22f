package dev.sluice.core.internal.metrics;

import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.concurrent.atomic.AtomicLongFieldUpdater;
import reactor.core.publisher.Operators;

/**
 * The demand bookkeeping of a measuring subscriber: it counts what the downstream requested and what
 * went through, and splits the gap before an element (from an armed moment to the element's
 * arrival) into the part spent waiting for a request and the part the downstream waited. A request
 * that arrives while an armed gap waits for one notes its time, at the cost of one clock read.
 *
 * <p>{@link #arm} and {@link #demandWait} run on the signal thread; {@link #requested} on any
 * thread. The two sides meet through a Dekker handshake: {@code arm} publishes that it waits, then
 * reads the demand again; a request adds its demand, then reads whether someone waits; so a request
 * racing with {@code arm} is seen by at least one of them.
 */
abstract class DemandClock {
  /** Requested by the downstream in total (saturating). */
  volatile long requested;
  @SuppressWarnings("rawtypes")
  static final AtomicLongFieldUpdater<DemandClock> REQUESTED =
      AtomicLongFieldUpdater.newUpdater(DemandClock.class, "requested");
  /** 1 while an armed gap waits for a request, which then records {@link #demandAt}. */
  volatile int demandWatch;
  @SuppressWarnings("rawtypes")
  static final AtomicIntegerFieldUpdater<DemandClock> DEMAND_WATCH =
      AtomicIntegerFieldUpdater.newUpdater(DemandClock.class, "demandWatch");
  volatile long demandAt;

  // signal thread only
  /** Elements that went through. */
  long received;
  /** Whether a gap is being timed, since {@link #armedAt}. */
  boolean armed;
  long armedAt;
  /** Whether the armed gap started without demand. */
  boolean demandArmed;

  /** The gap before the next element starts at {@code now}. */
  final void arm(long now) {
    armed = true;
    armedAt = now;
    if (requested == received) {
      DEMAND_WATCH.set(this, 1);
      if (requested != received && DEMAND_WATCH.compareAndSet(this, 1, 0)) {
        demandAt = now; // a request came in between
      }
      demandArmed = true;
    } else {
      demandArmed = false;
    }
    armed();
  }

  /** Called at the end of {@link #arm}. */
  void armed() {}

  /**
   * The part of the armed gap of length {@code gap} that waited for a request; disarms. 0 when no
   * gap was armed.
   */
  final long demandWait(long gap) {
    if (!armed) {
      return 0;
    }
    armed = false;
    if (!demandArmed) {
      return 0;
    }
    if (demandWatch == 1 && DEMAND_WATCH.compareAndSet(this, 1, 0)) {
      return gap; // no request was seen (the upstream emitted unasked)
    }
    long d = demandAt - armedAt;
    return d < 0 ? 0 : Math.min(d, gap);
  }

  /** The downstream requested {@code n} more (validated). */
  final void requested(long n) {
    Operators.addCap(REQUESTED, this, n);
    if (demandWatch == 1 && DEMAND_WATCH.compareAndSet(this, 1, 0)) {
      demandAt = System.nanoTime();
    }
  }
}
