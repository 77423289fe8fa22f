package dev.sluice.core.internal.shardfile;

import dev.sluice.core.Example;
import dev.sluice.core.RandomAccessDataset;
import dev.sluice.core.internal.Resources;
import dev.sluice.core.internal.mapped.MappedReads;
import dev.sluice.core.internal.mapped.MappedRows;
import dev.sluice.core.spi.BatchBuilder;
import dev.sluice.core.spi.ColumnBuilder;
import java.nio.ByteBuffer;
import java.util.List;

/**
 * The rows of an ordered list of open shard files of one schema, indexed across them: row
 * {@code i} of file {@code k} is global row {@code starts[k] + i}, where {@code starts[0]} is the
 * global index of the first file's first row (its base). {@link #get} returns zero-copy
 * views of the mappings, {@link #gather} copies rows straight into a batch's columns, within one
 * file with that file's bulk copies and across files grouped by file. Both deliver a field of a
 * file only once the CRC32C of that field's blocks in that file has been checked (once per open
 * file, see {@link ShardFileReader}).
 */
public final class ShardRows {
  private static final ByteBuffer EMPTY = ByteBuffer.allocate(0);

  private final String resource;
  private final Object owner;
  private final List<ShardFileReader> readers;
  private final ShardColumnReader[][] columns; // [field][file]
  private final int bucketShift;
  private final int[] bucketShard; // the file of row b << bucketShift
  private final long[] starts; // starts[k] = first global row of file k; starts[n] = base + rows
  private final long base;
  // every field of every file checked: gathers skip the per-row checks (looked at again only after
  // a gather that checked a field, so at most once per field and file)
  private volatile boolean allVerified;

  /**
   * Rows of {@code readers}, which must share one list of field layouts, global rows from 0.
   *
   * @param resource what a fault across several files names (a directory)
   * @param owner what an index out of bounds names (the dataset)
   * @param fieldCount the number of fields of every reader
   */
  public ShardRows(String resource, Object owner, List<ShardFileReader> readers, int fieldCount) {
    this(resource, owner, readers, fieldCount, 0);
  }

  /**
   * Rows of {@code readers}, which must share one list of field layouts, global rows from
   * {@code base}.
   *
   * @param base the global index of the first file's first row, &ge; 0
   */
  public ShardRows(String resource, Object owner, List<ShardFileReader> readers, int fieldCount, long base) {
    this.resource = resource;
    this.owner = owner;
    this.base = base;
    this.readers = List.copyOf(readers);
    this.starts = new long[readers.size() + 1];
    starts[0] = base;
    for (int k = 0; k < readers.size(); k++) {
      starts[k + 1] = starts[k] + readers.get(k).rows();
    }
    long total = starts[readers.size()] - base;
    int shift = 0;
    while ((total - 1) >>> shift >= 64L * Math.max(1, readers.size())) {
      shift++;
    }
    this.bucketShift = shift;
    this.bucketShard = new int[(int) (Math.max(total - 1, 0) >>> shift) + 1];
    for (int b = 0, k = 0; b < bucketShard.length; b++) {
      long first = (long) b << shift;
      while (k + 1 < readers.size() && starts[k + 1] <= first) {
        k++;
      }
      bucketShard[b] = k;
    }
    this.columns = new ShardColumnReader[fieldCount][readers.size()];
    for (int f = 0; f < columns.length; f++) {
      for (int k = 0; k < readers.size(); k++) {
        columns[f][k] = readers.get(k).column(f);
      }
    }
  }

  /** The files, in order. */
  public List<ShardFileReader> readers() {
    return readers;
  }

  /** Rows of every file. */
  public long size() {
    return starts[starts.length - 1] - base;
  }

  /** The global index of the first row. */
  public long base() {
    return base;
  }

  /** The first global row of file {@code k}; {@code k = } the number of files gives {@code base + size()}. */
  public long start(int k) {
    return starts[k];
  }

  /**
   * The last file k with starts[k] <= index (so empty files are skipped): the file of the first
   * row of the index's bucket of 2^bucketShift rows, then forward past the boundaries inside the
   * bucket (none for almost every index).
   */
  private int shardOf(long index) {
    int k = bucketShard[(int) ((index - base) >>> bucketShift)];
    while (starts[k + 1] <= index) {
      k++;
    }
    return k;
  }

  /** Row {@code index} (global), its fields views of the mapping. */
  public Example get(long index) {
    checkIndex(index);
    int k = shardOf(index);
    ShardFileReader r = readers.get(k);
    Example.Builder fields = Example.builder(index);
    long row = index - starts[k];
    MappedReads.runAtRow(r.resource(), row, () -> r.putRow(row, index, fields));
    return fields.build();
  }

