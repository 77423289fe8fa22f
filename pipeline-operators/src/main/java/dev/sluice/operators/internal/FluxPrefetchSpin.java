package dev.sluice.operators.internal;

/**
 * The spin budget of one {@link FluxPrefetch} subscription's consumer. Fixed, it is always the given budget. Adaptive,
 * it starts at the given budget and is checked every {@value #WINDOW} waits: it stays while at least
 * half of them ended within the spin, else it drops to 0 for {@value #COOLDOWN} waits, after which
 * one window spins again to measure anew. Consumer thread only.
 */
final class FluxPrefetchSpin {
  static final int WINDOW = 16;
  static final int COOLDOWN = 256;

  private final long max;
  private final boolean adaptive;
  private long budget;
  private int waits;
  private int hits;
  private int cooldown;

  FluxPrefetchSpin(long max, boolean adaptive) {
    this.max = max;
    this.adaptive = adaptive;
    this.budget = max;
  }

  /** How long to spin now, in nanoseconds (0: park at once). */
  long budget() {
    if (budget == 0 && adaptive && max > 0 && --cooldown <= 0) {
      budget = max; // measure again
      waits = 0;
      hits = 0;
    }
    return budget;
  }

  /** A spin ended with the element ({@code true}) or without it. */
  void record(boolean came) {
    if (!adaptive) {
      return;
    }
    waits++;
    if (came) {
      hits++;
    }
    if (waits == WINDOW) {
      if (2 * hits < WINDOW) {
        budget = 0;
        cooldown = COOLDOWN;
      }
      waits = 0;
      hits = 0;
    }
  }
}
