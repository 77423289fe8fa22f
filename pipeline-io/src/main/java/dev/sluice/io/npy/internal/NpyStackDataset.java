package dev.sluice.io.npy.internal;

import dev.sluice.core.spi.BatchBuilder;
import dev.sluice.core.DatasetClosedException;
import dev.sluice.core.DatasetFormatException;
import dev.sluice.core.Example;
import dev.sluice.core.RandomAccessDataset;
import dev.sluice.core.Schema;
import dev.sluice.core.Shape;
import dev.sluice.core.Split;
import dev.sluice.core.TensorSpec;
import dev.sluice.core.internal.Fingerprints;
import dev.sluice.core.internal.RowRange;
import dev.sluice.core.internal.mapped.MappedReads;
import dev.sluice.core.IoMode;
import dev.sluice.core.internal.mapped.MappedRows;
import dev.sluice.io.npy.NpyStack;
import dev.sluice.io.internal.JsonFiles;
import dev.sluice.io.internal.RemoteFiles;
import dev.sluice.io.internal.RemoteInput;
import dev.sluice.io.RemoteCache;
import dev.sluice.core.internal.Resources;
import dev.sluice.io.internal.cache.CachedFile;
import dev.sluice.io.internal.cache.FileCache;
import java.util.Collections;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.util.function.IntFunction;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.stream.Collectors;
import reactor.core.publisher.Flux;

/**
 * An npy stack: numbered chunks {@code 0.npy … k.npy} along axis 0 with global row indices. With a
 * {@code metadata.json}, {@link #size()} and {@link #schema()} come from it without opening any
 * chunk; the chunk headers are read (not mapped) on the first read and checked against it. A chunk
 * is mapped when a row of it is first read. A dask {@code info} pickle is ignored, never unpickled.
 * The dataset keeps the row arithmetic (chunk row offsets, splits, gathers across chunks); its
 * {@link StackChunks} read the chunk files, local, remote or through the node-local cache.
 */
public final class NpyStackDataset implements NpyStack {
  private static final String METADATA = "metadata.json";
  private final Path dir;
  private final String location;
  private final String dirName;
  private final StackChunks<?> chunkFiles;
  private final long maxChunkBytes;
  private final IoMode mode;
  private final StackMetadata meta;
  private final String fieldName;
  private final AtomicReferenceArray<NpyArrayReader> readers;
  private volatile Resolved resolved;
  private volatile boolean closed;

  private NpyStackDataset(Path dir, String location, String dirName, StackChunks<?> chunkFiles, StackMetadata meta,
      String fieldName, long maxChunkBytes, IoMode mode) {
    this.mode = mode;
    this.dir = dir;
    this.location = location;
    this.dirName = dirName;
    this.chunkFiles = chunkFiles;
    this.meta = meta;
    this.fieldName = fieldName;
    this.maxChunkBytes = maxChunkBytes;
    this.readers = new AtomicReferenceArray<>(chunkFiles.size());
  }

  /** Opens the stack in {@code dir}; reads {@code metadata.json} when present. */
  public static NpyStackDataset open(Path dir, long maxChunkBytes) {
    return open(dir, maxChunkBytes, IoMode.MMAP);
  }

