package dev.sluice.core.internal.mapped;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * A column of fixed-size rows in a chunked region of a file (row {@code r} at byte
 * {@code r × rowBytes} of the region), and the bulk copies that gather rows of it into a batch
 * column: one copy per contiguous run of indices, value loads for 4- and 8-byte rows, and the
 * touch-then-copy pass that overlaps the cache misses of scattered rows. When the region is read
 * with positioned reads ({@link MappedChunks#positioned}), each run of adjacent rows is one
 * positioned read straight into the batch column, and a row view is a heap copy.
 */
public final class MappedRows {
  // The small-row loops load and store through these view handles rather than ByteBuffer.getLong
  // and putLong: a handle is bound statically, so the compiled loop inlines the access whatever
  // receiver types were profiled (see RawTouch). The native order on both sides makes a load and a
  // store a byte copy.
  private static final VarHandle INT = MethodHandles.byteBufferViewVarHandle(int[].class, ByteOrder.nativeOrder());
  private static final VarHandle LONG = MethodHandles.byteBufferViewVarHandle(long[].class, ByteOrder.nativeOrder());

  private final String resource;
  private final MappedChunks mapped;
  private final long rows;
  private final int rowBytes;
  private ByteBuffer single; // the region's one chunk once mapped, else null

  /**
   * @param resource the file, for messages
   * @param mapped the region, mapped in chunks of whole rows; may be null when {@code rows} or
   *     {@code rowBytes} is 0
   * @param rows rows in the region
   * @param rowBytes bytes per row, &gt;= 0
   */
  public MappedRows(String resource, MappedChunks mapped, long rows, int rowBytes) {
    this.resource = resource;
    this.mapped = mapped;
    this.rows = rows;
    this.rowBytes = rowBytes;
  }

  /** Number of rows. */
  public long rows() {
    return rows;
  }

  /** Bytes per row. */
  public int rowBytes() {
    return rowBytes;
  }

  /**
   * True when {@code indices[from..from+count)} are consecutive: a branch-free pass (an or of
   * differences, no early exit), cheaper than walking the run element by element.
   */
  public static boolean isOneRun(long[] indices, int from, int count) {
    if (count < 2) {
      return count == 1;
    }
    long first = indices[from];
    if (indices[from + count - 1] - first != count - 1) {
      return false;
    }
    long acc = 0;
    for (int k = 1; k < count; k++) {
      acc |= indices[from + k] - k ^ first;
    }
    return acc == 0;
  }

  /**
   * A view of row {@code row} (its first and last byte are loaded here, so a file truncated under
   * the mapping faults inside the caller's read boundary).
   */
  public ByteBuffer view(long row) {
    checked(row, 1);
    if (rowBytes == 0) {
      return ByteBuffer.allocate(0);
    }
    long start = row * rowBytes;
    if (!mapped.isMapped()) {
      ByteBuffer copy = ByteBuffer.allocate(rowBytes);
      mapped.copyTo(start, rowBytes, copy, 0);
      return copy;
    }
    ByteBuffer chunk = mapped.chunk(mapped.chunkIndex(start));
    int pos = mapped.positionInChunk(start);
    MappedReads.consume(chunk.get(pos) + chunk.get(pos + rowBytes - 1));
    return chunk.slice(pos, rowBytes);
  }

  /**
   * Loads one byte of each of the first (up to four) cache lines of the rows
   * {@code rows[positions[j]]}, {@code j} in {@code [from, to)}, which must exist: called for every
   * row of a scattered batch before any is copied (see {@link #copy}), so that their cache misses
   * overlap. Returns the sum of the loads, for {@link MappedReads#consume}.
   */
  public int touch(long[] rows, int[] positions, int from, int to) {
    if (mapped == null) {
      return 0;
    }
    int lines = (Math.min(rowBytes, 256) + 63) >>> 6;
    if (!mapped.isMapped()) {
      return mapped.touchCached(rows, positions, from, to, rowBytes, lines); // nothing to fault in ahead
    }
    ByteBuffer only = single();
    int sum = 0;
    for (int j = from; j < to; j++) {
      long start = rows[positions[j]] * rowBytes;
      ByteBuffer chunk;
      int pos;
      if (only != null) {
        chunk = only;
        pos = (int) start;
      } else {
        chunk = mapped.chunk(mapped.chunkIndex(start));
        pos = mapped.positionInChunk(start);
      }
      sum += touchLines(chunk, pos, lines);
    }
    return sum;
  }

  /**
   * Copies row {@code rows[p]} to {@code dst} row {@code dstRow + p}, for {@code p = positions[j]},
   * {@code j} in {@code [from, to)}; the rows must exist and have bytes. With the rows of one
   * mapping grouped this way, a batch drawn from several mappings is copied with the same tight loop
   * as one drawn from a single mapping.
   */
  public void copy(long[] rows, int[] positions, int from, int to, ByteBuffer dst, int dstRow) {
    int rb = rowBytes;
    ByteBuffer only = single();
    if (!mapped.isMapped()) {
      // positioned reads: one read per run of rows adjacent both in the file and in the batch
      int j = from;
      while (j < to) {
        int p = positions[j];
        int run = 1;
        while (j + run < to && positions[j + run] == p + run && rows[p + run] == rows[p] + run) {
          run++;
        }
        mapped.copyTo(rows[p] * rb, (long) run * rb, dst, (dstRow + p) * rb);
        j += run;
      }
    } else if (only == null) {
      for (int j = from; j < to; j++) {
        int p = positions[j];
        long start = rows[p] * rb;
        dst.put((dstRow + p) * rb, mapped.chunk(mapped.chunkIndex(start)), mapped.positionInChunk(start), rb);
      }
    } else if (rb == 8) {
      for (int j = from; j < to; j++) {
        int p = positions[j];
        LONG.set(dst, (dstRow + p) * 8, (long) LONG.get(only, (int) (rows[p] * 8)));
      }
    } else if (rb == 4) {
      for (int j = from; j < to; j++) {
        int p = positions[j];
        INT.set(dst, (dstRow + p) * 4, (int) INT.get(only, (int) (rows[p] * 4)));
      }
    } else {
      for (int j = from; j < to; j++) {
        int p = positions[j];
        dst.put((dstRow + p) * rb, only, (int) (rows[p] * rb), rb);
      }
    }
  }

  /** The region's one chunk, or null when it has several (or none). */
  private ByteBuffer single() {
    ByteBuffer s = single;
    if (s == null && mapped != null && mapped.isMapped() && mapped.chunkCount() == 1) {
      s = mapped.chunk(0);
      single = s; // a racing thread maps the same chunk: MappedChunks keeps one
    }
    return s;
  }

  /**
   * Copies rows {@code indices[from..from+count) - base} to {@code dst} at byte
   * {@code dstRow × rowBytes} onwards, row after row.
   *
   * @param oneRun the caller found {@code indices[from..from+count)} consecutive ({@link #isOneRun})
   * @throws IndexOutOfBoundsException naming the file when a row does not exist
   */
  public void copy(long[] indices, int from, int count, long base, ByteBuffer dst, int dstRow, boolean oneRun) {
    int fb = rowBytes;
    if (fb == 0 || count == 0 || mapped == null) { // no bytes to copy: only the bounds to check
      for (int i = 0; i < count; i++) {
        checked(indices[from + i] - base, 1);
      }
      return;
    }
    // one chunk (files up to the chunk size): plain offsets, no division per row
    ByteBuffer only = single();
    int i = 0;
    if (oneRun) {
      // the common in-order batch: one bulk copy, found without walking the run row by row
      long first = checked(indices[from] - base, count);
      if (only != null) {
        dst.put(dstRow * fb, only, (int) (first * fb), count * fb);
      } else {
        copyRange(first * fb, (long) count * fb, dst, dstRow * fb);
      }
      return;
    } else if (only != null && (fb == 8 || fb == 4)) {
      copySmallRows(only, indices, from, count, base, dst, dstRow);
      return;
    } else if (mapped.isMapped()) {
      touchScattered(only, indices, from, count, base);
    } else if (mapped.hasCache()) {
      for (int k = 0; k < count; k++) {
        checked(indices[from + k] - base, 1);
      }
      if (mapped.copyCachedRows(indices, from, count, base, fb, dst, dstRow)) {
        return; // every row copied out of the file's cached blocks
      }
    }
    while (i < count) {
      long first = indices[from + i] - base;
      int run = 1;
      while (i + run < count && indices[from + i + run] - base == first + run) {
        run++;
      }
      checked(first, run);
      if (only != null) {
        dst.put((dstRow + i) * fb, only, (int) (first * fb), run * fb);
      } else {
        copyRange(first * fb, (long) run * fb, dst, (dstRow + i) * fb);
      }
      i += run;
    }
  }

  /**
   * Loads one byte of each of the first (up to four) cache lines of every row that does not follow
   * its predecessor, before any row is copied. The loads are independent, so the CPU keeps many
   * cache and TLB misses in flight at once, where a copy loop waits for each row's misses in turn;
   * the copies then mostly read from cache, and the hardware prefetcher streams the rest of longer
   * rows. Rows that continue a run are left to the prefetcher too. The loop body is straight-line
   * on purpose: with an inner loop over the lines, compiled code kept fewer rows in flight.
   *
   * @param only the region's one chunk, or null when it has several
   */
  private void touchScattered(ByteBuffer only, long[] indices, int from, int count, long base) {
    if (count < 2 || indices[from + count - 1] - indices[from] == count - 1) {
      return; // one row, or (almost surely) one run in order: the prefetcher streams it
    }
    int lines = (Math.min(rowBytes, 256) + 63) >>> 6;
    int sum = 0;
    long previous = -2;
    for (int i = 0; i < count; i++) {
      long row = indices[from + i] - base;
      if (row == previous + 1) {
        previous = row;
        continue;
      }
      previous = row;
      checked(row, 1);
      long start = row * rowBytes;
      ByteBuffer chunk;
      int pos;
      if (only != null) {
        chunk = only; // no division per row: it would keep the loads from running ahead
        pos = (int) start;
      } else {
        chunk = mapped.chunk(mapped.chunkIndex(start));
        pos = mapped.positionInChunk(start);
      }
      sum += touchLines(chunk, pos, lines);
    }
    MappedReads.consume(sum);
  }

  /** The sum of one byte of each of the first {@code lines} (1 to 4) cache lines at {@code pos}. */
  private static int touchLines(ByteBuffer chunk, int pos, int lines) {
    return RawTouch.raw(chunk) ? RawTouch.byAddress(chunk, pos, lines) : RawTouch.byHandle(chunk, pos, lines);
  }

  /**
   * Rows of 8 or 4 bytes (a label, an id) one value load and store each: cheaper than a bulk copy
   * call per row, which is what a run of length one would cost.
   */
  private void copySmallRows(ByteBuffer only, long[] indices, int from, int count, long base, ByteBuffer dst,
      int dstRow) {
    if (rowBytes == 8) {
      for (int i = 0; i < count; i++) {
        long row = checked(indices[from + i] - base, 1);
        LONG.set(dst, (dstRow + i) * 8, (long) LONG.get(only, (int) (row * 8)));
      }
    } else {
      for (int i = 0; i < count; i++) {
        long row = checked(indices[from + i] - base, 1);
        INT.set(dst, (dstRow + i) * 4, (int) INT.get(only, (int) (row * 4)));
      }
    }
  }

  /**
   * {@code first}, after checking that rows {@code [first, first+run)} exist.
   *
   * @throws IndexOutOfBoundsException naming the file
   */
  public long checked(long first, int run) {
    return checkRows(first, run, rows, resource);
  }

  /**
   * {@code first}, after checking that rows {@code [first, first+run)} are in {@code [0, rows)}.
   *
   * @throws IndexOutOfBoundsException naming {@code resource}
   */
  public static long checkRows(long first, int run, long rows, String resource) {
    if (first < 0 || first + run > rows) {
      long bad = first < 0 ? first : first + run - 1;
      throw new IndexOutOfBoundsException("index " + bad + " out of bounds for " + rows + " rows of " + resource);
    }
    return first;
  }

  /** Copies region bytes {@code [start, start+length)} to {@code dst} at {@code at}, chunk by chunk. */
  private void copyRange(long start, long length, ByteBuffer dst, int at) {
    copyRange(mapped, start, length, dst, at);
  }

  /**
   * Copies bytes {@code [start, start+length)} of {@code mapped} to {@code dst} at {@code at}: chunk
   * by chunk from a mapping, one positioned read otherwise ({@link MappedChunks#copyTo}).
   */
  public static void copyRange(MappedChunks mapped, long start, long length, ByteBuffer dst, int at) {
    mapped.copyTo(start, length, dst, at);
  }
}
