package dev.sluice.io.parquet;

import dev.sluice.core.DatasetIOException;
import dev.sluice.io.parquet.internal.MappedInputFile;
import dev.sluice.io.parquet.internal.WindowedInputFile;
import dev.sluice.io.parquet.internal.ParquetFileInfo;
import java.io.IOException;
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
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.parquet.hadoop.util.HadoopInputFile;

/**
 * Opens Parquet files as a {@link ParquetDataset}: a file, a list of files, a directory (its
 * {@code *.parquet} files, or every regular file not starting with {@code _} or {@code .} when none
 * is named so, in name order) or a glob ({@code data/part-*.parquet}). Local paths are read through
 * a memory mapping or a window mapped per read ({@link ParquetOptions#localFiles()});
 * URIs with a scheme ({@code file://}, {@code hdfs://},
 * {@code s3a://} with hadoop-aws on the classpath) through Hadoop's {@code FileSystem}.
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
  private static volatile Configuration hadoopConf;

  private Parquet() {}

  /**
   * Opens {@code path} (a file, a directory or a glob, as {@link #open(Path, ParquetOptions)}) with
   * the default options.
   */
  public static ParquetDataset open(Path path) {
    return open(path, ParquetOptions.defaults());
  }

  /** A file, a directory or (when the file name holds {@code *}, {@code ?}, {@code [} or a brace) a glob. */
  public static ParquetDataset open(Path path, ParquetOptions options) {
    Objects.requireNonNull(path, "path");
    return open(expandLocal(path), options);
  }

  /** These files, in this order. */
  public static ParquetDataset open(List<Path> files, ParquetOptions options) {
    List<ParquetFileInfo> infos = new ArrayList<>();
    for (Path p : files) {
      infos.add(ParquetFileInfo.open(p.toString(), options.localFiles() == ParquetOptions.LocalFiles.MAPPED
          ? new MappedInputFile(p) : new WindowedInputFile(p)));
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

  /** A file, directory or glob named by a Hadoop {@code FileSystem} URI. */
  public static ParquetDataset open(URI uri, ParquetOptions options) {
    Objects.requireNonNull(uri, "uri");
    Configuration conf = conf();
    org.apache.hadoop.fs.Path p = new org.apache.hadoop.fs.Path(uri);
    List<FileStatus> found = new ArrayList<>();
    try {
      FileSystem fs = p.getFileSystem(conf);
      FileStatus[] matches = fs.globStatus(p);
      if (matches == null || matches.length == 0) {
        throw new DatasetIOException(uri.toString(), "no such file or directory", null);
      }
      for (FileStatus s : matches) {
        if (s.isDirectory()) {
          List<FileStatus> inDir = new ArrayList<>();
          for (FileStatus c : fs.listStatus(s.getPath())) {
            if (c.isFile() && !hidden(c.getPath().getName())) {
              inDir.add(c);
            }
          }
          List<FileStatus> named = inDir.stream().filter(c -> c.getPath().getName().endsWith(".parquet")).toList();
          List<FileStatus> use = new ArrayList<>(named.isEmpty() ? inDir : named);
          use.sort((a, b) -> a.getPath().getName().compareTo(b.getPath().getName()));
          found.addAll(use);
        } else {
          found.add(s);
        }
      }
    } catch (org.apache.hadoop.fs.UnsupportedFileSystemException e) {
      throw new DatasetIOException(uri.toString(), "no Hadoop FileSystem for scheme '" + uri.getScheme()
          + "' (s3a:// needs org.apache.hadoop:hadoop-aws on the classpath): " + e.getMessage(), e);
    } catch (IOException e) {
      throw new DatasetIOException(uri.toString(), "cannot list: " + e.getMessage(), e);
    }
    if (found.isEmpty()) {
      throw new DatasetIOException(uri.toString(), "no data files", null);
    }
    List<ParquetFileInfo> infos = new ArrayList<>();
    for (FileStatus s : found) {
      try {
        infos.add(ParquetFileInfo.open(s.getPath().toString(), HadoopInputFile.fromStatus(s, conf)));
      } catch (IOException e) {
        throw new DatasetIOException(s.getPath().toString(), "cannot open: " + e.getMessage(), e);
      }
    }
    return new ParquetDataset(infos, options);
  }

  private static Configuration conf() {
    Configuration c = hadoopConf;
    if (c == null) {
      synchronized (Parquet.class) {
        if (hadoopConf == null) {
          hadoopConf = new Configuration();
        }
        c = hadoopConf;
      }
    }
    return c;
  }

  private static boolean hidden(String name) {
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
