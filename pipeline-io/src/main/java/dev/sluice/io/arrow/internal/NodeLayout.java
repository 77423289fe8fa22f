package dev.sluice.io.arrow.internal;

/** The arrays (field nodes) of a record batch, the number of buffers of each, and their byte order. */
interface NodeLayout {
  /** Swap unit of the 16-byte views of {@code Utf8View} and {@code BinaryView}. */
  int SWAP_VIEWS = -1;
  /** Swap unit of {@code Interval(MONTH_DAY_NANO)}: int32, int32, int64. */
  int SWAP_MONTH_DAY_NANO = -2;

  /** Number of field nodes. */
  int nodeCount();

  /** Buffers of node {@code node}, or -1 for a view type (2 plus the batch's variadic count). */
  int bufferCount(int node);

  /** True when the buffers hold big-endian data, read byte-swapped. */
  default boolean bigEndian() {
    return false;
  }

  /**
   * How buffer {@code which} of node {@code node} is byte-swapped when {@link #bigEndian()}: 0 not
   * at all (bitmaps, bytes), {@code w} every {@code w}-byte value reversed, or
   * {@link #SWAP_VIEWS} / {@link #SWAP_MONTH_DAY_NANO}.
   */
  default int swapUnit(int node, int which) {
    return 0;
  }
}
