package dev.sluice.io.parquet;

import dev.sluice.core.DatasetIOException;
import dev.sluice.core.UnsupportedFormatException;
import dev.sluice.core.internal.OptionalLibrary;
import dev.sluice.io.parquet.internal.HadoopFiles;
import dev.sluice.io.parquet.internal.ParquetFileInfo;
import java.io.IOException;
import dev.sluice.io.RemoteCache;
import java.net.URI;
import java.nio.file.DirectoryStream;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.PathMatcher;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.stream.Stream;

/**
 * Opens Parquet files as a {@link ParquetDataset}: a file, a list of files, a directory (its
 * {@code *.parquet} files, or every regular file not starting with {@code _} or {@code .} when none
 * is named so, in name order) or a glob ({@code data/part-*.parquet}). Local paths are read through
 * a memory mapping or a window mapped per read ({@link ParquetOptions#localFiles()}), with no
 * Hadoop on the class path; URIs with a scheme ({@code file://}, {@code hdfs://}, {@code s3a://})
 * go through Hadoop's {@code FileSystem}, which their users add (see {@link #open(URI, ParquetOptions)}).
 *
 * <p>Opening reads and checks every footer (magic, footer, encryption, codecs) and maps the schema;
 * no data page is read until a flux is subscribed.
 *
 * <pre>{@code
 * ParquetDataset ds = Parquet.open(Path.of("train.parquet"),
 *     ParquetOptions.builder().columns("x", "label").decodeParallelism(2).build());
 * ds.batches(256).subscribe(batch -> { try (batch) { step(batch); } });
 * }</pre>
 */
public final class Parquet {
  /** The Hadoop version Sluice is built and tested with. */
  static final String HADOOP_VERSION = "3.5.0";

  private Parquet() {}

  /**
   * Opens {@code path} (a file, a directory or a glob, as {@link #open(Path, ParquetOptions)}) with
   * the default options.
   */
  public static ParquetDataset open(Path path) {
    return open(path, ParquetOptions.defaults());
  }

  /**
   * A file, a directory or (when the file name holds {@code *}, {@code ?}, {@code [} or a brace) a glob.
   *
   * @throws dev.sluice.core.MissingDependencyException when parquet-java
   *     ({@code org.apache.parquet:parquet-hadoop}) is not on the class path
   */
  public static ParquetDataset open(Path path, ParquetOptions options) {
    Objects.requireNonNull(path, "path");
    OptionalLibrary.PARQUET.require(path.toString());
    return open(expandLocal(path), options);
  }

  /**
   * These files, in this order.
   *
   * @throws dev.sluice.core.MissingDependencyException when parquet-java
   *     ({@code org.apache.parquet:parquet-hadoop}) is not on the class path
   */
  public static ParquetDataset open(List<Path> files, ParquetOptions options) {
    OptionalLibrary.PARQUET.require(files.size() == 1 ? files.get(0).toString() : null);
    List<ParquetFileInfo> infos = new ArrayList<>();
    for (Path p : files) {
      infos.add(ParquetFileInfo.openLocal(p, options.localFiles() == ParquetOptions.LocalFiles.MAPPED));
    }
    return new ParquetDataset(infos, options);
  }

  /**
   * A local path or a Hadoop {@code FileSystem} URI ({@code file:///data/x.parquet},
   * {@code hdfs://nn/dir}, {@code s3a://bucket/prefix/*.parquet}); strings without a scheme are
   * local paths.
   */
  public static ParquetDataset open(String pathOrUri, ParquetOptions options) {
    Objects.requireNonNull(pathOrUri, "pathOrUri");
    if (!pathOrUri.matches("^[a-zA-Z][a-zA-Z0-9+.-]*://.*")) {
      return open(Paths.get(pathOrUri), options);
    }
    return open(URI.create(pathOrUri), options);
  }

