package dev.sluice.io.shards.internal;

import dev.sluice.core.Batch;
import dev.sluice.core.BatchBuilder;
import dev.sluice.core.BufferPool;
import dev.sluice.core.ColumnBuilder;
import dev.sluice.core.DatasetClosedException;
import dev.sluice.core.Example;
import dev.sluice.core.MemoryManager;
import dev.sluice.core.RandomAccessDataset;
import dev.sluice.core.Schema;
import dev.sluice.core.Split;
import dev.sluice.io.internal.MappedReads;
import dev.sluice.io.internal.MappedRows;
import dev.sluice.io.internal.Resources;
import dev.sluice.io.internal.RowRange;
import dev.sluice.io.shards.ShardInfo;
import dev.sluice.io.shards.ShardSet;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import reactor.core.publisher.Flux;

/** A shard set opened from its directory: every shard open and checked, rows indexed across them. */
public final class ShardSetDataset implements ShardSet {
  /** The memory-manager stage {@link #readBatches} allocates from. */
  public static final String STAGE = "shards";
  private static final ByteBuffer EMPTY = ByteBuffer.allocate(0);

  private final Path dir;
  private final ShardMetadata meta;
  private final List<ShardReader> readers;
  private final ShardReader.ColumnReader[][] columns; // [field][shard]
  private final int bucketShift;
  private final int[] bucketShard; // the shard of row b << bucketShift
  private final long[] starts; // starts[k] = first global row of shard k; starts[n] = total
  private final List<Split> splits;
  private final Map<Split, Integer> splitNumbers = new HashMap<>();
  private volatile boolean closed;

  private ShardSetDataset(Path dir, ShardMetadata meta, List<ShardReader> readers) {
    this.dir = dir;
    this.meta = meta;
    this.readers = readers;
    this.starts = new long[readers.size() + 1];
    List<Split> s = new ArrayList<>(readers.size());
    String dirName = dir.getFileName() == null ? dir.toString() : dir.getFileName().toString();
    for (int k = 0; k < readers.size(); k++) {
      starts[k + 1] = starts[k] + readers.get(k).rows();
      Split split = new Split(dirName + "/" + readers.get(k).name(), readers.get(k).rows());
      s.add(split);
      splitNumbers.put(split, k);
    }
    this.splits = List.copyOf(s);
    long total = starts[readers.size()];
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
    this.columns = new ShardReader.ColumnReader[meta.schema().size()][readers.size()];
    for (int f = 0; f < columns.length; f++) {
      for (int k = 0; k < readers.size(); k++) {
        columns[f][k] = readers.get(k).column(f);
      }
    }
  }

  /**
   * Opens the shard set in {@code dir}: reads {@code metadata.json}, opens every shard and checks its
   * header and footer; closes what it opened when anything fails.
   *
   * @param maxChunkBytes the largest single mapping, in [1, {@link Integer#MAX_VALUE}]
   */
  public static ShardSetDataset open(Path dir, long maxChunkBytes) {
    ShardMetadata meta = ShardMetadata.read(dir);
    List<FieldLayout> layouts = FieldLayout.of(meta.schema().fields());
    List<ShardReader> readers = new ArrayList<>(meta.shards().size());
    try {
      List<ShardInfo> shards = meta.shards();
      for (int k = 0; k < shards.size(); k++) {
        readers.add(ShardReader.open(dir, shards.get(k), k, shards.size(), layouts, maxChunkBytes));
      }
      return new ShardSetDataset(dir, meta, List.copyOf(readers));
    } catch (RuntimeException e) {
      Resources.closeAfter(e, readers);
      throw e;
    }
  }

  @Override
  public Path path() {
    return dir;
  }

  @Override
  public List<ShardInfo> shards() {
    return meta.shards();
  }

  @Override
  public Schema schema() {
    return meta.schema();
  }

  @Override
  public long size() {
    return starts[starts.length - 1];
  }

