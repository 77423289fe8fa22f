package dev.sluice.io.shards;

import dev.sluice.core.Dataset;
import dev.sluice.core.DatasetIOException;
import dev.sluice.core.Example;
import dev.sluice.core.IoMode;
import dev.sluice.io.WriteOptions;
import dev.sluice.io.internal.RemoteFiles;
import dev.sluice.io.shards.internal.ShardMetadata;
import dev.sluice.io.shards.internal.ShardSetDataset;
import dev.sluice.io.shards.internal.ShardSetWriter;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Objects;

/**
 * Sluice shards: a directory of memory-mappable shard files plus a {@code metadata.json}, written in
 * parallel and read by index (the format is specified in {@code docs/formats/shards.md}).
 *
 * <pre>{@code
 * Shards.write(source, Path.of("train"), WriteOptions.defaults().withNumShards(8).withWorkers(2));
 * try (ShardSet data = Shards.open(Path.of("train"))) {
 *   Example e = data.get(17);                           // zero-copy views of the mapping
 *   Pipeline.from(data).shuffle().batch(256)...         // batch() gathers rows in bulk
 * }
 * }</pre>
 */
public final class Shards {
  /** Default largest mapping: 1 GiB, rounded down to a whole number of rows or items. */
  public static final long DEFAULT_MAX_CHUNK_BYTES = 1L << 30;
  /** The name of the file that describes a shard set. */
  public static final String METADATA = ShardMetadata.FILE_NAME;

  private Shards() {}

  /** Opens the shard set in {@code dir} (see {@link ShardSet}). */
  public static ShardSet open(Path dir) {
    return open(dir, DEFAULT_MAX_CHUNK_BYTES);
  }

  /**
   * {@link #open(Path)} with the largest single mapping given: blocks are mapped in chunks of at most
   * {@code maxChunkBytes}, each a whole number of rows or items (tests use tiny values).
   *
   * @param maxChunkBytes in [1, {@link Integer#MAX_VALUE}]
   * @throws dev.sluice.core.DatasetFormatException naming the file (metadata.json or a shard), the
   *     position and expected versus found, when the set is malformed: a missing shard, metadata
   *     that disagrees with a shard, a truncated or extended shard, a checksum mismatch of a header
   *     or footer
   */
  public static ShardSet open(Path dir, long maxChunkBytes) {
    return open(dir, maxChunkBytes, IoMode.MMAP);
  }

  /**
   * {@link #open(Path)} read in {@code mode}: {@link IoMode#MMAP} (the default) maps the shards,
   * {@link IoMode#READ} reads rows with positioned reads and maps nothing (for shards on network
   * filesystems, where random access through a mapping costs a page fault per row).
   */
  public static ShardSet open(Path dir, IoMode mode) {
    return open(dir, DEFAULT_MAX_CHUNK_BYTES, mode);
  }

  /**
   * {@link #open(Path, long)} read in {@code mode}.
   *
   * @param maxChunkBytes in [1, {@link Integer#MAX_VALUE}]
   * @param mode how the shards are read
   */
  public static ShardSet open(Path dir, long maxChunkBytes, IoMode mode) {
    Objects.requireNonNull(mode, "mode");
    if (maxChunkBytes < 1 || maxChunkBytes > Integer.MAX_VALUE) {
      throw new IllegalArgumentException("maxChunkBytes in [1, " + Integer.MAX_VALUE + "] required but it was "
          + maxChunkBytes);
    }
    if (!Files.isDirectory(dir)) {
      throw new DatasetIOException(dir.toString(), Files.exists(dir)
          ? "not a directory: a shard set is a directory holding metadata.json" : "no such file or directory", null);
    }
    return ShardSetDataset.open(dir, maxChunkBytes, mode);
  }

  /**
   * Opens the shard set named by {@code uri}. A {@code file:} URI (or one without a scheme) is
   * {@link #open(Path)}; any other scheme ({@code hdfs://}, {@code s3a://}, ...) is read through
   * Hadoop's {@code FileSystem} with positioned reads (nothing is mapped), every block's CRC32C
   * checked before its rows are delivered, as locally. Remote URIs need
   * {@code org.apache.hadoop:hadoop-client-api} and {@code hadoop-client-runtime} on the class path.
   *
   * @throws dev.sluice.core.MissingDependencyException for a remote URI without Hadoop on the class path
   * @throws DatasetIOException naming the URI when a file is missing or cannot be read
   */
  public static ShardSet open(URI uri) {
    if (!RemoteFiles.isRemote(uri)) {
      return open(RemoteFiles.localPath(uri));
    }
    return ShardSetDataset.open(uri, DEFAULT_MAX_CHUNK_BYTES);
  }

  /**
   * Writes every row of {@code dataset} into the shard set {@code dir}, in source order, as
   * {@link WriteOptions#numShards()} shards of (almost) equal row counts, written by
   * {@link WriteOptions#workers()} writers at once. The files are byte for byte the same for the
   * same rows and number of shards, whatever the number of workers. The whole set is built in a
   * temporary directory beside {@code dir} ({@code .<name>.tmp-<pid>-<random>}) and renamed to
   * {@code dir} when every shard and {@code metadata.json} are complete; a failure deletes it, and
   * the next write to {@code dir} deletes what a killed writer left. A dataset already at
   * {@code dir} is replaced, or refused, as {@link WriteOptions#existing()} says.
   *
   * <p>A random-access source, or a split source whose splits know their row counts, is read by
   * each writer for its own rows (so its {@code gather} or {@code read} is called from several
   * threads at once, as a parallel {@code batch} does); any other source is read twice (a count, then the rows) and
   * written one shard after the other. Memory stays bounded: a batch and the staging buffers per
   * writer. The fields come from the source's schema ({@link dev.sluice.core.HasSchema}), else
   * from its first example.
   *
   * @return the shards written, in order
   * @throws IllegalArgumentException when a row does not fit the schema, or {@code dir} is a file or
   *     a directory that holds something other than a dataset
   * @throws dev.sluice.core.DatasetIOException when the set cannot be written, or {@code dir} exists
   *     under {@link dev.sluice.io.ExistingOutput#FAIL}
   * @throws UnsupportedOperationException for nested fields (lists of strings, lists of lists)
   */
  public static List<ShardInfo> write(Dataset<Example> dataset, Path dir, WriteOptions options) {
    return ShardSetWriter.write(dataset, dir, options).shards();
  }
}