  /**
   * Copies the rows into the batch field by field and commits them: a batch inside one file with
   * that file's bulk copies (one per run of consecutive rows), a batch spread over several files
   * grouped by file, after loading the first cache lines of every row so that their misses overlap.
   * Variable-length values are located (and their offsets checked) first, so the batch's values
   * grow once.
   */
  public void gather(long[] indices, int from, int count, BatchBuilder target) {
    boolean oneRun = MappedRows.isOneRun(indices, from, count);
    if (oneRun) {
      checkIndex(indices[from]);
      checkIndex(indices[from + count - 1]);
    } else {
      for (int i = from; i < from + count; i++) {
        checkIndex(indices[i]);
      }
    }
    int start = target.size();
    if (count > 0) {
      int k0 = shardOf(indices[from]);
      long lo = starts[k0];
      long hi = starts[k0 + 1];
      boolean oneShard = oneRun ? indices[from + count - 1] < hi : inRange(indices, from, count, lo, hi);
      String where = oneShard ? readers.get(k0).resource() : resource;
      MappedReads.runAtRows(where, indices[from],
          () -> copyFields(indices, from, count, target, start, k0, lo, oneShard, oneRun));
    }
    if (oneRun) {
      target.commitRange(indices[from], count);
    } else {
      target.commitRows(indices, from, count);
    }
  }

  /**
   * The field-by-field copy of {@link #gather}: rows {@code indices[from..from+count)}, checked to
   * exist, into {@code target} from row {@code start}; {@code k0} is the first row's file and
   * {@code lo} its first global index.
   */
  private void copyFields(long[] indices, int from, int count, BatchBuilder target, int start, int k0, long lo,
      boolean oneShard, boolean oneRun) {
    int[] shard = null; // where each row is, computed when a field needs it
    long[] local = null;
    Grouped grouped = null;
    boolean checked = false; // some field of some file was checked by this call
    if (!oneShard) {
      shard = new int[count];
      local = new long[count];
      locate(indices, from, count, -1, shard, local);
    }
    for (int f = 0; f < columns.length; f++) {
      ShardColumnReader[] byShard = columns[f];
      if (!allVerified) {
        checked |= checkVerified(byShard, oneShard, k0, shard);
      }
      boolean fixed = byShard[k0].layout().kind() == FieldLayout.Kind.FIXED;
      if (fixed && oneShard) {
        byShard[k0].fixed().copy(indices, from, count, lo, target.fixedColumn(f), start, oneRun);
        if (!byShard[k0].nullable()) {
          continue;
        }
      }
      if (shard == null) {
        shard = new int[count];
        local = new long[count];
        locate(indices, from, count, oneShard ? k0 : -1, shard, local);
      }
      if (fixed && !oneShard) {
        if (grouped == null) {
          grouped = new Grouped(shard, readers.size());
        }
        copyScattered(byShard, grouped, local, target.fixedColumn(f), start);
      }
      if (fixed) {
        if (byShard[k0].nullable()) {
          for (int i = 0; i < count; i++) {
            if (!byShard[shard[i]].isValid(local[i])) {
              target.setNull(f, start + i);
            }
          }
        }
      } else {
        copyVariable(byShard, shard, local, indices, from, target, f);
      }
    }
    if (checked) {
      allVerified = everyFieldVerified();
    }
  }

  private boolean everyFieldVerified() {
    for (ShardColumnReader[] byShard : columns) {
      for (ShardColumnReader c : byShard) {
        if (!c.verified()) {
          return false;
        }
      }
    }
    return true;
  }

  /**
   * Checks the blocks of one field in every file the batch reads (see {@link ShardFileReader});
   * true when one of them was not known to be checked before.
   */
  private static boolean checkVerified(ShardColumnReader[] byShard, boolean oneShard, int k0, int[] shard) {
    if (oneShard) {
      return byShard[k0].checkVerified();
    }
    boolean checked = false;
    for (int k : shard) {
      checked |= byShard[k].checkVerified();
    }
    return checked;
  }

  private void checkIndex(long index) {
    if (base == 0) {
      RandomAccessDataset.checkIndex(index, size(), owner);
    } else if (index < base || index - base >= size()) {
      throw new IndexOutOfBoundsException("index " + index + " out of bounds for rows [" + base + ", "
          + (base + size()) + ") of " + owner);
    }
  }

  private static boolean inRange(long[] indices, int from, int count, long lo, long hi) {
    boolean in = true;
    for (int i = from; i < from + count; i++) {
      in &= indices[i] >= lo & indices[i] < hi;
    }
    return in;
  }

