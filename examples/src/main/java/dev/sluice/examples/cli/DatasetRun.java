package dev.sluice.examples.cli;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sluice.core.Batch;
import dev.sluice.core.Dataset;
import dev.sluice.core.DatasetFormatException;
import dev.sluice.core.Example;
import dev.sluice.core.MemoryManager;
import dev.sluice.core.RandomAccessDataset;
import dev.sluice.core.Split;
import dev.sluice.core.SplitDataset;
import dev.sluice.core.Tensor;
import dev.sluice.io.DatasetFormat;
import dev.sluice.io.Formats;
import dev.sluice.io.arrow.Arrow;
import dev.sluice.io.arrow.ArrowOptions;
import dev.sluice.operators.Pipeline;
import java.io.IOException;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.nio.file.Files;
import dev.sluice.io.RemoteCache;
import dev.sluice.io.internal.RemoteFiles;
import java.net.URI;
import java.nio.file.Path;
import java.util.Iterator;
import java.util.List;
import java.util.function.IntSupplier;

/** What the commands share: opening PATH (with {@code --format}), counting bytes, the JSON line. */
final class DatasetRun {
  private static final ObjectMapper JSON = new ObjectMapper()
      .configure(JsonGenerator.Feature.WRITE_BIGDECIMAL_AS_PLAIN, true);

  private DatasetRun() {}

  /** The registered formats' names, for {@code --format}'s help ({@code ${COMPLETION-CANDIDATES}}). */
  static final class FormatNames implements Iterable<String> {
    @Override
    public Iterator<String> iterator() {
      return Formats.names().iterator();
    }
  }

  /** The names of the registered formats that can write. */
  static final class WritableFormatNames implements Iterable<String> {
    @Override
    public Iterator<String> iterator() {
      return Formats.all().stream().filter(DatasetFormat::canWrite).map(DatasetFormat::name).iterator();
    }
  }

  /** True for the PATH {@code -}: an Arrow IPC stream on standard input. */
  static boolean isStdin(Path path) {
    return "-".equals(path.toString());
  }

  /**
   * The format of {@code path}: {@code format} when given, else the registry's guess from its
   * contents; for {@code -}, an Arrow IPC stream read from standard input. An empty regular file is
   * refused with a {@link DatasetFormatException} whatever the format.
   */
  static DatasetFormat formatOf(Path path, String format) {
    if (isStdin(path)) {
      if (format != null && !format.equalsIgnoreCase("arrow")) {
        throw new IllegalArgumentException("- (standard input) is read as an Arrow IPC stream, but --format is " + format);
      }
      return StdinArrow.INSTANCE;
    }
    if (isEmptyFile(path)) {
      throw new DatasetFormatException(path.toString(), null, "empty file (0 bytes)");
    }
    return format == null ? Formats.detect(path) : Formats.named(format);
  }

  private static boolean isEmptyFile(Path path) {
    try {
      return Files.isRegularFile(path) && Files.size(path) == 0;
    } catch (IOException e) {
      return false; // the format's open reports what is wrong with the file
    }
  }

  /** Standard input as an Arrow IPC stream (read once, in order). */
  private static final class StdinArrow implements DatasetFormat {
    static final StdinArrow INSTANCE = new StdinArrow();

    @Override
    public String name() {
      return "arrow";
    }

    @Override
    public boolean probe(Path path) {
      return false;
    }

    @Override
    public Dataset<Example> open(Path path) {
      return open(path, List.of());
    }

    @Override
    public Dataset<Example> open(Path path, List<String> columns) {
      return Arrow.openStream(System.in, "stdin", ArrowOptions.builder().columns(columns).build());
    }
  }

  /** Opens {@code path} in the format its contents show, or in {@code format} when given. */
  static Dataset<Example> open(Path path, String format) {
    return formatOf(path, format).open(path);
  }

  /**
   * Runs {@code body} with {@code limit} (bytes, or null for none) on the shared memory manager, which
   * sources and pipelines allocate from, and puts the previous limit back afterwards.
   */
  static int withMemoryLimit(Long limit, IntSupplier body) {
    if (limit == null) {
      return body.getAsInt();
    }
    MemoryManager memory = MemoryManager.shared();
    long before = memory.limit();
    memory.setLimit(limit);
    try {
      return body.getAsInt();
    } finally {
      memory.setLimit(before);
    }
  }


  /**
   * As {@link #open(Path, String)}, reading only {@code columns} (all when empty): a column left
   * out is never decoded, so one Sluice cannot read does not stop the others.
   */
  static Dataset<Example> open(Path path, String format, List<String> columns) {
    return formatOf(path, format).open(path, columns);
  }

