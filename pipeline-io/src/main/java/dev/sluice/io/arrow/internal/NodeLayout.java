package dev.sluice.io.arrow.internal;

/** The arrays (field nodes) of a record batch and the number of buffers of each. */
interface NodeLayout {
  /** Number of field nodes. */
  int nodeCount();

  /** Buffers of node {@code node}, or -1 for a view type (2 plus the batch's variadic count). */
  int bufferCount(int node);
}
