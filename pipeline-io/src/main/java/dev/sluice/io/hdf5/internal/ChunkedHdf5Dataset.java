package dev.sluice.io.hdf5.internal;

import dev.sluice.core.Batch;
import dev.sluice.core.BatchSplitDataset;
import dev.sluice.core.Example;
import dev.sluice.core.MemoryManager;
import dev.sluice.core.Split;
import dev.sluice.core.Tensor;
import dev.sluice.core.internal.mapped.MappedReads;
import dev.sluice.core.spi.BatchBuilder;
import dev.sluice.core.spi.BufferPool;
import dev.sluice.core.spi.PooledBuffer;
import dev.sluice.io.hdf5.Hdf5Dataset;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import reactor.core.publisher.Flux;

/**
 * An HDF5 file with at least one chunked dataset among the chosen ones: a split source whose
 * splits are runs of whole chunks (of the first chunked dataset) along the first dimension. A read
 * decodes one chunk row at a time (every field's rows of it, {@link ChunkDecoder}) and emits its
 * examples, or, on the columnar path ({@link #readBatches}), decodes it into pooled memory and copies
 * its rows into the columns of pooled batches; a read may start at any chunk boundary at no extra
 * cost ({@link #blockStarts}), and a shuffle's blocks hold whole chunks ({@link #blockAlignment}).
 * Reads of different splits may run on different threads at once (a
 * pipeline's decode parallelism); the decoded chunk rows of a read are released when it completes,
 * fails or is cancelled.
 */
public final class ChunkedHdf5Dataset extends Hdf5Fields implements Hdf5Dataset, BatchSplitDataset<Example> {
  /** The memory stage of the batches {@link #readBatches} fills. */
  static final String STAGE = "hdf5";
  /**
   * Decoded bytes a split aims at (whole chunks, at least one): small enough that a pipeline's
   * decode parallelism has several splits to decode at once and a shuffle of the split order mixes
   * well, large enough that a split holds whole chunks of typical sizes.
   */
  public static final long SPLIT_BYTES = 1L << 20;

  private final int chunkRows;
  private final List<Split> splits;
  private final Map<String, Long> splitStart = new HashMap<>();

  /** Reads the fields of {@code file}, at least one of them chunked, in splits of about {@link #SPLIT_BYTES}. */
  public ChunkedHdf5Dataset(Hdf5File file, long maxChunkBytes) {
    this(file, maxChunkBytes, SPLIT_BYTES);
  }

  /**
   * Reads the fields of {@code file}, at least one of them chunked, in splits of about
   * {@code splitBytes} decoded bytes (whole chunks, at least one per split).
   */
  public ChunkedHdf5Dataset(Hdf5File file, long maxChunkBytes, long splitBytes) {
    super(file, maxChunkBytes);
    if (splitBytes < 1) {
      throw new IllegalArgumentException("splitBytes > 0 required but it was " + splitBytes);
    }
    int c = 0;
    long rowBytes = 0;
    for (Hdf5Field f : file.fields()) {
      if (f.storage() == Hdf5Field.Storage.CHUNKED && c == 0) {
        c = Math.max(1, f.chunkRows());
      }
      rowBytes += f.isNumeric() ? f.rowBytes() : 16;
    }
    this.chunkRows = c;
    long chunksPerSplit = Math.max(1, splitBytes / Math.max(1, rowBytes * c));
    long rowsPerSplit = chunksPerSplit * c;
    List<Split> s = new ArrayList<>();
    for (long start = 0; start < rows; start += rowsPerSplit) {
      Split split = new Split(file.resource() + "#rows" + start, Math.min(rowsPerSplit, rows - start));
      s.add(split);
      splitStart.put(split.id(), start);
    }
    this.splits = List.copyOf(s);
  }

  @Override
  public List<Split> splits() {
    return splits;
  }

  @Override
  public long[] blockStarts(Split split) {
    long n = (split.rowCount() + chunkRows - 1) / chunkRows;
    long[] out = new long[(int) n];
    for (int i = 0; i < n; i++) {
      out[i] = (long) i * chunkRows;
    }
    return out;
  }

  /** The chunk rows along the first dimension: every split starts on a chunk boundary. */
  @Override
  public long blockAlignment(Split split) {
    return chunkRows;
  }

  @Override
  public Flux<Example> read(Split split, long fromRow, long toRow) {
    split.checkRows(fromRow, toRow);
    Long base = splitStart.get(split.id());
    if (base == null) {
      return Flux.error(new IllegalArgumentException(split + " is not a split of " + this));
    }
    long first = base + Math.min(fromRow, split.rowCount());
    long end = base + Math.min(toRow, split.rowCount());
    return Flux.defer(() -> {
      List<long[]> bands = new ArrayList<>();
      for (long a = first; a < end; ) {
        long b = Math.min(end, (a / chunkRows + 1) * chunkRows);
        bands.add(new long[] {a, b});
        a = b;
      }
      return Flux.fromIterable(bands).concatMap(band -> Flux.defer(() -> band(band[0], (int) (band[1] - band[0]))), 0);
    });
  }

  @Override
  public Flux<Batch> readBatches(Split split, long fromRow, long toRow, int batchSize) {
    return readBatches(split, fromRow, toRow, batchSize, batchSize);
  }

