package dev.sluice.io;

import dev.sluice.core.Dataset;
import dev.sluice.core.DatasetFormatException;
import dev.sluice.core.DatasetIOException;
import dev.sluice.core.Example;
import dev.sluice.io.arrow.Arrow;
import dev.sluice.io.arrow.ArrowOptions;
import dev.sluice.io.directory.Directory;
import dev.sluice.io.hdf5.Hdf5;
import dev.sluice.io.internal.RemoteFiles;
import dev.sluice.io.internal.RemoteInput;
import dev.sluice.io.npy.Npy;
import dev.sluice.io.parquet.Parquet;
import dev.sluice.io.parquet.ParquetOptions;
import dev.sluice.io.shards.Shards;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.stream.Collectors;

/**
 * The registry of formats: each registers a probe (magic bytes and layout) and an opener through
 * {@link ServiceLoader}; the CLI and {@link #open(Path)} use it to recognize a path's format.
 */
public final class Formats {
  private static final List<DatasetFormat> FORMATS = load();

  private Formats() {}

  private static List<DatasetFormat> load() {
    List<DatasetFormat> out = new ArrayList<>();
    ServiceLoader.load(DatasetFormat.class, Formats.class.getClassLoader()).forEach(out::add);
    return List.copyOf(out);
  }

  /** Every registered format, in registration order. */
  public static List<DatasetFormat> all() {
    return FORMATS;
  }

  /** The names of the registered formats. */
  public static List<String> names() {
    return FORMATS.stream().map(DatasetFormat::name).collect(Collectors.toList());
  }

  /**
   * The format called {@code name}.
   *
   * @throws IllegalArgumentException naming the known formats
   */
  public static DatasetFormat named(String name) {
    String n = name.toLowerCase(Locale.ROOT);
    for (DatasetFormat f : FORMATS) {
      if (f.name().equals(n)) {
        return f;
      }
    }
    throw new IllegalArgumentException("unknown format '" + name + "'; known formats: " + names());
  }

  /**
   * The first format whose probe recognizes {@code path}; else the first format that
   * {@linkplain DatasetFormat#claimsByName claims it by its name}, so that its opener reports what
   * is wrong with it.
   *
   * @throws DatasetIOException if the path does not exist or cannot be read
   * @throws DatasetFormatException if no format recognizes it
   */
  public static DatasetFormat detect(Path path) {
    if (!Files.exists(path)) {
      throw new DatasetIOException(path.toString(), "no such file or directory", null);
    }
    for (DatasetFormat f : FORMATS) {
      try {
        if (f.probe(path)) {
          return f;
        }
      } catch (IOException e) {
        throw new DatasetIOException(path.toString(), "cannot read: " + e.getMessage(), e);
      }
    }
    for (DatasetFormat f : FORMATS) {
      if (f.claimsByName(path)) {
        return f;
      }
    }
    throw new DatasetFormatException(path.toString(), null,
        "not a recognized dataset (known formats: " + names() + "); use --format to name one");
  }

  /** Opens {@code path} in the format its contents show. */
  public static Dataset<Example> open(Path path) {
    return detect(path).open(path);
  }

  /**
   * Adds Hadoop configuration settings ({@code fs.s3a.endpoint}, {@code dfs.client.*}, ...) used for
   * remote URIs opened from now on, over Hadoop's defaults, {@code core-site.xml} on the class path
   * and the {@code core-site.xml} and {@code hdfs-site.xml} of {@code HADOOP_CONF_DIR}. No message
   * shows the value of a setting whose key contains {@code secret}, {@code password},
   * {@code token} or {@code key}.
   */
  public static void configureHadoop(Map<String, String> settings) {
    RemoteFiles.configure(settings);
  }

  /** The formats a remote URI can be read in: {@link #openRemote} opens these. */
  public static final List<String> REMOTE_FORMATS = List.of("npy", "arrow", "parquet", "shards", "hdf5",
      "directory");

