package dev.sluice.io.arrow.internal;

import dev.sluice.core.Batch;
import dev.sluice.core.BatchSplitDataset;
import dev.sluice.core.Column;
import dev.sluice.core.DatasetClosedException;
import dev.sluice.core.DatasetFormatException;
import dev.sluice.core.Example;
import dev.sluice.core.IoMode;
import dev.sluice.core.RandomAccessDataset;
import dev.sluice.core.Schema;
import dev.sluice.core.Split;
import dev.sluice.core.Tensor;
import dev.sluice.core.spi.BatchBuilder;
import dev.sluice.core.spi.BufferPool;
import dev.sluice.core.spi.ColumnBuilder;
import dev.sluice.io.arrow.ArrowDataset;
import dev.sluice.io.arrow.ArrowOptions;
import dev.sluice.io.arrow.IpcFormat;
import dev.sluice.core.internal.mapped.FileInput;
import dev.sluice.core.internal.mapped.MappedFile;
import dev.sluice.core.internal.mapped.MappedReads;
import dev.sluice.core.internal.mapped.MappedRows;
import dev.sluice.core.internal.mapped.PositionedReadFile;
import dev.sluice.core.spi.RefCount;
import dev.sluice.core.internal.RowRange;
import java.lang.ref.SoftReference;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReferenceArray;
import org.apache.arrow.flatbuf.RecordBatch;
import reactor.core.publisher.Flux;

/** An Arrow IPC file or stream file, mapped: see {@link ArrowDataset}. */
public final class ArrowFileDataset implements ArrowDataset {
  private final Path path;
  private final String resource;
  private final FileInput file;
  private final IpcFile ipc;
  private final SchemaPlan plan;
  private final List<FieldPlan> fields;
  private final Schema schema;
  private final BufferPool pool;
  private final long[] starts; // starts[k] = first global row of record batch k; starts[n] = total
  private final long equalRows; // rows of every batch but the last when they are all equal, else 0
  private final int equalShift; // log2(equalRows) when it is a power of two, else -1
  private final List<Split> splits;
  private final Map<Split, Integer> splitNumbers = new HashMap<>();
  private final AtomicReferenceArray<SoftReference<DecodedRecordBatch>> decoded;
  private final ByteBuffer whole; // the file in one view when it is mapped in one chunk, else null
  private volatile boolean closed;

  private ArrowFileDataset(Path path, FileInput file, IpcFile ipc, SchemaPlan plan, List<FieldPlan> fields,
      ArrowOptions options) {
    this.path = path;
    this.resource = file.resource();
    this.file = file;
    this.ipc = ipc;
    this.plan = plan;
    this.fields = fields;
    this.schema = SchemaPlan.schemaOf(fields);
    this.pool = options.memory().pool(ArrowOptions.STAGE);
    List<IpcFile.BatchRef> batches = ipc.batches();
    int n = batches.size();
    this.starts = new long[n + 1];
    List<Split> s = new ArrayList<>(n);
    String name = path == null ? resource.substring(resource.lastIndexOf('/') + 1)
        : path.getFileName() == null ? resource : path.getFileName().toString();
    long equal = n > 1 ? batches.get(0).rows() : 0;
    for (int k = 0; k < n; k++) {
      long rows = batches.get(k).rows();
      starts[k + 1] = starts[k] + rows;
      if (k < n - 1 && rows != equal) {
        equal = 0;
      }
      Split split = new Split(name + "#" + k, rows);
      s.add(split);
      splitNumbers.put(split, k);
    }
    this.equalRows = equal;
    this.equalShift = equal > 0 && Long.bitCount(equal) == 1 ? Long.numberOfTrailingZeros(equal) : -1;
    this.splits = List.copyOf(s);
    this.decoded = new AtomicReferenceArray<>(n);
    this.whole = file.whole();
  }

