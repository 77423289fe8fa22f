package dev.sluice.operators.internal;

import dev.sluice.core.Access;
import dev.sluice.core.Batch;
import dev.sluice.core.BatchSplitDataset;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.RandomAccessDataset;
import dev.sluice.core.Schema;
import dev.sluice.core.Split;
import dev.sluice.core.SplitDataset;
import dev.sluice.core.TensorSpec;
import dev.sluice.core.spi.BatchBuilder;
import dev.sluice.core.spi.BufferPool;
import java.util.ArrayList;
import java.util.List;
import reactor.core.publisher.Flux;

/**
 * A random-access source seen as one split whose blocks are runs of about
 * {@link dev.sluice.core.Options#shuffleBlockBytes()} bytes of rows: the view its block shuffle
 * plans over ({@link BlockPlan}, {@link SplitPlan}, {@link ColumnarPlan}, {@link WindowShuffle}),
 * so the block shuffle of a random-access source is the split sources' one. The block size is the
 * split's {@linkplain #blockAlignment alignment}, so blocks are whole runs and a rank's blocks are
 * paired around the middle of its rows ({@link BlockPlan#pair}); it is at most
 * {@code rows / }{@value #MIN_BLOCKS} rows, so a small dataset still has many blocks.
 *
 * <p>A row range is read with the source's {@code gather} over contiguous indices (one bulk copy
 * per batch on sources that copy runs), or with {@code get} per row for elements. With a declared
 * schema the view is a {@link BatchSplitDataset} (the columnar path: {@link #of}).
 *
 * @param <T> the element type
 */
class RandomAccessBlocks<T> implements SplitDataset<T> {
  /** Fewest blocks of a dataset (unless it has fewer rows). */
  static final long MIN_BLOCKS = 256;
  /** Bytes a row of a variable-length field is taken to hold. */
  static final long VARIABLE_FIELD_BYTES = 64;

  final RandomAccessDataset<T> source;
  private final Split split;
  private final long blockRows;
  private volatile SplitDataset<?> splitSource;

  RandomAccessBlocks(RandomAccessDataset<T> source, long rowBytes, long blockBytes) {
    if (blockBytes <= 0) {
      throw new IllegalArgumentException("shuffleBlockBytes > 0 required but it was " + blockBytes);
    }
    this.source = source;
    long n = source.size();
    this.split = new Split(String.valueOf(source), n);
    long byBytes = Math.max(1, blockBytes / Math.max(1, rowBytes));
    this.blockRows = Math.max(1, Math.min(byBytes, n / MIN_BLOCKS));
  }

  /**
   * The block view of {@code source} with runs of about {@code blockBytes} bytes of rows
   * ({@link dev.sluice.core.Options#shuffleBlockBytes()}): a {@link BatchSplitDataset} gathering
   * into {@code pool}'s memory when the source declares its schema, else a split source of elements.
   */
  @SuppressWarnings({"unchecked", "rawtypes"})
  static RandomAccessBlocks<?> of(RandomAccessDataset<?> source, BufferPool pool, long blockBytes) {
    Schema schema = Schemas.declared(source);
    if (schema == null) {
      return new RandomAccessBlocks(source, VARIABLE_FIELD_BYTES, blockBytes);
    }
    return new Batches(source, schema, pool, blockBytes);
  }

  /**
   * The bytes of the rows of {@code source}: its size times the row size of its declared schema
   * (fixed-length fields their own, {@value #VARIABLE_FIELD_BYTES} for each other field), or -1
   * when it declares none.
   */
  static long dataBytes(RandomAccessDataset<?> source) {
    Schema schema = Schemas.declared(source);
    return schema == null ? -1 : Saturated.multiply(source.size(), rowBytes(schema));
  }

  static long rowBytes(Schema schema) {
    long n = 0;
    for (TensorSpec f : schema.fields()) {
      n += f.isFixedLength() ? f.rowBytes() : VARIABLE_FIELD_BYTES;
    }
    return Math.max(1, n);
  }

  /**
   * The source seen as a split source (the same object, when the plan builder finds it is one),
   * told the splits a pass reads next ({@link SplitDataset#readNext}); null (the default) for none.
   */
  void announcesTo(SplitDataset<?> source) {
    this.splitSource = source;
  }