  /** The file of every row and its row in that file ({@code only} >= 0: they are all in that file). */
  private void locate(long[] indices, int from, int count, int only, int[] shard, long[] local) {
    for (int i = 0; i < count; i++) {
      long index = indices[from + i];
      int k = only >= 0 ? only : shardOf(index);
      shard[i] = k;
      local[i] = index - starts[k];
    }
  }

  /**
   * Fixed-length rows from several files, taken file by file ({@code byShard} groups the batch's
   * positions by file): first every row's first cache lines are touched, then the rows copied.
   */
  private static void copyScattered(ShardColumnReader[] columns, Grouped byShard, long[] local,
      ByteBuffer dst, int start) {
    int rowBytes = columns[0].fixed().rowBytes();
    if (rowBytes == 0) {
      return;
    }
    if (rowBytes > 8) {
      int sum = 0;
      for (int k : byShard.shards) {
        sum += columns[k].fixed().touch(local, byShard.positions, byShard.from[k], byShard.from[k + 1]);
      }
      MappedReads.consume(sum);
    }
    for (int k : byShard.shards) {
      columns[k].fixed().copy(local, byShard.positions, byShard.from[k], byShard.from[k + 1], dst, start);
    }
  }

  /** The positions of a batch grouped by file (a counting sort, stable): file k's are positions[from[k]..from[k+1]). */
  private static final class Grouped {
    final int[] positions;
    final int[] from;
    final int[] shards; // the files with rows, ascending

    Grouped(int[] shard, int shardCount) {
      int n = shard.length;
      from = new int[shardCount + 1];
      for (int s : shard) {
        from[s + 1]++;
      }
      int used = 0;
      for (int k = 0; k < shardCount; k++) {
        if (from[k + 1] > 0) {
          used++;
        }
        from[k + 1] += from[k];
      }
      shards = new int[used];
      for (int k = 0, u = 0; k < shardCount; k++) {
        if (from[k + 1] > from[k]) {
          shards[u++] = k;
        }
      }
      positions = new int[n];
      int[] next = java.util.Arrays.copyOf(from, shardCount);
      for (int i = 0; i < n; i++) {
        positions[next[shard[i]]++] = i;
      }
    }
  }

  /** Variable-length rows: every range located and checked, room made once, then one copy per row. */
  private static void copyVariable(ShardColumnReader[] byShard, int[] shard, long[] local, long[] indices,
      int from, BatchBuilder target, int field) {
    int n = shard.length;
    boolean nested = byShard[shard[0]].layout().kind() == FieldLayout.Kind.NESTED;
    int unit = byShard[shard[0]].layout().binaryLeaf() ? 1 : byShard[shard[0]].layout().itemBytes();
    long[] r = new long[2];
    long[] ranges = new long[2 * n]; // byte ranges of the innermost values (flat kinds), -1: a null row
    long bytes = 0;
    for (int i = 0; i < n; i++) {
      ShardColumnReader c = byShard[shard[i]];
      if (!c.isValid(local[i])) {
        ranges[2 * i] = -1;
        continue;
      }
      if (nested) {
        c.leafBytes(local[i], indices[from + i], r);
        ranges[2 * i] = r[0];
        ranges[2 * i + 1] = r[1];
      } else {
        c.range(local[i], indices[from + i], r);
        ranges[2 * i] = r[0] * unit;
        ranges[2 * i + 1] = r[1] * unit;
      }
      bytes += ranges[2 * i + 1] - ranges[2 * i];
    }
    ColumnBuilder column = target.column(field);
    column.reserveBytes(bytes);
    // one view of each file's values, reused for every row when the block is one chunk
    ByteBuffer[] views = new ByteBuffer[byShard.length];
    for (int i = 0; i < n; i++) {
      long a = ranges[2 * i];
      long b = ranges[2 * i + 1];
      if (a < 0) {
        column.addNull(0);
        continue;
      }
      int k = shard[i];
      if (nested) {
        byShard[k].appendNested(local[i], indices[from + i], column);
        continue;
      }
      ByteBuffer view = views[k];
      if (view == null) {
        ByteBuffer single = byShard[k].singleValuesChunk();
        view = single == null ? EMPTY : single.duplicate();
        views[k] = view;
      }
      if (view != EMPTY) {
        view.limit((int) b).position((int) a);
        column.appendVariable(view);
      } else {
        column.appendVariable(a == b ? EMPTY : byShard[k].bytes(a, b));
      }
    }
  }

  /** Checks every byte of every file against its stored checksums. */
  public void verify() {
    for (ShardFileReader r : readers) {
      r.verify();
    }
  }

  /** Closes every file; idempotent. */
  public void close() {
    Resources.closeAll(readers);
  }
}
