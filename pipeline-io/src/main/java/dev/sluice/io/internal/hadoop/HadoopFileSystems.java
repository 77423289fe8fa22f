package dev.sluice.io.internal.hadoop;

import dev.sluice.core.DatasetIOException;
import dev.sluice.io.internal.RemoteFiles;
import dev.sluice.io.internal.RemoteInput;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.UnsupportedFileSystemException;

/**
 * Hadoop {@code FileSystem}s for remote URIs, and the one Hadoop {@link Configuration} Sluice uses:
 * Hadoop's defaults, {@code core-site.xml} on the class path, {@code core-site.xml} and
 * {@code hdfs-site.xml} of the directory {@code HADOOP_CONF_DIR} names, then the settings given to
 * {@link RemoteFiles#configure(Map)} (the CLI's {@code --conf key=value}).
 */
public final class HadoopFileSystems {
  private static volatile Configuration conf;
  private static volatile long confVersion = -1;

  private HadoopFileSystems() {}

  /** The configuration every remote read and write uses. */
  public static Configuration conf() {
    Configuration c = conf;
    if (c == null || confVersion != RemoteFiles.settingsVersion()) {
      synchronized (HadoopFileSystems.class) {
        long version = RemoteFiles.settingsVersion();
        if (conf == null || confVersion != version) {
          Configuration n = new Configuration();
          String dir = System.getenv("HADOOP_CONF_DIR");
          if (dir != null && !dir.isBlank()) {
            for (String f : List.of("core-site.xml", "hdfs-site.xml")) {
              java.nio.file.Path p = java.nio.file.Path.of(dir, f);
              if (java.nio.file.Files.isRegularFile(p)) {
                n.addResource(new Path(p.toUri()));
              }
            }
          }
          RemoteFiles.settings().forEach(n::set);
          conf = n;
          confVersion = version;
        }
        c = conf;
      }
    }
    return c;
  }

  /**
   * The file system of {@code uri}.
   *
   * @throws DatasetIOException naming the URI when there is none for its scheme or it cannot start
   */
  public static FileSystem fileSystem(URI uri) {
    try {
      return FileSystem.get(uri, conf());
    } catch (UnsupportedFileSystemException e) {
      throw new DatasetIOException(uri.toString(), "no Hadoop FileSystem for scheme '" + uri.getScheme()
          + "' (s3a:// needs org.apache.hadoop:hadoop-aws on the class path): " + RemoteFiles.scrub(e.getMessage()), e);
    } catch (IOException e) {
      throw new DatasetIOException(uri.toString(), "cannot reach its file system: " + RemoteFiles.scrub(e.getMessage()), e);
    }
  }

  /** Opens file {@code uri} for positioned reads. */
  public static RemoteInput open(URI uri) {
    FileSystem fs = fileSystem(uri);
    return HadoopFile.open(fs, new Path(uri), uri.toString());
  }

  /** True when {@code uri} names a directory. */
  public static boolean isDirectory(URI uri) {
    FileSystem fs = fileSystem(uri);
    try {
      return fs.getFileStatus(new Path(uri)).isDirectory();
    } catch (FileNotFoundException e) {
      throw new DatasetIOException(uri.toString(), "no such file or directory", e);
    } catch (IOException e) {
      throw new DatasetIOException(uri.toString(), "cannot read its status: " + RemoteFiles.scrub(e.getMessage()), e);
    }
  }

  /** The regular files directly inside directory {@code uri} ({@code FileSystem.listStatus}), in name order. */
  public static List<URI> list(URI uri) {
    FileSystem fs = fileSystem(uri);
    List<URI> out = new ArrayList<>();
    try {
      FileStatus[] all = fs.listStatus(new Path(uri));
      java.util.Arrays.sort(all, (a, b) -> a.getPath().getName().compareTo(b.getPath().getName()));
      for (FileStatus s : all) {
        if (s.isFile()) {
          out.add(s.getPath().toUri());
        }
      }
    } catch (FileNotFoundException e) {
      throw new DatasetIOException(uri.toString(), "no such file or directory", e);
    } catch (IOException e) {
      throw new DatasetIOException(uri.toString(), "cannot list: " + RemoteFiles.scrub(e.getMessage()), e);
    }
    return out;
  }

