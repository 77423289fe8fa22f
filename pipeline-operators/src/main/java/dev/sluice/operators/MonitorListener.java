package dev.sluice.operators;

import dev.sluice.operators.internal.cache.CacheListener;

/** The cache's listener that reports a cache's counts to the user's {@link CacheMonitor}. */
final class MonitorListener implements CacheListener {
  private final CacheMonitor monitor;

  private MonitorListener(CacheMonitor monitor) {
    this.monitor = monitor;
  }

  /** The listener reporting to {@code monitor}; {@link CacheListener#NONE} for null. */
  static CacheListener of(CacheMonitor monitor) {
    return monitor == null ? CacheListener.NONE : new MonitorListener(monitor);
  }

  @Override
  public void add(long hits, long misses, long uncached, long fallbacks, long blocks, long bytes) {
    monitor.add(hits, misses, uncached, fallbacks, blocks, bytes);
  }

  @Override
  public void passEnded(CacheStats stats) {
    monitor.passEnded(stats);
  }
}
