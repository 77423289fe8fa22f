package dev.sluice.core;

import java.util.Map;

/**
 * An allocation that cannot stay within a {@link MemoryManager}'s limit: a single buffer larger than
 * the limit, or no memory came back within the manager's wait. The message names the stage that
 * asked, the figures and the stages holding memory.
 */
public final class MemoryLimitException extends IllegalStateException {
  private static final long serialVersionUID = 1L;

  private final long limit;
  private final long requested;
  private final transient Map<String, Long> outstandingByStage;

  MemoryLimitException(String message, long limit, long requested, Map<String, Long> outstandingByStage,
      Throwable cause) {
    super(message, cause);
    this.limit = limit;
    this.requested = requested;
    this.outstandingByStage = Map.copyOf(outstandingByStage);
  }

  /** The limit in bytes. */
  public long limit() {
    return limit;
  }

  /** The bytes the failed allocation needed (its buffer's size class). */
  public long requested() {
    return requested;
  }

  /** Bytes handed out per stage when the allocation failed. */
  public Map<String, Long> outstandingByStage() {
    return outstandingByStage;
  }
}