  /**
   * Writes the local file {@code from} to {@code to} through {@code fs.create}: S3A's own
   * {@code copyFromLocalFile} needs an unshaded commons-collections4 that hadoop-client-runtime
   * does not provide.
   */
  private static void upload(FileSystem fs, java.nio.file.Path from, Path to) throws IOException {
    try (org.apache.hadoop.fs.FSDataOutputStream out = fs.create(to, true)) {
      java.nio.file.Files.copy(from, out);
    }
  }

  /**
   * Copies the local file or directory {@code local} to {@code target} so that no reader ever sees
   * it half-written. Without {@code force} an existing target is refused.
   *
   * <p>On a file system whose files appear only when their stream closes and whose streams can be
   * aborted (the object stores, such as {@code s3a://}), where a rename copies every object,
   * nothing is renamed: a file is uploaded straight to its name, and a shard set's files under
   * names unique to this write, then its {@code metadata.json} (see {@link ObjectStoreCommit}).
   *
   * <p>Elsewhere ({@code hdfs://}, {@code file://}, where a rename is atomic) the copy goes into a
   * hidden temporary beside the target ({@code .<name>.tmp-<random>}), a directory's
   * {@code metadata.json} last, and is renamed into place; with {@code force} an existing target is
   * deleted just before the rename. A failure deletes the temporary.
   *
   * @throws DatasetIOException naming the target when it exists (without {@code force}) or a copy,
   *     delete or rename fails
   */
  public static void publish(java.nio.file.Path local, URI target, boolean force) {
    FileSystem fs = fileSystem(target);
    Path to = new Path(target);
    try {
      if (ObjectStoreCommit.applies(fs, to.getParent() == null ? to : to.getParent())) {
        ObjectStoreCommit.publish(fs, local, target, force);
        return;
      }
    } catch (IOException e) {
      throw new DatasetIOException(target.toString(), "cannot read its file system's capabilities: "
          + RemoteFiles.scrub(e.getMessage()), e);
    }
    Path temp = new Path(to.getParent(), "." + to.getName() + ".tmp-"
        + Long.toHexString(java.util.concurrent.ThreadLocalRandom.current().nextLong()));
    try {
      if (!force && fs.exists(to)) {
        throw new DatasetIOException(target.toString(), "already exists; pass --force to replace it", null);
      }
      if (java.nio.file.Files.isDirectory(local)) {
        fs.mkdirs(temp);
        List<java.nio.file.Path> files;
        try (java.util.stream.Stream<java.nio.file.Path> all = java.nio.file.Files.walk(local)) {
          files = all.filter(java.nio.file.Files::isRegularFile)
              .sorted(java.util.Comparator.comparing((java.nio.file.Path f) -> f.getFileName().toString()
                  .equals("metadata.json")).thenComparing(java.nio.file.Path::toString))
              .toList();
        }
        for (java.nio.file.Path f : files) {
          Path dst = new Path(temp, local.relativize(f).toString().replace(java.io.File.separatorChar, '/'));
          upload(fs, f, dst);
        }
      } else {
        upload(fs, local, temp);
      }
      if (force && fs.exists(to) && !fs.delete(to, true)) {
        throw new IOException("cannot delete the existing " + to);
      }
      if (!fs.rename(temp, to)) {
        throw new IOException("cannot rename " + temp + " to " + to);
      }
    } catch (IOException | RuntimeException e) {
      try {
        fs.delete(temp, true);
      } catch (IOException suppressed) {
        e.addSuppressed(suppressed);
      }
      if (e instanceof RuntimeException r) {
        throw r;
      }
      throw new DatasetIOException(target.toString(), "write failed: " + RemoteFiles.scrub(e.getMessage()), e);
    }
  }
}
