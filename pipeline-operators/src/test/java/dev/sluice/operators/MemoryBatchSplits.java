package dev.sluice.operators;

import dev.sluice.core.Batch;
import dev.sluice.core.BatchSplitDataset;
import dev.sluice.core.DType;
import dev.sluice.core.Example;
import dev.sluice.core.MemoryManager;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.Schema;
import dev.sluice.core.Shape;
import dev.sluice.core.Split;
import dev.sluice.core.SplitDataset;
import dev.sluice.core.Tensor;
import dev.sluice.core.TensorSpec;
import dev.sluice.core.spi.BatchBuilder;
import dev.sluice.core.spi.BufferPool;
import dev.sluice.core.spi.ColumnBuilder;
import dev.sluice.core.spi.ColumnCursor;
import dev.sluice.core.testing.BatchContents;
import dev.sluice.core.testing.CheckedCursor;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import reactor.core.publisher.Flux;

/**
 * An in-memory split source that decodes into batches, for columnar-path tests: split {@code i}
 * holds {@code sizes[i]} consecutive global indices; every row has an int64 {@code id}, a
 * {@code float32[3]} {@code x}, a nullable string {@code s} (null every 5th row, empty every 7th)
 * and a nullable float32 {@code f} (null every 3rd row), all computed from the index. The row path
 * ({@link #read}) builds its examples directly, not from batches; every range read is recorded.
 * {@link #byColumns} makes one that also decodes a column at a time ({@link #openColumns}), each
 * cursor's range recorded as it is opened.
 */
class MemoryBatchSplits implements BatchSplitDataset<Example> {
  static final Schema SCHEMA = Schema.of(
      new TensorSpec("id", DType.INT64, Shape.scalar()),
      new TensorSpec("x", DType.FLOAT32, Shape.of(3)),
      new TensorSpec("s", DType.STRING, Shape.scalar(), true),
      new TensorSpec("f", DType.FLOAT32, Shape.scalar(), true));

  final List<Split> splits = new ArrayList<>();
  final long[] offsets;
  final long[] sizes;
  final List<String> reads = Collections.synchronizedList(new ArrayList<>());
  final BufferPool pool;
  final int parallelism;
  /** Whether {@link #openColumns} decodes a column at a time (a subclass may set it). */
  boolean columns;
  /** Cursors opened and not yet closed. */
  final AtomicInteger openCursors = new AtomicInteger();

  MemoryBatchSplits(long... sizes) {
    this(MemoryManager.shared(), 1, sizes);
  }

  MemoryBatchSplits(MemoryManager memory, int parallelism, long... sizes) {
    this.sizes = sizes.clone();
    this.offsets = new long[sizes.length];
    this.pool = memory.pool("test-source");
    this.parallelism = parallelism;
    long base = 0;
    for (int i = 0; i < sizes.length; i++) {
      splits.add(new Split("s" + i, sizes[i]));
      offsets[i] = base;
      base += sizes[i];
    }
  }

  /** A source of these splits that decodes a column at a time as well. */
  static MemoryBatchSplits byColumns(long... sizes) {
    MemoryBatchSplits s = new MemoryBatchSplits(sizes);
    s.columns = true;
    return s;
  }

  long size() {
    return Arrays.stream(sizes).sum();
  }

  /** Row {@code i} as the row path delivers it. */
  static Example row(long i) {
    Example.Builder b = Example.builder(i)
        .put("id", Tensor.scalar(i))
        .put("x", Tensor.of(i * 0.5f, (float) -i, (float) (i % 13)));
    if (i % 5 == 0) {
      b.putNull("s");
    } else {
      b.put("s", Tensor.ofString(i % 7 == 0 ? "" : "row-" + i + "-" + "abcdefghij".substring(0, (int) (i % 11 % 10))));
    }
    if (i % 3 == 0) {
      b.putNull("f");
    } else {
      b.put("f", Tensor.scalar(i * 0.25f));
    }
    return b.build();
  }

  @Override
  public Schema schema() {
    return SCHEMA;
  }