  private void checkOpen() {
    if (closed) {
      throw new DatasetClosedException(dir.toString());
    }
  }

  /**
   * The last shard k with starts[k] <= index (so empty shards are skipped): the shard of the first
   * row of the index's bucket of 2^bucketShift rows, then forward past the boundaries inside the
   * bucket (none for almost every index).
   */
  private int shardOf(long index) {
    int k = bucketShard[(int) (index >>> bucketShift)];
    while (starts[k + 1] <= index) {
      k++;
    }
    return k;
  }

  @Override
  public Example get(long index) {
    checkOpen();
    RandomAccessDataset.checkIndex(index, size(), this);
    int k = shardOf(index);
    ShardReader r = readers.get(k);
    Example.Builder fields = Example.builder(index);
    try {
      r.putRow(index - starts[k], index, fields);
      MappedReads.endRead();
    } catch (InternalError e) {
      throw MappedReads.changedWhileMapped(r.resource(), "row " + (index - starts[k]), e);
    }
    return fields.build();
  }

  /**
   * Copies the rows into the batch field by field: a batch inside one shard with that shard's bulk
   * copies (one per run of consecutive rows), a batch spread over several shards row by row,
   * after loading the first cache lines of every row so that their misses overlap. Variable-length
   * values are located (and their offsets checked) first, so the batch's values grow once.
   */
  @Override
  public void gather(long[] indices, int from, int count, BatchBuilder target) {
    checkOpen();
    long total = size();
    boolean oneRun = MappedRows.isOneRun(indices, from, count);
    if (oneRun) {
      RandomAccessDataset.checkIndex(indices[from], total, this);
      RandomAccessDataset.checkIndex(indices[from + count - 1], total, this);
    } else {
      for (int i = from; i < from + count; i++) {
        RandomAccessDataset.checkIndex(indices[i], total, this);
      }
    }
    int start = target.size();
    if (count > 0) {
      int k0 = shardOf(indices[from]);
      long lo = starts[k0];
      long hi = starts[k0 + 1];
      boolean oneShard = oneRun ? indices[from + count - 1] < hi : inRange(indices, from, count, lo, hi);
      int[] shard = null; // where each row is, computed when a field needs it
      long[] local = null;
      Grouped grouped = null;
      try {
        for (int f = 0; f < columns.length; f++) {
          ShardReader.ColumnReader[] byShard = columns[f];
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
        MappedReads.endRead();
      } catch (InternalError e) {
        String where = oneShard ? readers.get(k0).resource() : dir.toString();
        throw MappedReads.changedWhileMapped(where, "rows " + indices[from] + "..", e);
      }
    }
    if (oneRun) {
      target.commitRange(indices[from], count);
    } else {
      target.commitRows(indices, from, count);
    }
  }

  private static boolean inRange(long[] indices, int from, int count, long lo, long hi) {
    boolean in = true;
    for (int i = from; i < from + count; i++) {
      in &= indices[i] >= lo & indices[i] < hi;
    }
    return in;
  }

  /** The shard of every row and its row in that shard ({@code only} >= 0: they are all in that shard). */
  private void locate(long[] indices, int from, int count, int only, int[] shard, long[] local) {
    for (int i = 0; i < count; i++) {
      long index = indices[from + i];
      int k = only >= 0 ? only : shardOf(index);
      shard[i] = k;
      local[i] = index - starts[k];
    }
  }

  /**
   * Fixed-length rows from several shards, taken shard by shard ({@code byShard} groups the batch's
   * positions by shard): first every row's first cache lines are touched, then the rows copied.
   */
  private static void copyScattered(ShardReader.ColumnReader[] columns, Grouped byShard, long[] local, ByteBuffer dst,
      int start) {
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

  /** The positions of a batch grouped by shard (a counting sort, stable): shard k's are positions[from[k]..from[k+1]). */
  private static final class Grouped {
    final int[] positions;
    final int[] from;
    final int[] shards; // the shards with rows, ascending

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
  private static void copyVariable(ShardReader.ColumnReader[] byShard, int[] shard, long[] local, long[] indices,
      int from, BatchBuilder target, int field) {
    int n = shard.length;
    boolean nested = byShard[shard[0]].layout().kind() == FieldLayout.Kind.NESTED;
    int unit = byShard[shard[0]].layout().binaryLeaf() ? 1 : byShard[shard[0]].layout().itemBytes();
    long[] r = new long[2];
    long[] ranges = new long[2 * n]; // byte ranges of the innermost values (flat kinds), -1: a null row
    long bytes = 0;
    for (int i = 0; i < n; i++) {
      ShardReader.ColumnReader c = byShard[shard[i]];
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
    // one view of each shard's values, reused for every row when the block is one chunk
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

  @Override
  public List<Split> splits() {
    checkOpen();
    return splits;
  }

  private int shardNumber(Split split) {
    Integer k = splitNumbers.get(split);
    if (k == null) {
      throw new IllegalArgumentException("split " + split + " is not a shard of " + this);
    }
    return k;
  }

  private static void checkRange(Split split, long fromRow, long toRow) {
    if (fromRow < 0 || toRow < fromRow) {
      throw new IllegalArgumentException("rows [" + fromRow + ", " + toRow + ") of " + split
          + ": expected 0 <= fromRow <= toRow");
    }
  }

  @Override
  public Flux<Example> read(Split split, long fromRow, long toRow) {
    return Flux.defer(() -> {
      int k = shardNumber(split);
      checkRange(split, fromRow, toRow);
      long first = starts[k] + Math.min(fromRow, split.rowCount());
      long end = starts[k] + Math.min(toRow, split.rowCount());
      return RowRange.flux(this, first, end);
    });
  }

  @Override
  public boolean supportsBatches() {
    return true;
  }

  /** Rows of one shard gathered into batches (bulk copies) from the memory-manager stage {@value #STAGE}. */
  @Override
  public Flux<Batch> readBatches(Split split, long fromRow, long toRow, int batchSize) {
    if (batchSize <= 0) {
      throw new IllegalArgumentException("batchSize > 0 required but it was " + batchSize);
    }
    return Flux.defer(() -> {
      int k = shardNumber(split);
      checkRange(split, fromRow, toRow);
      long first = starts[k] + Math.min(fromRow, split.rowCount());
      long end = starts[k] + Math.min(toRow, split.rowCount());
      BufferPool pool = MemoryManager.shared().pool(STAGE);
      return Flux.<Batch, long[]>generate(() -> new long[] {first}, (state, sink) -> {
        long pos = state[0];
        if (pos >= end) {
          sink.complete();
          return state;
        }
        int n = (int) Math.min(batchSize, end - pos);
        sink.next(gatherRange(this, schema(), pos, n, pool));
        state[0] = pos + n;
        return state;
      });
    });
  }

  /** Rows {@code [first, first + count)} of {@code source} gathered into one batch from {@code pool}. */
  static Batch gatherRange(RandomAccessDataset<Example> source, Schema schema, long first, int count, BufferPool pool) {
    long[] indices = new long[count];
    for (int i = 0; i < count; i++) {
      indices[i] = first + i;
    }
    try (BatchBuilder b = BatchBuilder.create(schema, count, pool)) {
      source.gather(indices, 0, count, b);
      return b.build();
    }
  }

  /** Checks every byte of every shard against its stored checksums. */
  @Override
  public void verify() {
    checkOpen();
    for (ShardReader r : readers) {
      try {
        r.verify();
      } catch (InternalError e) {
        throw MappedReads.changedWhileMapped(r.resource(), null, e);
      }
    }
  }

  @Override
  public void close() {
    closed = true;
    Resources.closeAll(readers);
  }

  @Override
  public String toString() {
    return "shards(" + dir + ", " + readers.size() + " shards, rows=" + size() + ")";
  }
}
