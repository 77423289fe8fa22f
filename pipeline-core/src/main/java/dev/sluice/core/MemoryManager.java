package dev.sluice.core;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Hands out pooled off-heap buffers per stage and accounts for them.
 *
 * <p>Each pipeline stage that allocates (batch, gather, decode) takes its own named {@link BufferPool}
 * ({@link #pool(String)}); {@link #outstandingBytes()} and {@link #outstandingBytesByStage()} report
 * what has been handed out and not yet returned, so a test can assert that a pipeline released
 * everything after complete, error and cancel. Freed buffers are kept for reuse up to a per-pool
 * budget: fresh off-heap memory costs a page fault per 4 KiB on first touch, reused memory does not.
 *
 * <p>Thread-safe. Most code uses {@link #shared()}; tests may create their own manager.
 */
public final class MemoryManager {
  /** Default bytes each pool keeps for reuse. */
  public static final long DEFAULT_RETAINED_BYTES_PER_POOL = 256L << 20;

  private static final MemoryManager SHARED = new MemoryManager(DEFAULT_RETAINED_BYTES_PER_POOL);

  private final long retainedBytesPerPool;
  private final Map<String, BufferPool> pools = new ConcurrentHashMap<>();

  /** A manager whose pools keep at most {@code retainedBytesPerPool} freed bytes for reuse. */
  public MemoryManager(long retainedBytesPerPool) {
    if (retainedBytesPerPool < 0) {
      throw new IllegalArgumentException("retainedBytesPerPool >= 0 required but it was " + retainedBytesPerPool);
    }
    this.retainedBytesPerPool = retainedBytesPerPool;
  }

  /** A manager whose pools keep at most {@link #DEFAULT_RETAINED_BYTES_PER_POOL} freed bytes each. */
  public MemoryManager() {
    this(DEFAULT_RETAINED_BYTES_PER_POOL);
  }

  /** The process-wide manager used by pipelines unless {@link Options} names another. */
  public static MemoryManager shared() {
    return SHARED;
  }

  /** The pool of stage {@code stage}, created on first use. */
  public BufferPool pool(String stage) {
    return pools.computeIfAbsent(stage, s -> new BufferPool(s, retainedBytesPerPool));
  }

  /** Bytes handed out by every pool and not yet returned. */
  public long outstandingBytes() {
    long n = 0;
    for (BufferPool p : pools.values()) {
      n += p.outstandingBytes();
    }
    return n;
  }

  /** Outstanding bytes per stage, for the stages that have any. */
  public Map<String, Long> outstandingBytesByStage() {
    Map<String, Long> out = new TreeMap<>();
    for (BufferPool p : pools.values()) {
      long n = p.outstandingBytes();
      if (n != 0) {
        out.put(p.stage(), n);
      }
    }
    return out;
  }

  /**
   * Throws when any stage has bytes outstanding, naming the stages and their bytes.
   *
   * @throws IllegalStateException if memory is still handed out
   */
  public void checkNoOutstanding() {
    Map<String, Long> out = outstandingBytesByStage();
    if (!out.isEmpty()) {
      throw new IllegalStateException("off-heap memory still outstanding (bytes per stage): " + out);
    }
  }

  /** Drops every buffer kept for reuse (outstanding buffers are unaffected). */
  public void trim() {
    pools.values().forEach(BufferPool::trim);
  }
}