  /**
   * As {@link #open(Path, String, List)}, with local files read as {@code io} says ({@code mmap} or
   * {@code read}, the value of {@code --io}; null: the format's default).
   *
   * @throws IllegalArgumentException when the format offers no such access, or PATH is standard input
   */
  static Dataset<Example> open(Path path, String format, List<String> columns, String io) {
    DatasetFormat f = formatOf(path, format);
    if (io == null) {
      return f.open(path, columns);
    }
    BenchData.Access access = BenchData.Access.of("--io", io);
    if (isStdin(path)) {
      throw new IllegalArgumentException("--io applies to files: standard input is read as a stream");
    }
    if (!BenchData.accessModes(f.name()).contains(access)) {
      throw BenchData.accessNotAChoice("--io " + io, f.name());
    }
    return f.ioModes().contains(access.io) ? f.open(path, columns, access.io) : f.open(path, columns);
  }

  /** The remote URI {@code arg} names ({@code hdfs://…}, {@code s3a://…}), or null for a local path. */
  static URI remote(String arg) {
    return RemoteFiles.remoteUri(arg);
  }

  /**
   * The dataset a command's PATH argument names: a local path (or {@code file:} URI) as
   * {@link #open(Path, String, List, String)} opens it, or a remote URI read with positioned reads
   * through Hadoop's {@code FileSystem}, its format recognized from its contents unless given.
   *
   * @throws IllegalArgumentException for {@code --io mmap} on a remote URI
   */
  static Dataset<Example> open(String arg, String format, List<String> columns, String io) {
    return open(arg, format, columns, io, null);
  }

  /**
   * {@link #open(String, String, List, String)} with a remote dataset (any format but HDF5)
   * read through the node-local {@code cache} ({@code --remote-cache}; null: none). A
   * local path ignores it.
   */
  static Dataset<Example> open(String arg, String format, List<String> columns, String io, RemoteCache cache) {
    URI uri = remote(arg);
    if (uri == null) {
      return open(localPath(arg), format, columns, io);
    }
    if (io != null && !"read".equals(io)) {
      throw new IllegalArgumentException("--io " + io + ": " + uri + " is remote and cannot be memory-mapped;"
          + " remote URIs are read with positioned reads (--io read)");
    }
    return Formats.openRemote(uri, format, columns, cache);
  }

  /** The name of the format of the dataset {@code arg} names ({@code format} when given). */
  static String formatName(String arg, String format) {
    URI uri = remote(arg);
    return uri == null ? formatOf(localPath(arg), format).name()
        : format != null ? Formats.named(format).name() : Formats.detectRemote(uri);
  }

  /** A local PATH argument: a plain path or a {@code file:} URI. */
  static Path localPath(String arg) {
    return arg.startsWith("file:") ? Path.of(URI.create(arg)) : Path.of(arg);
  }

  /** Closes the dataset when it holds files. */
  static void close(Dataset<?> dataset) {
    if (dataset instanceof AutoCloseable c) {
      try {
        c.close();
      } catch (RuntimeException e) {
        throw e;
      } catch (Exception e) {
        throw new IllegalStateException("closing " + dataset + " failed", e);
      }
    }
  }

  /** The rows of {@code data} when it knows them without reading, else -1. */
  static long knownRows(Dataset<?> data) {
    if (data instanceof RandomAccessDataset<?> ra) {
      return ra.size();
    }
    if (data instanceof SplitDataset<?> sd) {
      List<Split> splits = sd.splits();
      if (splits.stream().allMatch(Split::hasKnownRowCount)) {
        return splits.stream().mapToLong(Split::rowCount).sum();
      }
    }
    return -1;
  }

  /** Bytes of the values of one example (what a batch of it would hold, without offsets). */
  static long bytes(Example e) {
    long n = 0;
    for (Tensor t : e.fields().values()) {
      if (t != null) {
        n += t.byteSize();
      }
    }
    return n;
  }

  static long bytes(Batch b) {
    return b.byteSize();
  }

  /** A JSON object for the last stdout line; numbers as plain decimals. */
  static ObjectNode object() {
    return JSON.createObjectNode();
  }

  /** {@code value} with 6 decimals, never in exponent notation. */
  static BigDecimal decimal(double value) {
    if (!Double.isFinite(value)) {
      return BigDecimal.ZERO;
    }
    return BigDecimal.valueOf(value).setScale(6, RoundingMode.HALF_UP);
  }

  static String line(ObjectNode node) {
    try {
      return JSON.writeValueAsString(node);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
  }
}
