package dev.sluice.io.parquet.internal;

import dev.sluice.core.DatasetIOException;
import dev.sluice.io.RemoteCache;
import dev.sluice.io.internal.cache.CachedFile;
import dev.sluice.io.internal.cache.CopyCheck;
import dev.sluice.io.internal.cache.FileCache;
import dev.sluice.io.internal.hadoop.HadoopFileSystems;
import java.io.IOException;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.UnsupportedFileSystemException;
import org.apache.parquet.hadoop.util.HadoopInputFile;

/**
 * Files named by a Hadoop {@code FileSystem} URI. The only class of Sluice that touches Hadoop: it
 * is loaded when a URI is opened, so local reads need no Hadoop on the class path.
 */
public final class HadoopFiles {
  private HadoopFiles() {}

  /**
   * The data files a URI names (a file, a directory's {@code *.parquet} files, or every regular
   * file not starting with {@code _} or {@code .} when none is named so, or a glob's matches), in
   * name order, with their footers read.
   */
  public static List<ParquetFileInfo> open(URI uri) {
    Configuration c = HadoopFileSystems.conf();
    List<FileStatus> found = dataFiles(uri);
    List<ParquetFileInfo> infos = new ArrayList<>();
    for (FileStatus s : found) {
      try {
        infos.add(ParquetFileInfo.open(s.getPath().toString(), HadoopInputFile.fromStatus(s, c)));
      } catch (IOException e) {
        throw new DatasetIOException(s.getPath().toString(), "cannot open: " + e.getMessage(), e);
      }
    }
    return infos;
  }

  /**
   * The data files a URI names, as {@link #open(URI)} finds them, read through the node-local
   * {@code cache}: footers read remotely now, row groups from the downloaded copies.
   */
  public static List<ParquetFileInfo> open(URI uri, RemoteCache cache) {
    List<URI> files = dataFiles(uri).stream().map(s -> s.getPath().toUri()).toList();
    CopyCheck check = CopyCheck.magicAndFooter("Parquet", "PAR1", 4);
    List<CachedFile> cached = FileCache.of(cache).open(files, java.util.Collections.nCopies(files.size(), check));
    List<ParquetFileInfo> infos = new ArrayList<>();
    try {
      for (CachedFile f : cached) {
        infos.add(ParquetFileInfo.open(f.resource(), new CachedInputFile(f)));
        f.opened();
      }
    } catch (RuntimeException e) {
      dev.sluice.core.internal.Resources.closeAfter(e, cached);
      throw e;
    }
    return infos;
  }

  private static List<FileStatus> dataFiles(URI uri) {
    Configuration c = HadoopFileSystems.conf();
    Path p = new Path(uri);
    List<FileStatus> found = new ArrayList<>();
    try {
      FileSystem fs = p.getFileSystem(c);
      FileStatus[] matches = fs.globStatus(p);
      if (matches == null || matches.length == 0) {
        throw new DatasetIOException(uri.toString(), "no such file or directory", null);
      }
      for (FileStatus s : matches) {
        if (s.isDirectory()) {
          List<FileStatus> inDir = new ArrayList<>();
          for (FileStatus f : fs.listStatus(s.getPath())) {
            if (f.isFile() && !hidden(f.getPath().getName())) {
              inDir.add(f);
            }
          }
          List<FileStatus> named = inDir.stream().filter(f -> f.getPath().getName().endsWith(".parquet")).toList();
          List<FileStatus> use = new ArrayList<>(named.isEmpty() ? inDir : named);
          use.sort((a, b) -> a.getPath().getName().compareTo(b.getPath().getName()));
          found.addAll(use);
        } else {
          found.add(s);
        }
      }
    } catch (UnsupportedFileSystemException e) {
      throw new DatasetIOException(uri.toString(), "no Hadoop FileSystem for scheme '" + uri.getScheme()
          + "' (s3a:// needs org.apache.hadoop:hadoop-aws on the class path): " + e.getMessage(), e);
    } catch (IOException e) {
      throw new DatasetIOException(uri.toString(), "cannot list: " + e.getMessage(), e);
    }
    if (found.isEmpty()) {
      throw new DatasetIOException(uri.toString(), "no data files", null);
    }
    return found;
  }

  private static boolean hidden(String name) {
    return name.startsWith("_") || name.startsWith(".");
  }

}
