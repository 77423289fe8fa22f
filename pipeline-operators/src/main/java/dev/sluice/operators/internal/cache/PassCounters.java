package dev.sluice.operators.internal.cache;

import dev.sluice.core.spi.StageCounters;
import dev.sluice.operators.CacheStats;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What one pass through a cache counted and decided: its hits and misses, the blocks it filled,
 * the blocks it serves from upstream for the rest of the pass, and the warnings it already logged
 * (each kind once per pass).
 */
final class PassCounters implements AutoCloseable {
  static final Logger LOG = LoggerFactory.getLogger("dev.sluice.operators.cache");

  /** Why a block is served from upstream. */
  enum Bypass {
    /** The budget is reached: counted as uncached. */
    BUDGET,
    /** The cache could not serve or store it: counted as a fallback. */
    FALLBACK
  }

  private final CacheListener listener;
  private final long maxBytes;
  private final LongAdder hits = new LongAdder();
  private final LongAdder misses = new LongAdder();
  private final LongAdder uncached = new LongAdder();
  private final LongAdder fallbacks = new LongAdder();
  private final LongAdder blocks = new LongAdder();
  private final LongAdder bytes = new LongAdder();
  private final Set<Long> filled = ConcurrentHashMap.newKeySet();
  private final Map<Long, Bypass> bypassed = new ConcurrentHashMap<>();
  private final Set<String> warned = ConcurrentHashMap.newKeySet();
  private final AtomicBoolean closed = new AtomicBoolean();
  /** The counters of the stage that reads this pass, when the pass is measured. */
  private volatile StageCounters stage = StageCounters.NONE;
  private volatile boolean slowIndex;
  private volatile boolean budgetReached;
  private volatile boolean storeUnavailable;

  PassCounters(CacheListener listener, long maxBytes) {
    this.listener = listener;
    this.maxBytes = maxBytes;
  }

  /** Reports this pass's counts to {@code counters} as well, from now on. */
  void countInto(StageCounters counters) {
    stage = Objects.requireNonNull(counters, "counters");
  }

  /** The budget of the cache in this pass. */
  long maxBytes() {
    return maxBytes;
  }

  /** {@code n} elements of {@code block} served: misses when this pass filled the block, else hits. */
  void served(long block, long n) {
    if (!filled.isEmpty() && filled.contains(block)) {
      miss(n);
    } else {
      hit(n);
    }
  }

  void hit(long n) {
    hits.add(n);
    listener.add(n, 0, 0, 0, 0, 0);
    stage.add("cache.hits", n);
  }

  void miss(long n) {
    misses.add(n);
    listener.add(0, n, 0, 0, 0, 0);
    stage.add("cache.misses", n);
  }

  /** {@code n} elements served from upstream because of the budget. */
  void uncached(long n) {
    misses.add(n);
    uncached.add(n);
    listener.add(0, n, n, 0, 0, 0);
    StageCounters c = stage;
    c.add("cache.misses", n);
    c.add("cache.uncached", n);
  }

  /** {@code n} elements served from upstream, not from the cache ({@code why} may be null: a plain miss). */
  void servedFromUpstream(Bypass why, long n) {
    if (why == Bypass.BUDGET) {
      uncached(n);
    } else {
      miss(n);
    }
  }

  /** True when this pass computed the rows of some block. */
  boolean computedAny() {
    return !filled.isEmpty();
  }

  /** This pass computed the rows of {@code block} from upstream: serving them counts misses. */
  void computed(long block) {
    filled.add(block);
  }

  /** This pass filled and published {@code block}, a segment of {@code segmentBytes}. */
  void filled(long block, long segmentBytes) {
    filled.add(block);
    blocks.increment();
    bytes.add(segmentBytes);
    listener.add(0, 0, 0, 0, 1, segmentBytes);
    StageCounters c = stage;
    c.add("cache.blocks.written", 1);
    c.add("cache.bytes.written", segmentBytes);
  }

  /**
   * Serves {@code block} from upstream for the rest of the pass; a fallback is counted once per
   * block.
   */
  void bypass(long block, Bypass why) {
    if (bypassed.putIfAbsent(block, why) == null && why == Bypass.FALLBACK) {
      fallbacks.increment();
      listener.add(0, 0, 0, 1, 0, 0);
      stage.add("cache.fallbacks", 1);
    }
  }

  /** Counts a fallback that is not tied to bypassing a block (a corrupt segment, rebuilt). */
  void fallback() {
    fallbacks.increment();
    listener.add(0, 0, 0, 1, 0, 0);
    stage.add("cache.fallbacks", 1);
  }

  /** Why {@code block} is served from upstream in this pass, or null. */
  Bypass bypassed(long block) {
    return bypassed.isEmpty() ? null : bypassed.get(block);
  }

  /** A lock of the index timed out: later waits of this pass on the index are short. */
  void indexWasSlow() {
    slowIndex = true;
  }

  boolean slowIndex() {
    return slowIndex;
  }

  /** The bound of one index operation ending by {@code deadline}: what is left of it, or almost nothing once the index was slow. */
  long indexWait(long deadline) {
    long left = Math.max(0, deadline - System.nanoTime());
    return slowIndex ? Math.min(left, 1_000_000) : left;
  }

  /** The cache's index could not be opened in time: this pass reads from upstream without the cache. */
  void storeIsUnavailable() {
    storeUnavailable = true;
  }

  boolean storeUnavailable() {
    return storeUnavailable;
  }

  void budgetReached() {
    budgetReached = true;
  }

  boolean isBudgetReached() {
    return budgetReached;
  }

  /** Logs {@code message} unless this pass already logged a warning of {@code kind}. */
  void warnOnce(String kind, String message) {
    if (warned.add(kind)) {
      LOG.warn(message);
    }
  }

  CacheStats stats() {
    return new CacheStats(hits.sum(), misses.sum(), uncached.sum(), fallbacks.sum(), blocks.sum(), bytes.sum());
  }

  /** Ends the pass: reports its counts once. */
  @Override
  public void close() {
    if (closed.compareAndSet(false, true)) {
      listener.passEnded(stats());
    }
  }
}