  /**
   * The rows of a run, the alignment of the blocks: {@code blockBytes / rowBytes}, at most
   * {@code rows / }{@value #MIN_BLOCKS}, at least 1.
   */
  long blockRows() {
    return blockRows;
  }

  @Override
  public Access access() {
    return Access.BLOCKS;
  }

  @Override
  public List<Split> splits() {
    return List.of(split);
  }

  @Override
  public long blockAlignment(Split s) {
    return blockRows;
  }

  /** The end row of a read of {@code [fromRow, toRow)} of the split, checked. */
  long end(Split s, long fromRow, long toRow) {
    if (!s.equals(split)) {
      throw new IllegalArgumentException(s + " is not the split of " + this);
    }
    s.checkRows(fromRow, toRow);
    return Math.min(toRow, split.rowCount());
  }

  /**
   * Passes the reads about to start on to the source when it is also a split source (a shard set,
   * {@link #announcesTo}): as the source's splits that hold the rows of {@code segments}, in order.
   */
  void announce(List<SplitPlan.Segment> segments) {
    SplitDataset<?> inner = splitSource;
    if (inner == null) {
      return;
    }
    List<Split> parts = inner.splits();
    if (!SplitPlan.knownCounts(parts)) {
      return;
    }
    long[] starts = new long[parts.size() + 1];
    for (int k = 0; k < parts.size(); k++) {
      starts[k + 1] = starts[k] + parts.get(k).rowCount();
    }
    List<Split> next = new ArrayList<>();
    for (SplitPlan.Segment seg : segments) {
      int at = java.util.Arrays.binarySearch(starts, seg.fromRow());
      int k = at >= 0 ? at : -at - 2;
      for (; k < parts.size() && starts[k] < seg.toRow(); k++) {
        if (starts[k + 1] > seg.fromRow() && (next.isEmpty() || !next.get(next.size() - 1).equals(parts.get(k)))) {
          next.add(parts.get(k));
        }
      }
    }
    inner.readNext(next);
  }

  @Override
  public Flux<T> read(Split s, long fromRow, long toRow) {
    long end = end(s, fromRow, toRow);
    return Flux.defer(() -> PlanCompiler.longRange(fromRow, end).map(source::get));
  }

  @Override
  public Flux<T> flux(PipelineContext context) {
    return source.flux(context);
  }

  @Override
  public String toString() {
    return String.valueOf(source);
  }

  /** The view of a source with a declared schema: row ranges gathered into batches. */
  static final class Batches<T> extends RandomAccessBlocks<T> implements BatchSplitDataset<T> {
    private final Schema schema;
    private final BufferPool pool;

    Batches(RandomAccessDataset<T> source, Schema schema, BufferPool pool, long blockBytes) {
      super(source, rowBytes(schema), blockBytes);
      this.schema = schema;
      this.pool = pool;
    }

    @Override
    public Schema schema() {
      return schema;
    }

    @Override
    public Flux<Batch> readBatches(Split s, long fromRow, long toRow, int batchSize) {
      return readBatches(s, fromRow, toRow, batchSize, batchSize);
    }

    /** The rows gathered in order, each batch one {@code gather} of contiguous indices. */
    @Override
    public Flux<Batch> readBatches(Split s, long fromRow, long toRow, int firstBatchSize, int batchSize) {
      BatchSplitDataset.checkBatchSizes(firstBatchSize, batchSize);
      long end = end(s, fromRow, toRow);
      return Flux.defer(() -> {
        long[] indices = new long[(int) Math.min(Math.max(firstBatchSize, batchSize), Math.max(1, end - fromRow))];
        return Flux.<Batch, long[]>generate(() -> new long[] {fromRow}, (at, sink) -> {
          long from = at[0];
          if (from >= end) {
            sink.complete();
            return at;
          }
          int size = (int) Math.min(from == fromRow ? firstBatchSize : batchSize, end - from);
          for (int i = 0; i < size; i++) {
            indices[i] = from + i;
          }
          try (BatchBuilder builder = BatchBuilder.create(schema, size, pool)) {
            source.gather(indices, 0, size, builder);
            if (builder.size() != size) {
              throw new IllegalStateException(source + ": gather committed " + builder.size() + " of " + size
                  + " rows");
            }
            sink.next(builder.build());
          }
          at[0] = from + size;
          return at;
        });
      });
    }
  }
}
