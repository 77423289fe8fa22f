package dev.sluice.operators.internal.cache;

import dev.sluice.operators.CacheSpec;
import java.nio.file.Path;

/**
 * The byte budget of a cache directory, counted in its index under {@link CacheIndex#BYTES_KEY}:
 * whether a pass's budget is reached (then further blocks are served from upstream uncached, with
 * one warning per pass), and the return of bytes reserved for a segment that was not published.
 */
final class CacheBudget {
  private final Path dir;
  private final CacheStore store;

  CacheBudget(Path dir, CacheStore store) {
    this.dir = dir;
    this.store = store;
  }

  /**
   * Whether the cache holds at least the pass's {@link PassCounters#maxBytes()}; never with an
   * unlimited budget. Once reached, it stays reached for the pass.
   *
   * @throws CacheIndex.Timeout when the index does not answer in time
   */
  boolean reached(PassCounters pass) throws CacheIndex.Timeout {
    if (pass.maxBytes() == CacheSpec.UNLIMITED) {
      return false;
    }
    if (!pass.isBudgetReached() && store.index().counter(CacheIndex.BYTES_KEY,
        pass.indexWait(System.nanoTime() + 1_000_000_000L)) >= pass.maxBytes()) {
      markReached(pass);
    }
    return pass.isBudgetReached();
  }

  /** Records that the pass reached its budget and warns once. */
  void markReached(PassCounters pass) {
    pass.budgetReached();
    pass.warnOnce("budget", dir + ": the cache reached its budget of " + pass.maxBytes() + " bytes; further blocks are"
        + " served from upstream uncached (counted)");
  }

  /** Returns {@code bytes} reserved for a segment that was not published; a slow index leaves them counted. */
  void unreserve(long bytes, PassCounters pass) {
    try {
      store.index().add(CacheIndex.BYTES_KEY, -bytes, Long.MAX_VALUE, pass.slowIndex() ? 1_000_000 : 100_000_000);
    } catch (CacheIndex.Timeout ignored) {
      pass.indexWasSlow();
    }
  }
}
