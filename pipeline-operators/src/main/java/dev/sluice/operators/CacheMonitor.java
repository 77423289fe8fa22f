package dev.sluice.operators;

import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;

/**
 * The counters of a cache, for whoever reports on it (a metrics registry, a log line, the command
 * line's {@code --json}): give one to {@link CacheSpec#monitor(CacheMonitor)} and read it while
 * passes run or after they end.
 *
 * <pre>{@code
 * CacheMonitor monitor = new CacheMonitor();
 * Pipeline<Batch> train = Pipeline.from(source).cache(CacheSpec.defaults().monitor(monitor)).batch(256);
 * train.flux(ctx).blockLast();
 * CacheStats epoch = monitor.lastPass();   // epoch.misses() == 0 once every block is published
 * }</pre>
 *
 * <p>Thread-safe; one monitor may watch several caches and concurrent passes (their counts add
 * up). A pass is one subscription of the pipeline; it ends on complete, error or cancel.
 */
public final class CacheMonitor {
  private final LongAdder hits = new LongAdder();
  private final LongAdder misses = new LongAdder();
  private final LongAdder uncached = new LongAdder();
  private final LongAdder fallbacks = new LongAdder();
  private final LongAdder blocksWritten = new LongAdder();
  private final LongAdder bytesWritten = new LongAdder();
  private final LongAdder passes = new LongAdder();
  private final AtomicReference<CacheStats> lastPass = new AtomicReference<>(CacheStats.ZERO);

  /** A monitor with every count at zero. */
  public CacheMonitor() {}

  /** The counts of every pass so far, including those still running. */
  public CacheStats total() {
    return new CacheStats(hits.sum(), misses.sum(), uncached.sum(), fallbacks.sum(), blocksWritten.sum(),
        bytesWritten.sum());
  }

  /** The counts of the pass that ended last ({@link CacheStats#ZERO} before any ended). */
  public CacheStats lastPass() {
    return lastPass.get();
  }

  /** The number of passes that ended. */
  public long passes() {
    return passes.sum();
  }

  /** Adds counts of a running pass to {@link #total()}. */
  void add(long hit, long miss, long uncachedRows, long fallbackBlocks, long blocks, long bytes) {
    if (hit != 0) {
      hits.add(hit);
    }
    if (miss != 0) {
      misses.add(miss);
    }
    if (uncachedRows != 0) {
      uncached.add(uncachedRows);
    }
    if (fallbackBlocks != 0) {
      fallbacks.add(fallbackBlocks);
    }
    if (blocks != 0) {
      blocksWritten.add(blocks);
      bytesWritten.add(bytes);
    }
  }

  /** Records that a pass ended with {@code stats}. */
  void passEnded(CacheStats stats) {
    lastPass.set(stats);
    passes.increment();
  }
}