  /**
   * Opens {@code path} (mapped, or for positioned reads as {@link ArrowOptions#io()} says), reads its structure and maps its schema; closes the file when
   * anything fails.
   */
  public static ArrowFileDataset open(Path path, ArrowOptions options) {
    FileInput f = options.io() == IoMode.READ ? PositionedReadFile.open(path)
        : MappedFile.open(path, options.maxChunkBytes());
    return open(path, f, options);
  }

  /**
   * Reads the structure of an open file (a remote one: {@link #path()} is then null) and maps its
   * schema; closes the file when anything fails.
   */
  public static ArrowFileDataset open(FileInput file, ArrowOptions options) {
    return open(null, file, options);
  }

  private static ArrowFileDataset open(Path path, FileInput f, ArrowOptions options) {
    String resource = f.resource();
    try {
      IpcFile ipc = MappedReads.call(resource, null, () -> IpcFile.read(f));
      SchemaPlan plan = SchemaPlan.of(ipc.schema(), ipc.bigEndian(), options.fixedSizeListNulls());
      List<FieldPlan> fields = plan.select(resource, options.columns());
      checkRowSizes(resource, ipc, fields);
      return new ArrowFileDataset(path, f, ipc, plan, fields, options);
    } catch (RuntimeException e) {
      closeAfter(f, e);
      throw e;
    }
  }

  /**
   * Refuses record batches whose fixed-length rows need more memory than their body could ever
   * decode to (a damaged fixed-size list size or row count), before a reader allocates for them.
   */
  private static void checkRowSizes(String resource, IpcFile ipc, List<FieldPlan> fields) {
    long rowBytes = 0;
    for (FieldPlan p : fields) {
      if (p.spec().isFixedLength()) {
        rowBytes = Math.addExact(rowBytes, p.spec().rowBytes());
      }
    }
    for (IpcFile.BatchRef b : ipc.batches()) {
      long body = b.message().bodyLength();
      long need = b.rows() == 0 ? 0 : rowBytes > Long.MAX_VALUE / b.rows() ? Long.MAX_VALUE : rowBytes * b.rows();
      if (need > Memory.budget(body)) {
        throw new DatasetFormatException(resource, "record batch " + b.number(), b.rows() + " rows of " + rowBytes
            + " bytes of fixed-length fields need " + need + " bytes, more than its body of " + body
            + " bytes can hold");
      }
    }
  }

  private static void closeAfter(FileInput f, RuntimeException e) {
    try {
      f.close();
    } catch (RuntimeException suppressed) {
      e.addSuppressed(suppressed);
    }
  }

  @Override
  public Path path() {
    return path;
  }

  @Override
  public IpcFormat format() {
    return ipc.kind() == IpcFile.Kind.FILE ? IpcFormat.FILE : IpcFormat.STREAM;
  }

  @Override
  public org.apache.arrow.vector.types.pojo.Schema arrowSchema() {
    return ipc.schema();
  }

  @Override
  public int recordBatches() {
    return ipc.batches().size();
  }

  @Override
  public Schema schema() {
    return schema;
  }

  @Override
  public long size() {
    return starts[starts.length - 1];
  }

  private void checkOpen() {
    if (closed) {
      throw new DatasetClosedException(resource);
    }
  }

  /** The record batch holding global row {@code index} (which must exist). */
  private int batchOf(long index) {
    int n = starts.length - 1;
    if (equalShift >= 0) { // a shift, not a division per row (Sluice writes 65,536-row batches)
      return (int) Math.min(index >>> equalShift, n - 1);
    }
    if (equalRows > 0) {
      return (int) Math.min(index / equalRows, n - 1);
    }
    int k = Arrays.binarySearch(starts, index);
    k = k >= 0 ? k : -k - 2;
    while (starts[k + 1] <= index) { // skip empty batches
      k++;
    }
    return k;
  }

  // ------------------------------------------------------------------ decoding

