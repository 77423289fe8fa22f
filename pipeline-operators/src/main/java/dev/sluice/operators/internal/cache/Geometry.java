package dev.sluice.operators.internal.cache;

import dev.sluice.core.Split;
import java.util.List;

/**
 * How a cache cuts its elements into blocks: per part (the one range of a random-access upstream,
 * or each split) consecutive blocks of {@code blockRows} rows, the last one shorter; a block never
 * crosses a part. Blocks are numbered from 0 through the parts in order; part {@code k}'s rows
 * carry the global indices {@code [starts[k], starts[k] + rows[k])}.
 */
final class Geometry {
  private final int blockRows;
  private final long[] rows;
  private final long[] starts; // global index of each part's first row
  private final long[] firstBlock; // firstBlock[k] = the first block of part k; [n] = the block count

  private Geometry(int blockRows, long[] rows) {
    this.blockRows = blockRows;
    this.rows = rows;
    this.starts = new long[rows.length + 1];
    this.firstBlock = new long[rows.length + 1];
    for (int k = 0; k < rows.length; k++) {
      starts[k + 1] = starts[k] + rows[k];
      firstBlock[k + 1] = firstBlock[k] + (rows[k] + blockRows - 1) / blockRows;
    }
  }

  /** One part of {@code size} rows. */
  static Geometry of(int blockRows, long size) {
    return new Geometry(blockRows, new long[] {size});
  }

  /** One part per split. */
  static Geometry of(int blockRows, List<Split> splits) {
    long[] r = new long[splits.size()];
    for (int k = 0; k < r.length; k++) {
      r[k] = splits.get(k).rowCount();
    }
    return new Geometry(blockRows, r);
  }

  int blockRows() {
    return blockRows;
  }

  long blockCount() {
    return firstBlock[rows.length];
  }

  long rows() {
    return starts[rows.length];
  }

  int parts() {
    return rows.length;
  }

  long partRows(int part) {
    return rows[part];
  }

  /** Global index of part {@code part}'s first row. */
  long partStart(int part) {
    return starts[part];
  }

  /** The block holding row {@code row} of part {@code part}. */
  long block(int part, long row) {
    return firstBlock[part] + row / blockRows;
  }

  /** The block holding global index {@code index} of a one-part geometry. */
  long blockOf(long index) {
    return index / blockRows;
  }

  /** The part of block {@code block}: the last part whose first block is at most {@code block} (empty parts have none). */
  int partOf(long block) {
    int lo = 0;
    int hi = rows.length - 1;
    while (lo < hi) {
      int mid = (lo + hi + 1) >>> 1;
      if (firstBlock[mid] <= block) {
        lo = mid;
      } else {
        hi = mid - 1;
      }
    }
    return lo;
  }

  /** The first row of block {@code block} within its part. */
  long blockFirstRow(long block) {
    int part = partOf(block);
    return (block - firstBlock[part]) * blockRows;
  }

  /** Rows of block {@code block}. */
  int blockSize(long block) {
    int part = partOf(block);
    long first = (block - firstBlock[part]) * blockRows;
    return (int) Math.min(blockRows, rows[part] - first);
  }

  /** The global index of block {@code block}'s first row. */
  long blockStart(long block) {
    int part = partOf(block);
    return starts[part] + (block - firstBlock[part]) * blockRows;
  }
}
