package dev.sluice.io.shards.internal;

import dev.sluice.core.Batch;
import dev.sluice.core.BatchBuilder;
import dev.sluice.core.BufferPool;
import dev.sluice.core.DatasetClosedException;
import dev.sluice.core.Example;
import dev.sluice.core.MemoryManager;
import dev.sluice.core.RandomAccessDataset;
import dev.sluice.core.Schema;
import dev.sluice.core.Split;
import dev.sluice.io.internal.MappedReads;
import dev.sluice.io.internal.MappedRows;
import dev.sluice.io.shards.ShardInfo;
import dev.sluice.io.shards.ShardSet;
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

  private final Path dir;
  private final ShardMetadata meta;
  private final List<ShardReader> readers;
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
      for (ShardReader r : readers) {
        try {
          r.close();
        } catch (RuntimeException suppressed) {
          e.addSuppressed(suppressed);
        }
      }
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

  /** The last shard k with starts[k] <= index (so empty shards are skipped). */
  private int shardOf(long index) {
    int lo = 0;
    int hi = starts.length - 2;
    while (lo < hi) {
      int mid = (lo + hi + 1) >>> 1;
      if (starts[mid] <= index) {
        lo = mid;
      } else {
        hi = mid - 1;
      }
    }
    return lo;
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

  @Override
  public void gather(long[] indices, int from, int count, BatchBuilder target) {
    checkOpen();
    long total = size();
    for (int i = from; i < from + count; i++) {
      RandomAccessDataset.checkIndex(indices[i], total, this);
    }
    int start = target.size();
    boolean oneRun = MappedRows.isOneRun(indices, from, count); // every index was checked above
    int i = from;
    while (i < from + count) {
      int k = shardOf(indices[i]);
      long lo = starts[k];
      long hi = starts[k + 1];
      int run = 1;
      while (i + run < from + count && indices[i + run] >= lo && indices[i + run] < hi) {
        run++;
      }
      ShardReader r = readers.get(k);
      try {
        boolean segmentRun = oneRun || run != count && MappedRows.isOneRun(indices, i, run);
        r.copyRows(indices, i, run, lo, target, start + (i - from), segmentRun);
        MappedReads.endRead();
      } catch (InternalError e) {
        throw MappedReads.changedWhileMapped(r.resource(), "rows " + (indices[i] - lo) + "..", e);
      }
      i += run;
    }
    if (oneRun) {
      target.commitRange(indices[from], count);
    } else {
      target.commitRows(indices, from, count);
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
      return Flux.<Example, long[]>generate(() -> new long[] {first}, (state, sink) -> {
        if (state[0] < end) {
          sink.next(get(state[0]++));
        } else {
          sink.complete();
        }
        return state;
      });
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
        long[] indices = new long[n];
        for (int i = 0; i < n; i++) {
          indices[i] = pos + i;
        }
        try (BatchBuilder b = BatchBuilder.create(schema(), n, pool)) {
          gather(indices, 0, n, b);
          sink.next(b.build());
        }
        state[0] = pos + n;
        return state;
      });
    });
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
    RuntimeException failure = null;
    for (ShardReader r : readers) {
      try {
        r.close();
      } catch (RuntimeException e) {
        if (failure == null) {
          failure = e;
        } else {
          failure.addSuppressed(e);
        }
      }
    }
    if (failure != null) {
      throw failure;
    }
  }

  @Override
  public String toString() {
    return "shards(" + dir + ", " + readers.size() + " shards, rows=" + size() + ")";
  }
}
