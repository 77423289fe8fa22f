package dev.sluice.operators.internal.cache;

import dev.sluice.operators.CacheStats;

/** Receives the counts of a cache's passes ({@link dev.sluice.operators.CacheMonitor} through an adapter). */
public interface CacheListener {
  /** A listener that ignores everything. */
  CacheListener NONE = new CacheListener() {
    @Override
    public void add(long hits, long misses, long uncached, long fallbacks, long blocks, long bytes) {}

    @Override
    public void passEnded(CacheStats stats) {}
  };

  /** Counts of a running pass, as they happen. */
  void add(long hits, long misses, long uncached, long fallbacks, long blocks, long bytes);

  /** A pass ended with {@code stats}. */
  void passEnded(CacheStats stats);
}
