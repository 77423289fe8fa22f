package dev.sluice.core;

import dev.sluice.core.spi.BudgetRequests;

/**
 * The block cache of positioned reads (npy files read with {@link IoMode#READ}, and npy files named
 * by a Hadoop URI): how many bytes it may hold, process-wide.
 *
 * <p>A file read with positioned reads whose size is at most the budget is read in aligned blocks
 * of {@link #BLOCK_BYTES}, one positioned read per block, into off-heap buffers of
 * {@link MemoryManager#shared()} (stage {@value #STAGE}, so they count against its limit), and
 * random rows are then copied out of those blocks: the index path (a shuffled gather) costs one
 * read per block instead of one per row. The blocks of every open file together stay within the
 * budget; a block that would not fit, or would not fit the memory manager's limit, is not kept.
 * A file larger than the budget is not cached at all: each run of adjacent rows is one
 * positioned read straight into the batch, as without a cache, rather than a whole block read for
 * one row. Reads of a block's size or more skip the cache. A file's blocks are released when the
 * file is closed.
 *
 * <p>The budget is the largest {@link Options#readCacheBytes()} of the pipelines running now (a
 * pipeline asks for its value while each of its passes runs, see {@link #request(long)}); else
 * {@link #setBudget(long)} when set, else the system property {@value #PROPERTY} (bytes) when set,
 * else a quarter of the shared memory manager's limit, or {@link #DEFAULT_BYTES} when it has none.
 * Zero turns the cache off. Files are usually opened before a pipeline starts, so the budget is
 * read each time a block is to be kept: a file larger than the budget then has no block kept, and
 * the blocks of every open file together stay within it. Blocks kept under a larger budget stay
 * until their file is closed.
 */
public final class ReadCache {
  /** The system property that sets the budget in bytes when no pipeline asks for one and {@link #setBudget(long)} was not called. */
  public static final String PROPERTY = "sluice.read.cacheBytes";
  /** The budget when neither a budget, the property nor a memory limit is set: 1 GiB. */
  public static final long DEFAULT_BYTES = 1L << 30;
  /** Bytes of one block (1 MiB); blocks start at multiples of it. */
  public static final int BLOCK_BYTES = 1 << 20;
  /** The stage of {@link MemoryManager#shared()} the blocks are allocated from. */
  public static final String STAGE = "read-cache";

  private static volatile long budget = -1;
  private static final BudgetRequests REQUESTS = new BudgetRequests();

  private ReadCache() {}

  /**
   * The budget in bytes, as the class describes.
   *
   * @throws IllegalArgumentException when {@value #PROPERTY} is set to something other than a
   *     non-negative number of bytes
   */
  public static long budget() {
    long r = REQUESTS.largest();
    if (r >= 0) {
      return r;
    }
    long b = budget;
    if (b >= 0) {
      return b;
    }
    String p = System.getProperty(PROPERTY);
    if (p != null && !p.isBlank()) {
      long v;
      try {
        v = Long.parseLong(p.strip());
      } catch (NumberFormatException e) {
        v = -1;
      }
      if (v < 0) {
        throw new IllegalArgumentException(PROPERTY + " must be a number of bytes >= 0 but it was '" + p + "'");
      }
      return v;
    }
    long limit = MemoryManager.shared().limit();
    return limit == MemoryManager.UNLIMITED ? DEFAULT_BYTES : limit / 4;
  }

  /**
   * Sets the budget while no running pipeline asks for one ({@link Options#readCacheBytes()}), for
   * the blocks kept from now on (of files already open too); zero turns the cache off.
   *
   * @throws IllegalArgumentException when {@code bytes} is negative
   */
  public static void setBudget(long bytes) {
    if (bytes < 0) {
      throw new IllegalArgumentException("the read cache budget must be >= 0 but it was " + bytes);
    }
    budget = bytes;
  }

  /** Forgets {@link #setBudget(long)}: the budget is the property's or the default again. */
  public static void resetBudget() {
    budget = -1;
  }

  /**
   * Asks for a budget of {@code bytes} until the returned request is closed: while any request is
   * open, the budget is the largest of them. {@link Options#readCacheBytes()} is asked for so while a
   * pipeline's pass runs.
   *
   * @param bytes the budget asked for, &gt;= 0
   * @return the open request, which {@link BudgetRequests.Request#close()} withdraws
   * @throws IllegalArgumentException when {@code bytes} is negative
   */
  public static BudgetRequests.Request request(long bytes) {
    if (bytes < 0) {
      throw new IllegalArgumentException("the read cache budget must be >= 0 but it was " + bytes);
    }
    return REQUESTS.request(bytes);
  }
}
