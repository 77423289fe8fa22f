package dev.sluice.io.directory;

import dev.sluice.core.DatasetIOException;
import dev.sluice.io.RemoteCache;
import dev.sluice.io.internal.RemoteFiles;
import java.net.URI;
import java.nio.file.Files;
import java.util.Objects;
import java.nio.file.Path;

/**
 * A directory of files, one sample per file, read by index in sorted file-name order: tf.data's
 * {@code list_files} plus {@code read_file}, or PyTorch's dataset over a list of paths.
 *
 * <pre>{@code
 * try (DirectoryDataset images = Directory.open(Path.of("images"))) {   // field "data": bytes
 *   ByteBuffer jpeg = images.get(3).tensor("data").data();
 * }
 * }</pre>
 *
 * <p>The samples are the directory's regular files whose names do not start with {@code .}, sorted
 * by name (Java's {@code String} order of the names); subdirectories are not entered.
 */
public final class Directory {
  /** The field of a {@link SampleFiles#RAW} directory. */
  public static final String RAW_FIELD = "data";
  /** The field of a {@link SampleFiles#NPY} directory. */
  public static final String NPY_FIELD = "data";

  private Directory() {}

  /** Opens {@code dir}, {@link SampleFiles#AUTO}. */
  public static DirectoryDataset open(Path dir) {
    return open(dir, SampleFiles.AUTO);
  }

  /**
   * Opens {@code dir}: lists its files now (later additions are not seen) and, for {@code .npy}
   * samples, reads every header (not the data) to find the field's dtype and shape.
   *
   * @throws DatasetIOException when {@code dir} is not a readable directory
   * @throws dev.sluice.core.DatasetFormatException when it holds no files, or {@code .npy} samples
   *     disagree in dtype or shape (naming both files)
   */
  public static DirectoryDataset open(Path dir, SampleFiles content) {
    if (!Files.isDirectory(dir)) {
      throw new DatasetIOException(dir.toString(), Files.exists(dir) ? "not a directory" : "no such file or directory",
          null);
    }
    return DirectoryDataset.open(dir, content);
  }

  /** Opens the directory named by {@code dir}, {@link SampleFiles#AUTO}. */
  public static DirectoryDataset open(URI dir) {
    return open(dir, SampleFiles.AUTO);
  }

  /**
   * Opens the directory named by {@code dir}. A {@code file:} URI (or one without a scheme) is the
   * local directory, opened as {@link #open(Path, SampleFiles)} does; any other scheme
   * ({@code hdfs://}, {@code s3a://}, ...) is listed through Hadoop's {@code FileSystem} (the same
   * files in the same order as a local listing) and each file read whole with positioned reads,
   * retried as every remote read is: one open per sample read, an {@code .npy} sample's data read
   * with one positioned read into its tensor. A remote directory of {@code .npy} samples takes its
   * schema from the first file's header alone (opening it opens only that file); a later sample of
   * another dtype or shape fails when it is read, naming both files. Needs {@code org.apache.hadoop:hadoop-client-api} and
   * {@code hadoop-client-runtime} on the class path.
   *
   * @throws DatasetIOException naming the URI when it is missing or not a directory
   * @throws dev.sluice.core.DatasetFormatException as {@link #open(Path, SampleFiles)}
   * @throws dev.sluice.core.MissingDependencyException for a remote URI without Hadoop on the class path
   */
  public static DirectoryDataset open(URI dir, SampleFiles content) {
    Objects.requireNonNull(content, "content");
    if (!RemoteFiles.isRemote(dir)) {
      return open(RemoteFiles.localPath(dir), content);
    }
    if (!RemoteFiles.isDirectory(dir)) {
      throw new DatasetIOException(dir.toString(), "not a directory", null);
    }
    return DirectoryDataset.openRemote(dir, content, null);
  }

  /** Opens the directory named by {@code dir}, {@link SampleFiles#AUTO}, through {@code cache}. */
  public static DirectoryDataset open(URI dir, RemoteCache cache) {
    return open(dir, SampleFiles.AUTO, cache);
  }

  /**
   * {@link #open(URI, SampleFiles)} with a remote directory's files read through the node-local
   * {@code cache}: each sample file is downloaded whole into the cache on its first read (one
   * download per file per node, as for every cached file) and read from the local copy from then
   * on. Files are downloaded one by one as they are read, with no look-ahead: a sample is small,
   * and a shuffled epoch reads them in no predictable order. Every read still opens the remote file
   * once (its size and modification time name the copy) but reads no data from it once the copy is
   * there. For {@code .npy} samples the open downloads the first file, whose dtype and shape are the
   * schema. A local URI ignores the cache.
   *
   * @throws DatasetIOException naming the URI when it is missing, not a directory, or cannot be cached
   * @throws dev.sluice.core.MissingDependencyException for a remote URI without Hadoop on the class path
   */
  public static DirectoryDataset open(URI dir, SampleFiles content, RemoteCache cache) {
    Objects.requireNonNull(content, "content");
    Objects.requireNonNull(cache, "cache");
    if (!RemoteFiles.isRemote(dir)) {
      return open(RemoteFiles.localPath(dir), content);
    }
    if (!RemoteFiles.isDirectory(dir)) {
      throw new DatasetIOException(dir.toString(), "not a directory", null);
    }
    return DirectoryDataset.openRemote(dir, content, cache);
  }
}