  /** As {@link #readBatches(Split, long, long, int)} with a first batch of {@code firstBatchSize} rows, decoded once. */
  @Override
  public Flux<Batch> readBatches(Split split, long fromRow, long toRow, int firstBatchSize, int batchSize) {
    BatchSplitDataset.checkBatchSizes(firstBatchSize, batchSize);
    split.checkRows(fromRow, toRow);
    Long base = splitStart.get(split.id());
    if (base == null) {
      return Flux.error(new IllegalArgumentException(split + " is not a split of " + this));
    }
    long first = base + Math.min(fromRow, split.rowCount());
    long end = base + Math.min(toRow, split.rowCount());
    BufferPool pool = MemoryManager.shared().pool(STAGE);
    return Flux.<Batch, Cursor>generate(() -> new Cursor(first, readers.size()), (c, sink) -> {
      if (c.pos >= end) {
        sink.complete();
        return c;
      }
      int n = (int) Math.min(c.pos == first ? firstBatchSize : batchSize, end - c.pos);
      sink.next(fill(c, n, pool));
      if (c.pos >= end) {
        // release and complete with the last batch, not on a further request or a cleanup: a
        // consumer that fused this generate and stops polling must not leave decoded chunk rows held
        c.release();
        sink.complete();
      }
      return c;
    }, Cursor::release);
  }

  /**
   * Where a columnar read stands: its next row and the decoded chunk row that holds it, each
   * fixed-length field's rows of it in pooled memory (released when the read moves on to the next
   * chunk row and when it completes, fails or is cancelled).
   */
  private static final class Cursor {
    long pos;
    long bandStart = -1;
    long bandEnd = -1;
    final PooledBuffer[] decoded;
    final ByteBuffer[] blocks;

    Cursor(long pos, int fields) {
      this.pos = pos;
      this.decoded = new PooledBuffer[fields];
      this.blocks = new ByteBuffer[fields];
    }

    void release() {
      for (int f = 0; f < decoded.length; f++) {
        if (decoded[f] != null) {
          decoded[f].close();
          decoded[f] = null;
          blocks[f] = null;
        }
      }
    }
  }

  /** The next {@code n} rows of {@code c} as one batch: each field's rows copied from the decoded chunk rows. */
  private Batch fill(Cursor c, int n, BufferPool pool) {
    BatchBuilder b = BatchBuilder.create(schema, n, pool);
    try {
      long start = c.pos;
      int done = 0;
      while (done < n) {
        if (c.pos >= c.bandEnd) {
          c.bandStart = c.pos;
          c.bandEnd = Math.min(rows, (c.pos / chunkRows + 1) * chunkRows);
          decodeBand(c, pool);
        }
        int take = (int) Math.min(n - done, c.bandEnd - c.pos);
        int at = (int) (c.pos - c.bandStart);
        for (int f = 0; f < readers.size(); f++) {
          FieldReader r = readers.get(f);
          if (r.isString()) {
            for (int i = 0; i < take; i++) {
              b.appendVariable(f, r.stringBytes(c.pos + i));
            }
          } else {
            int rb = r.field().rowBytes();
            b.fixedColumn(f).put(done * rb, c.blocks[f], at * rb, take * rb);
          }
        }
        done += take;
        c.pos += take;
      }
      b.commitRange(start, n);
      return b.build();
    } finally {
      b.close();
    }
  }

  /** Decodes chunk row {@code [c.bandStart, c.bandEnd)} of every fixed-length field into pooled memory. */
  private void decodeBand(Cursor c, BufferPool pool) {
    c.release();
    file.checkOpen();
    int count = (int) (c.bandEnd - c.bandStart);
    for (int f = 0; f < readers.size(); f++) {
      FieldReader r = readers.get(f);
      if (!r.isString()) {
        c.decoded[f] = pool.allocate((long) count * r.field().rowBytes());
        c.blocks[f] = c.decoded[f].buffer();
        r.decodeInto(c.bandStart, count, c.blocks[f], 0);
      }
    }
  }

  private Flux<Example> band(long first, int count) {
    ByteBuffer[] blocks = decode(first, count);
    return Flux.range(0, count).map(i -> {
      long row = first + i;
      Example.Builder b = Example.builder(row);
      for (int f = 0; f < readers.size(); f++) {
        FieldReader r = readers.get(f);
        if (r.isString()) {
          b.put(r.spec().name(), r.row(row));
        } else {
          int rb = r.field().rowBytes();
          b.put(r.spec().name(), Tensor.wrap(r.spec().dtype(), r.spec().shape(), blocks[f].slice(i * rb, rb)));
        }
      }
      return b.build();
    });
  }

  /** Every fixed-length field's rows {@code [first, first+count)}, little-endian (null for strings). */
  private ByteBuffer[] decode(long first, int count) {
    file.checkOpen();
    ByteBuffer[] blocks = new ByteBuffer[readers.size()];
    MappedReads.runAtRows(file.resource(), first, () -> {
      for (int f = 0; f < readers.size(); f++) {
        FieldReader r = readers.get(f);
        if (!r.isString()) {
          blocks[f] = r.block(first, count);
        }
      }
    });
    return blocks;
  }

  @Override
  public String toString() {
    return "hdf5(" + file.path() + ", rows=" + rows + ", fields=" + schema + ", chunked)";
  }
}
