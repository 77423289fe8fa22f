package dev.sluice.io.parquet;

import dev.sluice.core.Batch;
import dev.sluice.core.BatchSplitDataset;
import dev.sluice.core.spi.BufferPool;
import dev.sluice.core.spi.ColumnBuilder;
import dev.sluice.core.spi.ColumnCursor;
import dev.sluice.core.DatasetClosedException;
import dev.sluice.core.DatasetFormatException;
import dev.sluice.core.FatalErrorException;
import dev.sluice.core.Example;
import dev.sluice.core.spi.Fingerprinted;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.Schema;
import dev.sluice.core.Split;
import dev.sluice.core.TensorSpec;
import dev.sluice.core.internal.Fingerprints;
import dev.sluice.core.internal.OrderedParallel;
import dev.sluice.io.internal.cache.CachedFile;
import dev.sluice.io.parquet.internal.CachedInputFile;
import dev.sluice.io.parquet.internal.ColumnPlan;
import dev.sluice.io.parquet.internal.ParquetFileInfo;
import dev.sluice.io.parquet.internal.RowGroupReader;
import dev.sluice.io.parquet.internal.SchemaMapper;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Consumer;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * One or more Parquet files as a {@link BatchSplitDataset} of {@link Example}s whose splits are the row
 * groups, in file order then row-group order. Examples carry their global row index.
 *
 * <p>The columnar path ({@link #readBatches}, {@link #batches}) decodes pages straight into pooled
 * batch memory; the row path ({@link #read}) copies rows out of those batches, so examples own
 * nothing. Nothing is opened until a flux is subscribed; each subscription opens its own file
 * handles and closes them on complete, error and cancel.
 *
 * <p>{@link #close()} ends the dataset: a flux assembled or subscribed afterwards fails with
 * {@link DatasetClosedException} ("already closed: &lt;file&gt;"); a pass of {@link #batches}
 * or {@link #flux} already subscribed finishes.
 */
public final class ParquetDataset implements BatchSplitDataset<Example>, Fingerprinted, AutoCloseable {
  /** The memory-manager stage batches are allocated from. */
  public static final String STAGE = "parquet";
  private static final int ROW_PATH_BATCH = 1024;

  private final List<ParquetFileInfo> files;
  private final List<List<ColumnPlan>> plans; // per file
  private final Schema schema;
  private final ParquetOptions options;
  private final List<Split> splits;
  private final Map<String, SplitRef> refs;
  private final long rowCount;

  private record SplitRef(int file, int rowGroup, long firstRow) {}

  private static final long[] NO_STARTS = new long[0];
  private final Map<String, long[]> blockStarts = new java.util.concurrent.ConcurrentHashMap<>();
  private final List<Set<String>> paths; // per file: the projected column paths

  private volatile boolean closed;

  ParquetDataset(List<ParquetFileInfo> files, ParquetOptions options) {
    this.files = List.copyOf(files);
    this.options = options;
    List<List<ColumnPlan>> p = new ArrayList<>();
    List<Set<String>> projected = new ArrayList<>();
    Schema first = null;
    String firstName = null;
    for (ParquetFileInfo f : files) {
      SchemaMapper.Mapping m = SchemaMapper.map(f.name(), f.footer().getFileMetaData().getSchema(),
          f.footer().getFileMetaData().getKeyValueMetaData(), options.shapes());
      List<ColumnPlan> selected = m.select(f.name(), options.columns());
      List<TensorSpec> specs = new ArrayList<>();
      Set<String> paths = new HashSet<>();
      for (ColumnPlan c : selected) {
        specs.add(c.spec());
        paths.add(String.join(".", c.descriptor().getPath()));
      }
      f.checkCodecs(paths);
      projected.add(Set.copyOf(paths));
      Schema s = Schema.of(specs);
      if (first == null) {
        first = s;
        firstName = f.name();
      } else if (!first.equals(s)) {
        throw new DatasetFormatException(f.name(), "schema", "the schema " + s + " differs from " + first + " of "
            + firstName + "; every file of a dataset must have the same columns");
      }
      p.add(selected);
    }
    this.plans = List.copyOf(p);
    this.paths = List.copyOf(projected);
    this.schema = first == null ? Schema.of(List.of()) : first;
    List<Split> sp = new ArrayList<>();
    Map<String, SplitRef> r = new LinkedHashMap<>();
    long row = 0;
    for (int fi = 0; fi < files.size(); fi++) {
      ParquetFileInfo f = files.get(fi);
      for (int g = 0; g < f.rowGroups().size(); g++) {
        long n = f.rowGroups().get(g).getRowCount();
        String id = f.name() + "#rg" + g;
        sp.add(new Split(id, n));
        r.put(id, new SplitRef(fi, g, row));
        try {
          row = Math.addExact(row, n);
        } catch (ArithmeticException e) {
          throw new DatasetFormatException(f.name(), "row group " + g, n + " rows after the " + row + " before it are"
              + " more rows than a dataset can index (" + Long.MAX_VALUE + ")");
        }
      }
    }
    this.splits = List.copyOf(sp);
    this.refs = Collections.unmodifiableMap(r);
    this.rowCount = row;
  }

  @Override
  public Schema schema() {
    return schema;
  }

  @Override
  public List<Split> splits() {
    return splits;
  }

  /**
   * Files read through the node's remote cache download ahead in this order (the files of these
   * row groups); other files ignore it.
   */
  @Override
  public void readNext(List<Split> next) {
    List<CachedFile> order = new ArrayList<>(next.size());
    for (Split s : next) {
      SplitRef r = refs.get(s.id());
      if (r != null && files.get(r.file).input() instanceof CachedInputFile c) {
        order.add(c.file());
      }
    }
    CachedFile.readNext(order);
  }

  /** Total rows of every file. */
  public long rowCount() {
    return rowCount;
  }

  /** The files, in read order (paths or URIs as given). */
  public List<String> files() {
    List<String> out = new ArrayList<>();
    files.forEach(f -> out.add(f.name()));
    return out;
  }

  /** The options this dataset reads with. */
  public ParquetOptions options() {
    return options;
  }

  /** The Parquet schema of the first file, as parquet-java prints it (for {@code inspect}). */
  public String parquetSchema() {
    return files.isEmpty() ? "" : files.get(0).footer().getFileMetaData().getSchema().toString();
  }

  /** Ends the dataset: later reads fail with "already closed: &lt;file&gt;". Idempotent. */
  @Override
  public void close() {
    closed = true;
    files.forEach(ParquetFileInfo::release);
  }

  /** True after {@link #close()}. */
  public boolean isClosed() {
    return closed;
  }

  private void checkOpen() {
    if (closed) {
      throw new DatasetClosedException(files.isEmpty() ? "parquet dataset"
          : files.get(0).name() + (files.size() > 1 ? " (and " + (files.size() - 1) + " more files)" : ""));
    }
  }

  private SplitRef ref(Split split) {
    SplitRef r = refs.get(Objects.requireNonNull(split, "split").id());
    if (r == null) {
      throw new IllegalArgumentException("split '" + split.id() + "' is not a split of this dataset");
    }
    return r;
  }

  /**
   * Rows {@code [fromRow, toRow)} of a row group decoded straight into pooled batches of
   * {@code batchSize} rows (the last may be shorter).
   *
   * <p>A part of a row group costs about its share of it: where the file has an offset index (the
   * page index parquet-java writes by default) only the pages holding the rows are read and
   * decompressed; without one the pages before the range are skipped by their headers, unread,
   * except for a repeated column's v1 pages, whose rows only their levels tell. The rows of the
   * first page before {@code fromRow} are decoded and dropped.
   *
   * <p><b>Reactive Streams semantics.</b> Emits one batch per request, decoded on the requesting
   * thread; backpressures by decoding nothing ahead of demand; completes after the last row of the
   * range; on cancel or error closes the file (opened on subscribe). A decode failure is a
   * {@link DatasetFormatException} naming the file, row group and column.
   *
   * <p><b>Discard support.</b> Batches dropped by downstream operators are closed. The consumer
   * closes every batch it receives.
   *
   * @param fromRow first row within the row group, ≥ 0
   * @param toRow end row (exclusive), or {@code Long.MAX_VALUE} for the end of the row group
   * @param batchSize rows per batch, &gt; 0
   */
  @Override
  public Flux<Batch> readBatches(Split split, long fromRow, long toRow, int batchSize) {
    return readBatches(split, fromRow, toRow, batchSize, batchSize);
  }

  /**
   * As {@link #readBatches(Split, long, long, int)} with a first batch of {@code firstBatchSize}
   * rows, decoding the range once.
   */
  @Override
  public Flux<Batch> readBatches(Split split, long fromRow, long toRow, int firstBatchSize, int batchSize) {
    checkOpen();
    ref(split);
    split.checkRows(fromRow, toRow);
    BatchSplitDataset.checkBatchSizes(firstBatchSize, batchSize);
    return Flux.defer(() -> {
      checkOpen(); // at subscription too
      return decode(split, fromRow, toRow, firstBatchSize, batchSize);
    });
  }

  /**
   * The first rows of the pages of the row group's dominant projected column (the one with the
   * largest uncompressed size in that row group), from the file's offset index: a read that starts
   * there decodes no row of its first page only to drop it. Null when that column chunk has no
   * offset index (pyarrow, for one, writes none by default), or the split has no rows. Read from
   * the file once per split and kept.
   */
  @Override
  public long[] blockStarts(Split split) {
    checkOpen();
    SplitRef r = ref(split);
    long[] starts = blockStarts.computeIfAbsent(split.id(), id -> {
      long[] s = files.get(r.file).pageStarts(r.rowGroup, paths.get(r.file));
      return s == null ? NO_STARTS : s;
    });
    return starts == NO_STARTS ? null : starts.clone();
  }

  /** The options' decode parallelism ({@link ParquetOptions#decodeParallelism()}). */
  @Override
  public int decodeParallelism() {
    return options.decodeParallelism();
  }

  /** True: {@link #openColumns} decodes a row group's rows one column at a time. */
  @Override
  public boolean decodesColumns() {
    return true;
  }

  /**
   * Rows {@code [fromRow, toRow)} of a row group as a cursor that decodes one column at a time: the
   * file is opened here and only the pages holding those rows are read (see
   * {@link #readBatches(Split, long, long, int)}). The caller closes the cursor, which closes the file. A decode failure is a
   * {@link DatasetFormatException} naming the file, row group and column.
   */
  @Override
  public ColumnCursor openColumns(Split split, long fromRow, long toRow) {
    checkOpen();
    SplitRef r = ref(split);
    split.checkRows(fromRow, toRow);
    long end = Math.min(toRow, split.rowCount());
    RowGroupReader reader = open(r, options.memory().pool(STAGE), fromRow, end);
    return new RangeCursor(reader, Math.max(0, end - fromRow));
  }

  /** A row group's rows from a row on, decoded column by column. */
  private final class RangeCursor implements ColumnCursor {
    private final RowGroupReader reader;
    private long left;

    RangeCursor(RowGroupReader reader, long rows) {
      this.reader = reader;
      this.left = rows;
    }

    @Override
    public Schema schema() {
      return schema;
    }

    @Override
    public long remaining() {
      return left;
    }

    @Override
    public long index() {
      return reader.index();
    }

    @Override
    public void decode(int field, ColumnBuilder into, int at, int rows) {
      if (rows > left) {
        throw new IllegalArgumentException("cannot decode " + rows + " rows of " + this + ": " + left + " are left");
      }
      reader.decodeColumn(field, into, at, rows);
    }

    @Override
    public void advance(int rows) {
      if (rows > left) {
        throw new IllegalArgumentException("cannot move " + this + " past " + rows + " rows: " + left + " are left");
      }
      reader.advance(rows);
      left -= rows;
    }

    @Override
    public void close() {
      reader.close();
    }

    @Override
    public String toString() {
      return reader.toString();
    }
  }

  /** {@link #readBatches} without the closed check (the splits of a pass under way); arguments checked. */
  private Flux<Batch> decode(Split split, long fromRow, long toRow, int firstBatchSize, int batchSize) {
    SplitRef r = ref(split);
    long end = Math.min(toRow, split.rowCount());
    if (fromRow >= end) {
      return Flux.empty();
    }
    BufferPool pool = options.memory().pool(STAGE);
    // A downstream that fused this generate (flatMapIterable) may poll it once more after a cancel
    // cleaned its state up, and Reactor then hands the generator and the cleanup a null state.
    // a JVM error of the decode (a class parquet-java needs on an error path, memory) is signalled
    // as a FatalErrorException: Reactor would rethrow it on the decoding thread
    return Flux.<Batch, RangeReader>generate(
            () -> {
              try {
                return new RangeReader(open(r, pool, fromRow, end), end - fromRow);
              } catch (LinkageError | VirtualMachineError e) {
                throw new FatalErrorException(files.get(r.file).name() + ", row group " + r.rowGroup + ": decoding", e);
              }
            },
            (state, sink) -> {
              if (state == null) {
                sink.complete();
                return null;
              }
              Batch b;
              try {
                b = state.next(state.started() ? batchSize : firstBatchSize);
              } catch (LinkageError | VirtualMachineError e) {
                throw new FatalErrorException(files.get(r.file).name() + ", row group " + r.rowGroup + ": decoding", e);
              }
              if (b == null) {
                sink.complete();
              } else {
                sink.next(b);
              }
              return state;
            },
            state -> {
              if (state != null) {
                state.close();
              }
            })
        .doOnDiscard(Batch.class, Batch::close);
  }

  private RowGroupReader open(SplitRef r, BufferPool pool) {
    return open(r, pool, 0, Long.MAX_VALUE);
  }

  /** A reader of rows {@code [from, to)} of a row group, at row {@code from}: only the pages holding them are read. */
  private RowGroupReader open(SplitRef r, BufferPool pool, long from, long to) {
    ParquetFileInfo f = files.get(r.file);
    return new RowGroupReader(f, r.rowGroup, plans.get(r.file), schema, pool, r.firstRow,
        options.nullPolicy(), options.pageChecksums() == ParquetOptions.PageChecksums.VERIFY, from, to);
  }

  /** A reader limited to a row range. */
  private static final class RangeReader implements AutoCloseable {
    private final RowGroupReader reader;
    private long left;
    private boolean started;

    RangeReader(RowGroupReader reader, long rows) {
      this.reader = reader;
      this.left = rows;
    }

    /** True once the first batch was asked for. */
    boolean started() {
      return started;
    }

    Batch next(int batchSize) {
      started = true;
      if (left <= 0) {
        return null;
      }
      Batch b = reader.next((int) Math.min(batchSize, left));
      left -= b.size();
      return b;
    }

    @Override
    public void close() {
      reader.close();
    }
  }

  /**
   * Every row group in order, decoded into batches of {@code batchSize} rows with
   * {@link ParquetOptions#decodeParallelism()} row groups decoded at the same time on
   * {@link Schedulers#parallel()}; order is preserved (batches never span row groups).
   *
   * <p><b>Reactive Streams semantics.</b> Emits the batches of row group k only after those of
   * k − 1; at most {@code decodeParallelism} row groups are being decoded or waiting, plus the one
   * being emitted, so memory stays within about {@code (decodeParallelism + 1) ×} the compressed
   * plus decoded size of a row group; completes after the last row group; on cancel or error stops
   * the decoders and closes every batch not yet emitted.
   *
   * <p><b>Discard support.</b> Batches decoded and not yet emitted are closed on cancel or error,
   * also those of a row group whose decode finishes after the cancel.
   *
   * @param batchSize rows per batch, &gt; 0 (the last batch of each row group may be shorter)
   */
  public Flux<Batch> batches(int batchSize) {
    return batches(splits, batchSize);
  }

  /** The given splits in order, decoded as {@link #batches(int)} does. */
  public Flux<Batch> batches(List<Split> which, int batchSize) {
    return batches(which, batchSize, options.decodeParallelism(), Schedulers.parallel());
  }

  /** As {@link #batches(List, int)}, decoding on {@code scheduler} with {@code parallelism} row groups in flight. */
  public Flux<Batch> batches(List<Split> which, int batchSize, int parallelism, Scheduler scheduler) {
    if (batchSize <= 0) {
      throw new IllegalArgumentException("batchSize > 0 required but it was " + batchSize);
    }
    if (parallelism < 1) {
      throw new IllegalArgumentException("parallelism >= 1 required but it was " + parallelism);
    }
    checkOpen();
    List<Split> list = List.copyOf(which);
    list.forEach(this::ref);
    return Flux.defer(() -> {
      checkOpen(); // at subscription too; row groups of a pass under way are still read after close
      return OrderedParallel.<Split, Batch>flatMap(Flux.fromIterable(list), (s, out) -> decodeAll(s, batchSize, out),
              parallelism, scheduler, Batch::close)
          .doOnDiscard(Batch.class, Batch::close);
    });
  }

  /** Decodes a whole row group into batches of {@code batchSize} rows, handing each to {@code out}. */
  private void decodeAll(Split split, int batchSize, Consumer<Batch> out) {
    if (split.rowCount() == 0) {
      return;
    }
    try (RowGroupReader r = open(ref(split), options.memory().pool(STAGE))) {
      while (r.remaining() > 0) {
        out.accept(r.next(batchSize));
      }
    }
  }

  /**
   * Rows {@code [fromRow, toRow)} of a row group as examples that own their (heap) memory; built
   * from decoded batches, so the row path reads exactly what the columnar path reads.
   */
  @Override
  public Flux<Example> read(Split split, long fromRow, long toRow) {
    return readBatches(split, fromRow, toRow, ROW_PATH_BATCH).concatMapIterable(ParquetDataset::rows);
  }

  private Flux<Example> rowsOf(Split split) {
    return decode(split, 0, Long.MAX_VALUE, ROW_PATH_BATCH, ROW_PATH_BATCH).concatMapIterable(ParquetDataset::rows);
  }

  private static List<Example> rows(Batch b) {
    try (b) {
      List<Example> out = new ArrayList<>(b.size());
      for (int i = 0; i < b.size(); i++) {
        out.add(b.copyRow(i));
      }
      return out;
    }
  }

  /** Every row of every row group, in order (the row path); announces that order ({@link #readNext}) when subscribed. */
  @Override
  public Flux<Example> flux(PipelineContext context) {
    checkOpen();
    return Flux.defer(() -> {
      checkOpen();
      readNext(splits);
      return Flux.fromIterable(splits).concatMap(this::rowsOf, 0);
    });
  }

  /**
   * Every file (a local file's path, size and modification time; for a Hadoop URI its name and
   * length), the row groups its footer lists, the projected schema and the options that change the
   * values delivered (columns, declared shapes, null policy).
   */
  @Override
  public String fingerprint() {
    StringBuilder sb = new StringBuilder("parquet\n");
    for (ParquetFileInfo f : files) {
      sb.append(f.fingerprint());
    }
    sb.append("columns ").append(options.columns()).append("\nshapes ").append(new java.util.TreeMap<>(options.shapes()))
        .append("\nnulls ").append(options.nullPolicy()).append('\n');
    return sb.append(Fingerprints.schema(schema)).toString();
  }

  @Override
  public String toString() {
    return "ParquetDataset" + files() + schema;
  }
}