  /** The data of record batch {@code k}, checked; compressed buffers decompress into {@code memory}. */
  private IpcBatchBuffers open(int k, Memory memory) {
    IpcFile.BatchRef b = ipc.batches().get(k);
    String where = "record batch " + k;
    IpcMessages.Parsed p = b.message();
    ByteBuffer meta = file.region(p.metadataOffset(), p.metadataLength(), "metadata of " + where);
    RecordBatch rb = IpcMessages.recordBatch(IpcMessages.message(meta, resource, where), resource, where);
    ByteBuffer body = file.region(p.bodyOffset(), p.bodyLength(), "body of " + where);
    return IpcBatchBuffers.open(resource, where, plan, rb, body, memory);
  }

  private ColumnAssembler.Dictionaries dictionaries(int k) {
    Map<Long, IpcFile.DictionaryChain> chains = ipc.batches().get(k).dictionaries();
    return id -> {
      IpcFile.DictionaryChain c = chains.get(id);
      if (c == null) {
        throw new DatasetFormatException(resource, "record batch " + k, "dictionary " + id + " is not defined"
            + (ipc.kind() == IpcFile.Kind.STREAM ? " before this record batch" : " in the file"));
      }
      return c.values(file, plan.dictionaries().get(id));
    };
  }

  private Column[] assemble(IpcBatchBuffers data, int k, long from, int count, Memory memory) {
    ColumnAssembler.Dictionaries dicts = dictionaries(k);
    Column[] cols = new Column[fields.size()];
    for (int f = 0; f < cols.length; f++) {
      cols[f] = ColumnAssembler.assemble(fields.get(f), data, from, count, memory, dicts);
    }
    return cols;
  }

  /** Record batch {@code k} decoded whole into heap memory (what examples and gathers read), kept softly. */
  private DecodedRecordBatch decoded(int k) {
    SoftReference<DecodedRecordBatch> ref = decoded.get(k);
    DecodedRecordBatch d = ref == null ? null : ref.get();
    if (d != null) {
      return d;
    }
    d = MappedReads.callAt(resource, "record batch", k, () -> decode(k));
    decoded.set(k, new SoftReference<>(d));
    return d;
  }

  /** Record batch {@code k} decoded whole into heap memory; runs inside the read boundary. */
  private DecodedRecordBatch decode(int k) {
    Memory memory = Memory.limited(Memory.heap(), Memory.budget(ipc.batches().get(k).message().bodyLength()));
    IpcBatchBuffers data = open(k, memory);
    DecodedRecordBatch d = new DecodedRecordBatch(resource, assemble(data, k, 0, (int) data.rows(), memory));
    if (whole != null && !data.compressed() && !data.swapsBytes()) {
      long body = ipc.batches().get(k).message().bodyOffset();
      for (int f = 0; f < fields.size(); f++) {
        FieldPlan p = fields.get(f);
        Column c = d.columns[f];
        // a fixed-width column shared with the file: its values are a view of the buffer itself
        if (d.rows[f] != null && p.leaf().kind() == Leaf.Kind.FIXED && !c.hasValidity() && d.values[f].isDirect()) {
          d.fileOffset[f] = body + data.bufferOffset(p.steps().get(p.steps().size() - 1).node(), 1);
        }
      }
    }
    return d;
  }

  // ------------------------------------------------------------------ random access

  @Override
  public Example get(long index) {
    checkOpen();
    RandomAccessDataset.checkIndex(index, size(), this);
    int k = batchOf(index);
    int row = (int) (index - starts[k]);
    DecodedRecordBatch d = decoded(k);
    Example.Builder b = Example.builder(index);
    MappedReads.runAt(resource, "record batch", k, row, () -> {
      int touched = 0;
      for (Column c : d.columns) {
        if (c.isValid(row)) {
          Tensor t = c.row(row);
          ByteBuffer data = t.data(); // its first and last byte are loaded here, inside the read boundary
          touched += data.remaining() == 0 ? 0 : data.get(0) + data.get(data.remaining() - 1);
          b.put(c.name(), t);
        } else {
          b.putNull(c.name());
        }
      }
      MappedReads.consume(touched);
    });
    return b.build();
  }