  /** Opens the stack in {@code dir}, its chunks read in {@code mode}. */
  public static NpyStackDataset open(Path dir, long maxChunkBytes, IoMode mode) {
    List<String> names = NpyLayout.npyFiles(dir).stream().map(p -> p.getFileName().toString()).toList();
    int n = chunkCount(dir.toString(), names, i -> dir.resolve(i + ".npy").toString());
    List<Path> byNumber = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      byNumber.add(dir.resolve(i + ".npy"));
    }
    String dirName = dir.getFileName() == null ? "x" : dir.getFileName().toString();
    Path metaFile = dir.resolve(METADATA);
    StackMetadata meta = Files.isRegularFile(metaFile) ? StackMetadata.read(metaFile, dirName) : null;
    return finish(dir, dir.toString(), dirName, StackChunks.local(byNumber, metaFile), meta, maxChunkBytes, mode);
  }

  /**
   * Opens the stack in the remote directory {@code dir} ({@code hdfs://}, {@code s3a://}, ...), listed
   * through Hadoop's {@code FileSystem}; its chunks are read with positioned reads.
   */
  public static NpyStackDataset openRemote(URI dir, long maxChunkBytes) {
    return openRemote(dir, maxChunkBytes, null);
  }

  /**
   * {@link #openRemote(URI, long)} with the chunks read through the node-local {@code cache} (null:
   * read remotely): each chunk's header is read remotely on open; its first row read downloads it
   * whole (its header checked against its length before the copy is published) and starts the next
   * {@link RemoteCache#lookahead()} chunks downloading.
   */
  public static NpyStackDataset openRemote(URI dir, long maxChunkBytes, RemoteCache cache) {
    List<URI> listed = RemoteFiles.list(dir);
    List<URI> npy = listed.stream().filter(u -> RemoteFiles.name(u).endsWith(".npy")).toList();
    String location = dir.toString();
    String base = location.endsWith("/") ? location : location + "/";
    int n = chunkCount(location, npy.stream().map(RemoteFiles::name).toList(), i -> base + i + ".npy");
    List<URI> byNumber = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      String name = i + ".npy";
      byNumber.add(npy.stream().filter(u -> RemoteFiles.name(u).equals(name)).findFirst().orElseThrow());
    }
    String dirName = RemoteFiles.name(dir);
    if (dirName.isEmpty()) {
      dirName = "x";
    }
    URI metaUri = listed.stream().filter(u -> RemoteFiles.name(u).equals(METADATA)).findFirst().orElse(null);
    StackMetadata meta = null;
    if (metaUri != null) {
      byte[] bytes;
      try (RemoteInput in = RemoteFiles.open(metaUri)) {
        if (in.size() > Integer.MAX_VALUE) {
          throw new DatasetFormatException(metaUri.toString(), null, "is " + in.size() + " bytes; expected a small"
              + " JSON object");
        }
        bytes = new byte[(int) in.size()];
        in.readFully(0, ByteBuffer.wrap(bytes));
      }
      meta = StackMetadata.read(metaUri.toString(), JsonFiles.readObject(metaUri.toString(), bytes), dirName);
    }
    List<CachedFile> cached = null;
    if (cache != null) {
      String field = meta != null && meta.shapeName != null ? meta.shapeName : dirName;
      cached = FileCache.of(cache).open(byNumber, Collections.nCopies(n, NpyArrays.copyCheck(field)));
    }
    StackChunks<URI> chunks = cached == null ? StackChunks.remote(byNumber, metaUri)
        : StackChunks.cached(byNumber, metaUri, cached);
    try {
      return finish(null, location, dirName, chunks, meta, maxChunkBytes, IoMode.READ);
    } catch (RuntimeException e) {
      Resources.closeAfter(e, cached == null ? List.of() : cached);
      throw e;
    }
  }

  /** Checks that {@code names} (the {@code .npy} files) are exactly {@code 0.npy … k.npy}; returns k + 1. */
  private static int chunkCount(String location, List<String> names, IntFunction<String> chunkResource) {
    List<String> named = names.stream().filter(n -> !NpyLayout.isChunk(n)).collect(Collectors.toList());
    if (!named.isEmpty()) {
      throw new DatasetFormatException(location, null, "mixes numbered chunks with named arrays " + named
          + "; a directory is either an npy stack (0.npy, 1.npy, ...) or aligned named arrays");
    }
    long[] numbers = names.stream().mapToLong(n -> Long.parseLong(NpyLayout.stem(n))).sorted().toArray();
    for (int i = 0; i < numbers.length; i++) {
      if (numbers[i] != i) {
        throw new DatasetFormatException(chunkResource.apply(i), null, "missing chunk " + i
            + ".npy of the npy stack " + location + " (found " + numbers.length + " chunks numbered "
            + abbreviate(numbers) + ")");
      }
    }
    return numbers.length;
  }

  private static NpyStackDataset finish(Path dir, String location, String dirName, StackChunks<?> chunks, StackMetadata meta,
      long maxChunkBytes, IoMode mode) {
    int n = chunks.size();
    if (meta != null && meta.numShards >= 0 && meta.numShards != n) {
      throw new DatasetFormatException(meta.file, "key num_shards", "says " + meta.numShards
          + " chunks but " + location + " holds " + n + " (0.npy .. " + (n - 1) + ".npy)");
    }
    String field = meta != null && meta.shapeName != null ? meta.shapeName : dirName;
    NpyStackDataset s = new NpyStackDataset(dir, location, dirName, chunks, meta, field, maxChunkBytes, mode);
    if (meta == null || meta.fields == null || meta.shape == null) {
      s.resolve(); // nothing answers size and dtype without the chunk headers
    }
    return s;
  }

  private static String abbreviate(long[] n) {
    return n.length <= 8 ? Arrays.toString(n)
        : Arrays.toString(Arrays.copyOf(n, 8)).replace("]", ", ...]");
  }

  /** Chunk headers, row offsets and schema, read once. */
  private static final class Resolved {
    final NpyHeader[] headers;
    final long[] starts; // starts[k] = first global row of chunk k; starts[n] = total
    final Schema schema;
    final List<Split> splits;

    Resolved(NpyHeader[] headers, long[] starts, Schema schema, List<Split> splits) {
      this.headers = headers;
      this.starts = starts;
      this.schema = schema;
      this.splits = splits;
    }
  }

  private Resolved resolve() {
    Resolved r = resolved;
    if (r != null) {
      return r;
    }
    synchronized (this) {
      if (resolved == null) {
        checkOpen();
        resolved = doResolve();
      }
      return resolved;
    }
  }

  private Resolved doResolve() {
    int n = chunkFiles.size();
    NpyHeader[] headers = new NpyHeader[n];
    long[] starts = new long[n + 1];
    List<Split> splits = new ArrayList<>(n);
    List<TensorSpec> specs0 = null;
    for (int k = 0; k < n; k++) {
      String f = chunkFiles.resource(k);
      NpyHeader h = chunkFiles.header(k, fieldName);
      if (h.shape().length == 0) {
        throw new DatasetFormatException(f, null, "is a 0-d array; chunks of an npy stack need a first dimension");
      }
      List<TensorSpec> specs = specsOf(h);
      if (specs0 == null) {
        specs0 = specs;
      } else if (!specs.equals(specs0)) {
        throw new DatasetFormatException(f, null, "chunk has " + describe(specs) + " but "
            + chunkFiles.resource(0) + " has " + describe(specs0) + "; every chunk of a stack must have the same dtype and row shape");
      }
      headers[k] = h;
      try {
        starts[k + 1] = Math.addExact(starts[k], h.rows());
      } catch (ArithmeticException e) {
        throw new DatasetFormatException(f, "header", "its " + h.rows() + " rows after the " + starts[k]
            + " rows of the chunks before it make more rows than a dataset can index (" + Long.MAX_VALUE + ")");
      }
      splits.add(new Split(dirName + "/" + k + ".npy", h.rows()));
    }
    Schema schema = Schema.of(specs0);
    if (meta != null) {
      checkAgainstMetadata(headers, starts[n], schema);
    }
    return new Resolved(headers, starts, schema, List.copyOf(splits));
  }

  private void checkAgainstMetadata(NpyHeader[] headers, long total, Schema schema) {
    String m = meta.file;
    String c0 = chunkFiles.resource(0);
    if (meta.datasetLen >= 0 && meta.datasetLen != total) {
      throw new DatasetFormatException(m, "key dataset_len", "says " + meta.datasetLen + " rows but the chunks "
          + chunkFiles.name(0) + " .. " + chunkFiles.name(chunkFiles.size() - 1) + " of " + location
          + " hold " + total);
    }
    if (meta.shape != null) {
      Shape rowShape = headers[0].rowShape();
      long[] expected = rowShape.prepend(total).dims();
      if (!Arrays.equals(meta.shape, expected)) {
        throw new DatasetFormatException(m, "key " + meta.shapeName + "_shape", "says " + Arrays.toString(meta.shape)
            + " but the chunks hold " + Arrays.toString(expected) + " (" + c0 + " has rows of shape " + rowShape + ")");
      }
    }
    if (meta.fields != null) {
      List<NpyField> actual = headers[0].fields();
      boolean same = actual.size() == meta.fields.size();
      for (int i = 0; same && i < actual.size(); i++) {
        NpyField a = actual.get(i);
        NpyField e = meta.fields.get(i);
        same = a.dtype() == e.dtype() && a.subShape().equals(e.subShape())
            && (!headers[0].isStructured() || a.name().equals(e.name()))
            && (!meta.byteOrderGiven || a.bigEndian() == e.bigEndian());
      }
      if (!same) {
        throw new DatasetFormatException(m, "key dtype", "says '" + meta.dtypeText + "' but " + c0
            + " has dtype '" + headers[0].descr() + "'");
      }
    }
  }

  private static List<TensorSpec> specsOf(NpyHeader h) {
    List<TensorSpec> out = new ArrayList<>();
    for (NpyField f : h.fields()) {
      out.add(new TensorSpec(f.name(), f.dtype(), NpyArrayReader.concat(h.rowShape(), f.subShape())));
    }
    return out;
  }

  private static String describe(List<TensorSpec> specs) {
    return specs.size() == 1 ? specs.get(0).dtype() + "" + specs.get(0).shape() : specs.toString();
  }

  private void checkOpen() {
    if (closed) {
      throw new DatasetClosedException(location);
    }
  }

  private NpyArrayReader reader(int k) {
    NpyArrayReader r = readers.get(k);
    if (r != null) {
      return r;
    }
    synchronized (this) {
      checkOpen();
      r = readers.get(k);
      if (r == null) {
        r = chunkFiles.open(k, fieldName, maxChunkBytes, mode);
        NpyHeader was = resolve().headers[k];
        if (!Arrays.equals(was.shape(), r.header().shape()) || !was.descr().equals(r.header().descr())) {
          String now = r.resource();
          r.close();
          throw new DatasetFormatException(now, null, "changed since the stack was opened: header was "
              + was.descr() + Arrays.toString(was.shape()) + ", now " + r.header().descr() + Arrays.toString(r.header().shape()));
        }
        readers.set(k, r);
      }
      return r;
    }
  }

  /** The last chunk k with starts[k] <= index (so empty chunks are skipped). */
  private static int chunkOf(long[] starts, long index) {
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
  public Path path() {
    return dir;
  }

  @Override
  public String location() {
    return location;
  }

  @Override
  public int chunkCount() {
    return chunkFiles.size();
  }

  @Override
  public Schema schema() {
    Resolved r = resolved;
    if (r != null) {
      return r.schema;
    }
    if (meta != null && meta.fields != null && meta.shape != null) {
      Shape rowShape = Shape.of(Arrays.copyOfRange(meta.shape, 1, meta.shape.length));
      List<TensorSpec> specs = new ArrayList<>();
      for (NpyField f : meta.fields) {
        specs.add(new TensorSpec(f.name(), f.dtype(), NpyArrayReader.concat(rowShape, f.subShape())));
      }
      return Schema.of(specs);
    }
    return resolve().schema;
  }

  @Override
  public long size() {
    Resolved r = resolved;
    if (r != null) {
      return r.starts[r.starts.length - 1];
    }
    if (meta != null && meta.datasetLen >= 0) {
      return meta.datasetLen;
    }
    if (meta != null && meta.shape != null) {
      return meta.shape[0];
    }
    r = resolve();
    return r.starts[r.starts.length - 1];
  }

  @Override
  public Example get(long index) {
    checkOpen();
    Resolved r = resolve();
    long total = r.starts[r.starts.length - 1];
    RandomAccessDataset.checkIndex(index, total, this);
    int k = chunkOf(r.starts, index);
    NpyArrayReader reader = reader(k);
    Example.Builder fields = Example.builder(index);
    long row = index - r.starts[k];
    MappedReads.runAtRow(reader.resource(), row, () -> reader.putRow(row, fields));
    return fields.build();
  }

  @Override
  public void gather(long[] indices, int from, int count, BatchBuilder target) {
    checkOpen();
    Resolved r = resolve();
    long total = r.starts[r.starts.length - 1];
    for (int i = from; i < from + count; i++) {
      RandomAccessDataset.checkIndex(indices[i], total, this);
    }
    int start = target.size();
    boolean oneRun = MappedRows.isOneRun(indices, from, count); // every index was checked above
    int i = from;
    while (i < from + count) {
      int k = chunkOf(r.starts, indices[i]);
      long lo = r.starts[k];
      long hi = r.starts[k + 1];
      int run = 1;
      while (i + run < from + count && indices[i + run] >= lo && indices[i + run] < hi) {
        run++;
      }
      NpyArrayReader reader = reader(k);
      boolean segmentRun = oneRun || run != count && MappedRows.isOneRun(indices, i, run);
      int first = i;
      int n = run;
      int at = start + (i - from);
      MappedReads.runAtRows(reader.resource(), indices[i] - lo,
          () -> reader.copyRows(indices, first, n, lo, target, 0, at, segmentRun));
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
    return resolve().splits;
  }

  @Override
  public Flux<Example> read(Split split, long fromRow, long toRow) {
    return Flux.defer(() -> {
      Resolved r = resolve();
      int k = r.splits.indexOf(split);
      if (k < 0) {
        return Flux.error(new IllegalArgumentException("split " + split + " is not a chunk of " + this));
      }
      split.checkRows(fromRow, toRow);
      long base = r.starts[k];
      long end = base + Math.min(toRow, split.rowCount());
      long first = base + Math.min(fromRow, split.rowCount());
      return RowRange.flux(this, first, end);
    });
  }

  @Override
  public void close() {
    synchronized (this) {
      closed = true;
    }
    List<NpyArrayReader> open = new ArrayList<>(readers.length());
    for (int k = 0; k < readers.length(); k++) {
      open.add(readers.get(k));
    }
    try {
      NpyArrayReader.closeAll(open);
    } finally {
      chunkFiles.close();
    }
  }

  /** Its chunk files and {@code metadata.json} (path, size, modification time) and its schema. */
  @Override
  public String fingerprint() {
    return "npy-stack\n" + chunkFiles.fingerprint() + Fingerprints.schema(schema());
  }

  @Override
  public String toString() {
    return "npy-stack(" + location + ", " + chunkFiles.size() + " chunks)";
  }
}
