package dev.sluice.operators;

/**
 * What a cache did during one pass (or several, summed): how many elements it served from published
 * blocks and how many it computed from upstream, and what it wrote.
 *
 * <p>Every element a pass delivers through the cache is either a hit or a miss, so
 * {@code hits + misses} is the number of elements the pass read through it.
 *
 * @param hits elements served from blocks that were published before this pass needed them
 * @param misses elements this pass computed from upstream: the rows of blocks it filled, and rows it
 *     served uncached
 * @param uncached of the misses, elements served from upstream without being cached because the
 *     budget ({@link CacheSpec#maxBytes()}) was reached
 * @param fallbacks blocks served from upstream because the cache could not serve or store them: a
 *     wait that timed out (a lock left held by a dead process, a slow filler), a corrupt segment
 *     (rebuilt), a write that failed (no space left)
 * @param blocksWritten blocks this pass filled and published
 * @param bytesWritten bytes of the segments this pass published
 */
public record CacheStats(long hits, long misses, long uncached, long fallbacks, long blocksWritten, long bytesWritten) {
  /** No activity. */
  public static final CacheStats ZERO = new CacheStats(0, 0, 0, 0, 0, 0);

  /** The sum of these counts and {@code other}'s. */
  public CacheStats plus(CacheStats other) {
    return new CacheStats(hits + other.hits, misses + other.misses, uncached + other.uncached,
        fallbacks + other.fallbacks, blocksWritten + other.blocksWritten, bytesWritten + other.bytesWritten);
  }
}