  /**
   * Copies the rows field by field: fixed-length fields with bulk copies from each record batch
   * (the rows of a scattered batch grouped by record batch, their first cache lines touched before
   * any is copied), the others row by row in order.
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
      int k0 = batchOf(indices[from]);
      MappedReads.runAtRows(resource, indices[from], () -> {
        if (oneRun && indices[from + count - 1] < starts[k0 + 1]) {
          decoded(k0).gather(indices, from, count, starts[k0], true, target, start);
        } else {
          gatherRows(indices, from, count, k0, target, start);
        }
      });
    }
    if (oneRun) {
      target.commitRange(indices[from], count);
    } else {
      target.commitRows(indices, from, count);
    }
  }

  /**
   * Rows in any order: each row's record batch found once; when they all are in {@code k0}, that
   * batch's bulk copies, else fixed-length fields row by row from each row's record batch (first
   * cache lines of every row touched, then the rows copied).
   */
  private void gatherRows(long[] indices, int from, int count, int k0, BatchBuilder target, int start) {
    int[] batch = new int[count];
    long[] local = new long[count];
    DecodedRecordBatch[] byBatch = new DecodedRecordBatch[starts.length - 1];
    boolean one = true;
    for (int i = 0; i < count; i++) {
      int k = batchOf(indices[from + i]);
      batch[i] = k;
      local[i] = indices[from + i] - starts[k];
      one &= k == k0;
      if (byBatch[k] == null) {
        byBatch[k] = decoded(k);
      }
    }
    if (one) {
      byBatch[k0].gather(indices, from, count, starts[k0], false, target, start);
      return;
    }
    for (int f = 0; f < fields.size(); f++) {
      if (fields.get(f).spec().isFixedLength()) {
        DecodedRecordBatch.copyRows(byBatch, batch, f, local, target.fixedColumn(f), start, whole);
        for (int i = 0; i < count; i++) {
          Column c = byBatch[batch[i]].columns[f];
          if (c.hasValidity() && !c.isValid((int) local[i])) {
            target.setNull(f, start + i);
          }
        }
      } else {
        ColumnBuilder column = target.column(f);
        for (int i = 0; i < count; i++) {
          DecodedRecordBatch.appendRow(column, byBatch[batch[i]].columns[f], (int) local[i]);
        }
      }
    }
  }

  // ------------------------------------------------------------------ splits

  @Override
  public List<Split> splits() {
    checkOpen();
    return splits;
  }

  private int splitNumber(Split split) {
    Integer k = splitNumbers.get(split);
    if (k == null) {
      throw new IllegalArgumentException("split " + split + " is not a record batch of " + this);
    }
    return k;
  }

  @Override
  public Flux<Example> read(Split split, long fromRow, long toRow) {
    return Flux.defer(() -> {
      checkOpen();
      int k = splitNumber(split);
      split.checkRows(fromRow, toRow);
      long first = starts[k] + Math.min(fromRow, split.rowCount());
      long end = starts[k] + Math.min(toRow, split.rowCount());
      return RowRange.flux(this, first, end);
    });
  }

  /**
   * Rows of one record batch decoded into batches: the record batch's buffers are checked once
   * (and, when compressed, decompressed once into pooled memory that the batches share), and each
   * batch shares what it can with the mapping and owns its conversions.
   */
  @Override
  public Flux<Batch> readBatches(Split split, long fromRow, long toRow, int batchSize) {
    return readBatches(split, fromRow, toRow, batchSize, batchSize);
  }

