package dev.sluice.operators.internal;

/** One chunk of {@link FluxChunkedMap}: its inputs, then its results. State changes under the chunk's lock. */
final class FluxChunkedMapChunk {
  static final int PENDING = 0;
  static final int MAPPING = 1;
  static final int MAPPED = 2;
  static final int DISCARDED = 3;

  final Object[] inputs;
  final int size;
  final long fillNanos;
  /** Guarded by {@code this}; volatile so the drain can poll it without the lock. */
  volatile int state = PENDING;
  Object[] results;
  int resultCount;
  Throwable error;
  /** Next result to emit; drain only. */
  int next;

  FluxChunkedMapChunk(Object[] inputs, int size, long fillNanos) {
    this.inputs = inputs;
    this.size = size;
    this.fillNanos = fillNanos;
  }
}