  /**
   * A file, directory or glob named by a Hadoop {@code FileSystem} URI. Needs Hadoop on the class
   * path ({@code org.apache.hadoop:hadoop-client-api} and {@code hadoop-client-runtime}, plus
   * {@code hadoop-aws} for {@code s3a://}); local paths do not.
   *
   * @throws UnsupportedFormatException naming the dependencies to add when Hadoop is missing
   * @throws dev.sluice.core.MissingDependencyException when parquet-java
   *     ({@code org.apache.parquet:parquet-hadoop}) is not on the class path
   */
  public static ParquetDataset open(URI uri, ParquetOptions options) {
    Objects.requireNonNull(uri, "uri");
    OptionalLibrary.PARQUET.require(uri.toString());
    String needs = "reading " + uri.getScheme() + ":// URIs needs Hadoop on the class path: add "
        + "org.apache.hadoop:hadoop-client-api and org.apache.hadoop:hadoop-client-runtime (" + HADOOP_VERSION + ")"
        + ("s3a".equals(uri.getScheme()) ? " and org.apache.hadoop:hadoop-aws" : "")
        + ("file".equals(uri.getScheme()) ? ", or give the path without file://" : "");
    if (!OptionalLibrary.HADOOP.isPresent()) {
      throw new UnsupportedFormatException(uri.toString(), null, needs);
    }
    try {
      return new ParquetDataset(HadoopFiles.open(uri), options);
    } catch (NoClassDefFoundError e) { // hadoop-client-api without hadoop-client-runtime
      throw new UnsupportedFormatException(uri.toString(), null, needs + " (missing " + e.getMessage() + ")", e);
    }
  }

  /**
   * {@link #open(URI, ParquetOptions)} with a remote dataset's files read through the node-local
   * {@code cache}: every file's footer is read remotely on open; the first read of a file's row
   * groups downloads it whole into the cache (checked for {@code PAR1} at both ends and a footer
   * length that fits before it is published), the next {@link RemoteCache#lookahead()} files start
   * downloading in the background, and row groups are then read from a mapping of the local copy.
   * Closing the dataset lets go of the copies. A {@code file:} URI ignores the cache.
   *
   * @throws dev.sluice.core.DatasetIOException naming the URI when it cannot be read or cached
   */
  public static ParquetDataset open(URI uri, ParquetOptions options, RemoteCache cache) {
    Objects.requireNonNull(uri, "uri");
    Objects.requireNonNull(cache, "cache");
    if (!dev.sluice.io.internal.RemoteFiles.isRemote(uri)) {
      return open(uri, options);
    }
    OptionalLibrary.PARQUET.require(uri.toString());
    dev.sluice.io.internal.RemoteFiles.requireHadoop(uri);
    return new ParquetDataset(HadoopFiles.open(uri, cache), options);
  }

  static boolean hidden(String name) {
    return name.startsWith("_") || name.startsWith(".");
  }

  /** The files a local path names: itself, a directory's data files, or a glob's matches. */
  static List<Path> expandLocal(Path path) {
    String name = path.getFileName() == null ? "" : path.getFileName().toString();
    boolean glob = name.chars().anyMatch(ch -> ch == '*' || ch == '?' || ch == '[' || ch == '{');
    try {
      if (glob) {
        Path dir = path.getParent() == null ? Paths.get(".") : path.getParent();
        PathMatcher m = FileSystems.getDefault().getPathMatcher("glob:" + name);
        List<Path> out = new ArrayList<>();
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir)) {
          for (Path p : ds) {
            if (Files.isRegularFile(p) && m.matches(p.getFileName())) {
              out.add(p);
            }
          }
        }
        if (out.isEmpty()) {
          throw new DatasetIOException(path.toString(), "the glob matches no file", null);
        }
        out.sort(null);
        return out;
      }
      if (!Files.exists(path)) {
        throw new DatasetIOException(path.toString(), "no such file or directory", null);
      }
      if (Files.isDirectory(path)) {
        List<Path> all;
        try (Stream<Path> s = Files.list(path)) {
          all = s.filter(Files::isRegularFile).filter(p -> !hidden(p.getFileName().toString())).sorted().toList();
        }
        List<Path> named = all.stream().filter(p -> p.getFileName().toString().endsWith(".parquet")).toList();
        if (all.isEmpty()) {
          throw new DatasetIOException(path.toString(), "the directory holds no data files", null);
        }
        return named.isEmpty() ? all : named;
      }
      return List.of(path);
    } catch (IOException e) {
      throw new DatasetIOException(path.toString(), "cannot list: " + e.getMessage(), e);
    }
  }
}