  /**
   * The format of the remote dataset {@code uri} ({@code hdfs://}, {@code s3a://}, ...), recognized
   * from its contents: a file by its first bytes ({@code \x93NUMPY}: npy, {@code ARROW1} or an IPC
   * stream's continuation marker: arrow, {@code PAR1}: parquet, HDF5's signature: hdf5); a
   * directory by the files it lists ({@code metadata.json} of a shard set: shards, {@code *.npy}:
   * npy, {@code *.parquet}: parquet; an npy stack's {@code 0.npy … k.npy} are npy too). As for a
   * local path, a directory of sample files is not recognized from its contents: it is named
   * {@code directory}.
   *
   * @throws DatasetIOException naming the URI when it does not exist or cannot be read
   * @throws DatasetFormatException when no remote format recognizes it
   * @throws dev.sluice.core.MissingDependencyException when Hadoop is not on the class path
   */
  public static String detectRemote(URI uri) {
    if (RemoteFiles.isDirectory(uri)) {
      List<URI> files = RemoteFiles.list(uri);
      if (files.stream().anyMatch(u -> RemoteFiles.name(u).equals(Shards.METADATA))) {
        return "shards";
      }
      if (files.stream().anyMatch(u -> RemoteFiles.name(u).endsWith(".npy"))) {
        return "npy";
      }
      if (files.stream().anyMatch(u -> RemoteFiles.name(u).endsWith(".parquet"))) {
        return "parquet";
      }
      throw new DatasetFormatException(uri.toString(), null, "a remote directory holding no shard set's "
          + Shards.METADATA + ", no .npy and no .parquet files; remote URIs are read as " + REMOTE_FORMATS);
    }
    byte[] head = new byte[8];
    int n;
    try (RemoteInput in = RemoteFiles.open(uri)) {
      n = (int) Math.min(head.length, in.size());
      in.readFully(0, java.nio.ByteBuffer.wrap(head, 0, n));
    }
    String ascii = new String(head, 0, n, java.nio.charset.StandardCharsets.ISO_8859_1);
    if (ascii.startsWith("\u0093NUMPY")) {
      return "npy";
    }
    if (ascii.startsWith("ARROW1") || n >= 4 && (head[0] & head[1] & head[2] & head[3]) == (byte) 0xFF) {
      return "arrow";
    }
    if (ascii.startsWith("PAR1")) {
      return "parquet";
    }
    if (ascii.equals("\u0089HDF\r\n\u001a\n")) {
      return "hdf5";
    }
    throw new DatasetFormatException(uri.toString(), "byte 0", "not a recognized remote dataset (remote URIs are"
        + " read as " + REMOTE_FORMATS + "); use --format to name one");
  }

  /**
   * {@link #openRemote(URI, String, List)} with shard sets, Arrow files, Parquet datasets, npy files,
   * aligned npy directories, npy stacks and directories of sample files read through the node-local
   * {@code cache} (null: read remotely); HDF5 ignores it (it is read from a temporary copy).
   *
   * @throws IllegalArgumentException when {@code format} cannot be read from a remote URI
   */
  public static Dataset<Example> openRemote(URI uri, String format, List<String> columns, RemoteCache cache) {
    if (cache == null) {
      return openRemote(uri, format, columns);
    }
    String f = format != null ? named(format).name() : detectRemote(uri);
    return switch (f) {
      case "arrow" -> Arrow.open(uri, ArrowOptions.builder().columns(columns).build(), cache);
      case "parquet" -> Parquet.open(uri, ParquetOptions.builder().columns(columns).build(), cache);
      case "shards" -> columns.isEmpty() ? Shards.open(uri, cache)
          : dev.sluice.io.internal.Projection.of(Shards.open(uri, cache), columns);
      case "npy" -> columns.isEmpty() ? Npy.open(uri, cache)
          : dev.sluice.io.internal.Projection.of(Npy.open(uri, cache), columns);
      case "directory" -> columns.isEmpty() ? Directory.open(uri, cache)
          : dev.sluice.io.internal.Projection.of(Directory.open(uri, cache), columns);
      default -> openRemote(uri, f, columns);
    };
  }

  /**
   * Opens the remote dataset {@code uri} in {@code format} (null: {@link #detectRemote recognized
   * from its contents}), reading only {@code columns} (every one when empty), with positioned reads
   * through Hadoop's {@code FileSystem}.
   *
   * @throws IllegalArgumentException when {@code format} cannot be read from a remote URI
   */
  public static Dataset<Example> openRemote(URI uri, String format, List<String> columns) {
    String f = format != null ? named(format).name() : detectRemote(uri);
    return switch (f) {
      case "npy" -> columns.isEmpty() ? Npy.open(uri) : dev.sluice.io.internal.Projection.of(Npy.open(uri), columns);
      case "arrow" -> Arrow.open(uri, ArrowOptions.builder().columns(columns).build());
      case "parquet" -> Parquet.open(uri, ParquetOptions.builder().columns(columns).build());
      case "shards" -> columns.isEmpty() ? Shards.open(uri)
          : dev.sluice.io.internal.Projection.of(Shards.open(uri), columns);
      case "hdf5" -> Hdf5.open(uri, columns);
      case "directory" -> columns.isEmpty() ? Directory.open(uri)
          : dev.sluice.io.internal.Projection.of(Directory.open(uri), columns);
      default -> throw new IllegalArgumentException("--format " + f + " cannot be read from a remote URI ("
          + uri + "); remote URIs are read as " + REMOTE_FORMATS);
    };
  }
}