  @Override
  public List<Split> splits() {
    return splits;
  }

  @Override
  public int decodeParallelism() {
    return parallelism;
  }

  private long base(Split split) {
    int i = splits.indexOf(split);
    if (i < 0) {
      throw new IllegalArgumentException("not a split: " + split);
    }
    return offsets[i];
  }

  @Override
  public Flux<Example> read(Split split, long fromRow, long toRow) {
    long base = base(split);
    long end = Math.min(toRow, split.rowCount());
    return Flux.defer(() -> {
      reads.add(split.id() + "[" + fromRow + "," + end + ")");
      return Flux.range(0, (int) Math.max(0, end - fromRow)).map(r -> row(base + fromRow + r));
    });
  }

  @Override
  public Flux<Batch> readBatches(Split split, long fromRow, long toRow, int batchSize) {
    return readBatches(split, fromRow, toRow, batchSize, batchSize);
  }

  @Override
  public Flux<Batch> readBatches(Split split, long fromRow, long toRow, int firstBatchSize, int batchSize) {
    long base = base(split);
    long end = Math.min(toRow, split.rowCount());
    return Flux.defer(() -> {
      reads.add(split.id() + "[" + fromRow + "," + end + ")");
      long[] next = {fromRow};
      return Flux.<Batch>generate(sink -> {
        long from = next[0];
        if (from >= end) {
          sink.complete();
          return;
        }
        int n = (int) Math.min(from == fromRow ? firstBatchSize : batchSize, end - from);
        try (BatchBuilder builder = BatchBuilder.create(SCHEMA, n, pool)) {
          for (int r = 0; r < n; r++) {
            builder.append(row(base + from + r));
          }
          next[0] = from + n;
          sink.next(builder.build());
        }
      }).doOnDiscard(Batch.class, Batch::close);
    });
  }

  @Override
  public boolean decodesColumns() {
    return columns;
  }

  @Override
  public ColumnCursor openColumns(Split split, long fromRow, long toRow) {
    if (!columns) {
      return BatchSplitDataset.super.openColumns(split, fromRow, toRow);
    }
    long base = base(split);
    long end = Math.min(toRow, split.rowCount());
    reads.add(split.id() + "[" + fromRow + "," + end + ")");
    openCursors.incrementAndGet();
    return new Cursor(split.id(), base + fromRow, Math.max(0, end - fromRow));
  }

  /** Rows {@code [first, first + rows)} by index, each field written from {@link #row}. */
  private final class Cursor extends CheckedCursor {
    private final String split;

    Cursor(String split, long first, long rows) {
      super(SCHEMA, first, rows);
      this.split = split;
    }

    @Override
    protected void write(int field, ColumnBuilder into, int at, long first, int rows) {
      decodeField(field, into, at, first, rows);
    }

    @Override
    protected void closed() {
      openCursors.decrementAndGet();
    }

    @Override
    public String toString() {
      return "cursor " + split;
    }
  }

  /** Field {@code field} of rows {@code first ..} written into {@code into} from row {@code at}, as a decoder would. */
  void decodeField(int field, ColumnBuilder into, int at, long first, int rows) {
    String name = SCHEMA.field(field).name();
    for (int r = 0; r < rows; r++) {
      Tensor t = row(first + r).fields().get(name);
      if (into.isFixedLength()) {
        if (t == null) {
          into.setNull(at + r);
        } else {
          into.fixedBuffer().put((at + r) * into.rowBytes(), t.data(), 0, into.rowBytes());
        }
      } else if (t == null) {
        into.addNull(0);
      } else {
        into.appendRow(t);
      }
    }
  }

  /** The same rows without the capability: a plain split source (the element path). */
  SplitDataset<Example> rowsOnly() {
    return BatchContents.rowsOnly(this);
  }

  @Override
  public Flux<Example> flux(PipelineContext context) {
    return BatchSplitDataset.super.flux(context);
  }

  @Override
  public String toString() {
    return "memory-batch-splits" + Arrays.toString(sizes) + (columns ? " by columns" : "");
  }
}
