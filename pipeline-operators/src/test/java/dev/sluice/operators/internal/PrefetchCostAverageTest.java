package dev.sluice.operators.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The per-element cost average that decides where a prefetch's consumer is served. */
class PrefetchCostAverageTest {
  private static long average(long old, long sample) {
    return FluxPrefetchSubscriber.average(old, sample);
  }

  @Test
  void theFirstSampleIsTheAverage() {
    assertEquals(5_000, average(-1, 5_000));
  }

  @Test
  void oneSampleOfADescheduledThreadBarelyMovesTheAverage() {
    long steady = 100_000;
    long after = average(steady, 10_000_000); // preempted for 10 ms while timed
    assertTrue(after <= steady * 7 / 4 + 1_000, "one outlier moves it by three quarters at most: " + after);
    assertTrue(after * FluxPrefetch.INLINE_RATIO > steady * FluxPrefetch.INLINE_RATIO / 2,
        "and it stays within the inline ratio of the true cost");
  }

  @Test
  void aLastingChangeOfCostIsFollowed() {
    long avg = 200;
    for (int i = 0; i < 30; i++) {
      avg = average(avg, 100_000);
    }
    assertTrue(avg > 90_000 && avg <= 100_000, "rises to a lasting higher cost: " + avg);
    for (int i = 0; i < 30; i++) {
      avg = average(avg, 300);
    }
    assertTrue(avg < 1_000, "falls to a lasting lower cost: " + avg);
  }
}