  /** As {@link #readBatches(Split, long, long, int)} with a first batch of {@code firstBatchSize} rows, decoded once. */
  @Override
  public Flux<Batch> readBatches(Split split, long fromRow, long toRow, int firstBatchSize, int batchSize) {
    BatchSplitDataset.checkBatchSizes(firstBatchSize, batchSize);
    int k = splitNumber(split);
    split.checkRows(fromRow, toRow);
    return Flux.defer(() -> {
      checkOpen();
      long first = Math.min(fromRow, split.rowCount());
      long end = Math.min(toRow, split.rowCount());
      long budget = Memory.budget(ipc.batches().get(k).message().bodyLength());
      return Flux.using(() -> new Shared(Memory.limited(Memory.pooled(pool), budget)),
          shared -> Flux.<Batch, long[]>generate(() -> new long[] {first}, (state, sink) -> {
            long pos = state[0];
            if (pos >= end) {
              sink.complete();
              return state;
            }
            int n = (int) Math.min(pos == first ? firstBatchSize : batchSize, end - pos);
            sink.next(slice(shared, k, pos, n));
            state[0] = pos + n;
            return state;
          }),
          Shared::release);
    });
  }

  @Override
  public Flux<Batch> batches() {
    return Flux.defer(() -> {
      checkOpen();
      return Flux.fromIterable(splits).concatMap(s -> s.rowCount() == 0
          ? Flux.defer(() -> {
            try (Shared shared = new Shared(Memory.pooled(pool))) {
              return Flux.just(slice(shared, splitNumber(s), 0, 0));
            }
          })
          : readBatches(s, 0, Long.MAX_VALUE, (int) s.rowCount()), 0);
    });
  }

  /** Rows {@code [from, from + n)} of record batch {@code k} as a batch owning its conversions. */
  private Batch slice(Shared shared, int k, long from, int n) {
    Memory memory = Memory.limited(Memory.pooled(pool), Memory.budget(ipc.batches().get(k).message().bodyLength()));
    try {
      Column[] cols = MappedReads.callAt(resource, "record batch", k, () -> {
        if (shared.data == null) {
          shared.data = open(k, shared.decompressed);
        }
        return assemble(shared.data, k, from, n, memory);
      });
      long[] indices = new long[n];
      long base = starts[k] + from;
      for (int i = 0; i < n; i++) {
        indices[i] = base + i;
      }
      shared.retain();
      return Batch.of(schema, Arrays.asList(cols), indices, () -> {
        try {
          memory.close();
        } finally {
          shared.release();
        }
      });
    } catch (RuntimeException e) {
      memory.close();
      throw e;
    }
  }

  /** What the batches cut from one record batch share: its checked buffers and its decompressed memory. */
  private static final class Shared extends RefCount implements AutoCloseable {
    final Memory decompressed;
    IpcBatchBuffers data;

    Shared(Memory decompressed) {
      this.decompressed = decompressed;
    }

    @Override
    protected void onLastRelease() {
      decompressed.close();
    }

    @Override
    public void close() {
      release();
    }
  }

  @Override
  public BatchSplitDataset<Example> asSplits() {
    return new Splits();
  }

  /** The record batches as splits, without the random access that would make a pipeline take the index path. */
  private final class Splits implements BatchSplitDataset<Example> {
    @Override
    public Schema schema() {
      return schema;
    }

    @Override
    public List<Split> splits() {
      return ArrowFileDataset.this.splits();
    }

    @Override
    public Flux<Example> read(Split split, long fromRow, long toRow) {
      return ArrowFileDataset.this.read(split, fromRow, toRow);
    }

    @Override
    public Flux<Batch> readBatches(Split split, long fromRow, long toRow, int batchSize) {
      return ArrowFileDataset.this.readBatches(split, fromRow, toRow, batchSize);
    }

    @Override
    public Flux<Batch> readBatches(Split split, long fromRow, long toRow, int firstBatchSize, int batchSize) {
      return ArrowFileDataset.this.readBatches(split, fromRow, toRow, firstBatchSize, batchSize);
    }

    @Override
    public String toString() {
      return ArrowFileDataset.this + " as splits";
    }
  }

  @Override
  public void close() {
    closed = true;
    file.close();
  }

  @Override
  public String toString() {
    return "arrow(" + resource + ", " + format().name().toLowerCase(java.util.Locale.ROOT) + ", " + recordBatches()
        + " record batches, rows=" + size() + ")";
  }
}
