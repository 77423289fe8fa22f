package dev.sluice.io.npy;

import dev.sluice.core.Dataset;
import dev.sluice.core.DatasetFormatException;
import dev.sluice.core.DatasetIOException;
import dev.sluice.core.Example;
import dev.sluice.core.IoMode;
import dev.sluice.core.Tensor;
import dev.sluice.core.TensorSpec;
import dev.sluice.io.npy.internal.AlignedNpyDataset;
import dev.sluice.io.npy.internal.NpyArrays;
import dev.sluice.io.npy.internal.NpyLayout;
import dev.sluice.io.npy.internal.NpyStackDataset;
import dev.sluice.io.npy.internal.NpyWriter;
import dev.sluice.core.UnsupportedFormatException;
import dev.sluice.core.internal.Resources;
import dev.sluice.io.internal.RemoteFiles;
import dev.sluice.io.internal.RemoteInput;
import dev.sluice.io.RemoteCache;
import dev.sluice.io.internal.cache.CachedFile;
import dev.sluice.io.internal.cache.CopyCheck;
import dev.sluice.io.internal.cache.FileCache;
import java.io.IOException;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Objects;

/**
 * Memory-mapped NumPy sources and the {@code .npy} writer.
 *
 * <pre>{@code
 * try (NpyDataset data = Npy.open(Path.of("train"))) {   // x.npy + label.npy -> fields label, x
 *   Example e = data.get(17);                             // zero-copy views of the mapping
 * }
 * }</pre>
 *
 * <p>{@link #open(Path)} accepts a {@code .npy} file (one field named after the file, or one field
 * per field of a structured dtype), a directory of equal-length named arrays (one dataset of aligned
 * fields, in file-name order), or an npy stack (a directory of {@code 0.npy … k.npy}, optionally
 * with a {@code metadata.json}; see {@link NpyStack}). Header versions 1.0, 2.0 and 3.0 and every
 * numeric dtype are read; big-endian values and Fortran-order arrays are delivered as little-endian
 * C-order copies; object (pickled) arrays are refused and never unpickled.
 */
public final class Npy {
  /** Default largest mapping: 1 GiB, rounded down to a whole number of rows. */
  public static final long DEFAULT_MAX_CHUNK_BYTES = 1L << 30;

  private Npy() {}

  /** Opens a file, a directory of aligned arrays or an npy stack. */
  public static NpyDataset open(Path path) {
    return open(path, DEFAULT_MAX_CHUNK_BYTES);
  }

  /**
   * {@link #open(Path)} with the largest single mapping given: files are mapped in chunks of at most
   * {@code maxChunkBytes}, each a whole number of rows (tests use tiny values).
   *
   * @param maxChunkBytes in [1, {@link Integer#MAX_VALUE}]
   */
  public static NpyDataset open(Path path, long maxChunkBytes) {
    return open(path, maxChunkBytes, IoMode.MMAP);
  }

  /**
   * {@link #open(Path)} read in {@code mode}: {@link IoMode#MMAP} (the default) maps the files,
   * {@link IoMode#READ} reads rows with positioned reads and maps nothing (for files on network
   * filesystems, where random access through a mapping costs a page fault per row).
   */
  public static NpyDataset open(Path path, IoMode mode) {
    return open(path, DEFAULT_MAX_CHUNK_BYTES, mode);
  }

  /**
   * {@link #open(Path, IoMode)} with the largest single mapping (or, with {@link IoMode#READ}, the
   * largest chunk of bytes kept for small reads) given.
   *
   * @param maxChunkBytes in [1, {@link Integer#MAX_VALUE}]
   * @param mode how the files are read
   */
  public static NpyDataset open(Path path, long maxChunkBytes, IoMode mode) {
    Objects.requireNonNull(mode, "mode");
    if (maxChunkBytes < 1 || maxChunkBytes > Integer.MAX_VALUE) {
      throw new IllegalArgumentException("maxChunkBytes in [1, " + Integer.MAX_VALUE + "] required but it was " + maxChunkBytes);
    }
    if (!Files.exists(path)) {
      throw new DatasetIOException(path.toString(), "no such file or directory", null);
    }
    NpyLayout layout;
    try {
      layout = Files.isDirectory(path) ? directoryLayout(path) : NpyLayout.FILE;
    } catch (IOException e) {
      throw new DatasetIOException(path.toString(), "cannot read: " + e, e);
    }
    return switch (layout) {
      case FILE -> AlignedNpyDataset.openFile(path, NpyLayout.stem(path), maxChunkBytes, mode);
      case ALIGNED -> AlignedNpyDataset.openAligned(path, NpyLayout.npyFiles(path), maxChunkBytes, mode);
      case STACK -> NpyStackDataset.open(path, maxChunkBytes, mode);
    };
  }

  /**
   * Opens a file, a directory of aligned arrays or an npy stack named by a URI. A {@code file:} URI (or one
   * without a scheme) is the local path, opened as {@link #open(Path)} does (mapped); any other
   * scheme ({@code hdfs://}, {@code s3a://}, ...) is read through Hadoop's {@code FileSystem} with
   * positioned reads ({@link IoMode#READ}), a directory listed with {@code FileSystem.listStatus}.
   * Remote URIs need {@code org.apache.hadoop:hadoop-client-api} and {@code hadoop-client-runtime} on
   * the class path ({@code s3a://} also {@code hadoop-aws}). A remote npy stack's chunks are listed
   * the same way and each read as a remote file is.
   *
   * @throws dev.sluice.core.MissingDependencyException for a remote URI without Hadoop on the class path
   */
  public static NpyDataset open(URI uri) {
    return open(uri, RemoteFiles.isRemote(uri) ? IoMode.READ : IoMode.MMAP);
  }

  /**
   * {@link #open(URI)} read in {@code mode}.
   *
   * @throws UnsupportedFormatException for {@link IoMode#MMAP} on a remote URI (a remote file
   *     cannot be mapped)
   */
  public static NpyDataset open(URI uri, IoMode mode) {
    return open(uri, DEFAULT_MAX_CHUNK_BYTES, mode);
  }

  /**
   * {@link #open(URI, IoMode)} with the largest chunk given.
   *
   * @param maxChunkBytes in [1, {@link Integer#MAX_VALUE}]
   */
  public static NpyDataset open(URI uri, long maxChunkBytes, IoMode mode) {
    Objects.requireNonNull(uri, "uri");
    Objects.requireNonNull(mode, "mode");
    if (!RemoteFiles.isRemote(uri)) {
      return open(RemoteFiles.localPath(uri), maxChunkBytes, mode);
    }
    if (maxChunkBytes < 1 || maxChunkBytes > Integer.MAX_VALUE) {
      throw new IllegalArgumentException("maxChunkBytes in [1, " + Integer.MAX_VALUE + "] required but it was " + maxChunkBytes);
    }
    if (mode == IoMode.MMAP) {
      throw new UnsupportedFormatException(uri.toString(), null, "a remote file cannot be memory-mapped;"
          + " read it with IoMode.READ (--io read)");
    }
    if (!RemoteFiles.isDirectory(uri)) {
      return AlignedNpyDataset.openRemote(uri.toString(), List.of(RemoteFiles.open(uri)), RemoteFiles.name(uri)
          .replaceFirst("\\.npy$", ""), maxChunkBytes);
    }
    List<URI> files = RemoteFiles.list(uri).stream().filter(u -> RemoteFiles.name(u).endsWith(".npy")).toList();
    if (files.isEmpty()) {
      throw new DatasetFormatException(uri.toString(), null, "holds no .npy files");
    }
    if (files.stream().anyMatch(u -> NpyLayout.isChunk(RemoteFiles.name(u)))) {
      return NpyStackDataset.openRemote(uri, maxChunkBytes);
    }
    List<RemoteInput> opened = new ArrayList<>();
    try {
      for (URI f : files) {
        opened.add(RemoteFiles.open(f));
      }
    } catch (RuntimeException e) {
      Resources.closeAfter(e, opened);
      throw e;
    }
    return AlignedNpyDataset.openRemote(uri.toString(), opened, null, maxChunkBytes);
  }

  /**
   * {@link #open(URI)} with a remote file's, aligned directory's or stack's {@code .npy} files read
   * through the node-local {@code cache}: each file's header is read remotely on open; the first
   * read of a file's rows downloads it whole into the cache (its header checked against its length
   * before the copy is published), starts the next {@link RemoteCache#lookahead()} files of the
   * dataset downloading, and from then on its rows are read from a mapping of the local copy. A
   * local URI ignores the cache.
   *
   * @throws dev.sluice.core.MissingDependencyException for a remote URI without Hadoop on the class path
   * @throws DatasetIOException naming the URI when a file is missing or cannot be read or cached
   */
  public static NpyDataset open(URI uri, RemoteCache cache) {
    Objects.requireNonNull(uri, "uri");
    Objects.requireNonNull(cache, "cache");
    if (!RemoteFiles.isRemote(uri)) {
      return open(RemoteFiles.localPath(uri));
    }
    if (!RemoteFiles.isDirectory(uri)) {
      String field = RemoteFiles.name(uri).replaceFirst("\\.npy$", "");
      CachedFile f = FileCache.of(cache).open(uri, NpyArrays.copyCheck(field));
      return AlignedNpyDataset.openRemote(uri.toString(), List.of(f), field, DEFAULT_MAX_CHUNK_BYTES);
    }
    List<URI> files = RemoteFiles.list(uri).stream().filter(u -> RemoteFiles.name(u).endsWith(".npy")).toList();
    if (files.isEmpty()) {
      throw new DatasetFormatException(uri.toString(), null, "holds no .npy files");
    }
    if (files.stream().anyMatch(u -> NpyLayout.isChunk(RemoteFiles.name(u)))) {
      return NpyStackDataset.openRemote(uri, DEFAULT_MAX_CHUNK_BYTES, cache);
    }
    List<CopyCheck> checks = files.stream().map(u -> NpyArrays.copyCheck(NpyLayout.stem(RemoteFiles.name(u)))).toList();
    List<RemoteInput> opened = new ArrayList<>(FileCache.of(cache).open(files, checks));
    return AlignedNpyDataset.openRemote(uri.toString(), opened, null, DEFAULT_MAX_CHUNK_BYTES);
  }

  private static NpyLayout directoryLayout(Path dir) throws IOException {
    if (NpyLayout.npyFiles(dir).isEmpty()) {
      throw new DatasetFormatException(dir.toString(), null, "holds no .npy files");
    }
    NpyLayout l = NpyLayout.of(dir);
    // a first file with bad magic still opens, so the error names that file
    return l != null ? l : NpyLayout.npyFiles(dir).stream().anyMatch(NpyLayout::isChunk) ? NpyLayout.STACK : NpyLayout.ALIGNED;
  }

  /**
   * The dtype and shape of the one array in {@code file}, from its header alone, as field
   * {@code name}.
   *
   * @throws dev.sluice.core.UnsupportedFormatException for a structured dtype (several fields per item)
   * @throws dev.sluice.core.DatasetFormatException for a file that is not a valid {@code .npy}
   */
  public static TensorSpec arraySpec(Path file, String name) {
    return NpyArrays.spec(file, name);
  }

  /**
   * The whole array in {@code file} as one little-endian C-order tensor (a copy: any byte or memory
   * order is converted) of the dtype and shape its header gives; a 0-d array is a scalar. For the
   * small per-record arrays of a directory of files; a large array is opened with {@link #open}.
   *
   * @throws dev.sluice.core.UnsupportedFormatException for a structured dtype or an array over 2 GiB
   * @throws dev.sluice.core.DatasetFormatException for a file that is not a valid {@code .npy}
   */
  public static Tensor readArray(Path file, String name) {
    return NpyArrays.read(file, name);
  }

  /**
   * {@link #arraySpec(Path, String)} of the file a Hadoop {@code FileSystem} URI names, from its
   * header alone (positioned reads).
   *
   * @throws dev.sluice.core.DatasetIOException naming the URI when it cannot be read
   */
  public static TensorSpec arraySpec(URI file, String name) {
    try (RemoteInput in = RemoteFiles.open(file)) {
      return NpyArrays.spec(in, name);
    }
  }

  /**
   * {@link #readArray(Path, String)} of the file a Hadoop {@code FileSystem} URI names, read whole
   * with positioned reads.
   *
   * @throws dev.sluice.core.DatasetIOException naming the URI when it cannot be read
   */
  public static Tensor readArray(URI file, String name) {
    return NpyArrays.read(RemoteFiles.open(file), name);
  }

  /**
   * {@link #readArray(URI, String)} through the node-local {@code cache}: the first read of the
   * file downloads it whole into the cache (its header checked against its length before the copy
   * is published) and every read, this one included, reads the local copy; a file already in the
   * cache reads no data from the remote file (opening it still asks the remote file system for its
   * size and modification time, which name the copy). A local URI ignores the cache.
   *
   * @throws DatasetIOException naming the URI when it cannot be read or cached
   */
  public static Tensor readArray(URI file, String name, RemoteCache cache) {
    Objects.requireNonNull(cache, "cache");
    if (!RemoteFiles.isRemote(file)) {
      return readArray(RemoteFiles.localPath(file), name);
    }
    CachedFile f = FileCache.of(cache).open(file, NpyArrays.copyCheck(name));
    f.opened();
    return NpyArrays.read(f, name);
  }

  /** Opens an npy stack directory ({@code 0.npy … k.npy}). */
  public static NpyStack openStack(Path dir) {
    return NpyStackDataset.open(dir, DEFAULT_MAX_CHUNK_BYTES);
  }

  /**
   * Opens the npy stack in remote directory {@code dir} ({@code hdfs://}, {@code s3a://}, ...; a
   * {@code file:} URI is the local directory, mapped): listed with {@code FileSystem.listStatus},
   * each chunk read with positioned reads as {@link #open(URI)} reads a file.
   *
   * @throws dev.sluice.core.MissingDependencyException for a remote URI without Hadoop on the class path
   */
  public static NpyStack openStack(URI dir) {
    Objects.requireNonNull(dir, "dir");
    return RemoteFiles.isRemote(dir) ? NpyStackDataset.openRemote(dir, DEFAULT_MAX_CHUNK_BYTES)
        : openStack(RemoteFiles.localPath(dir));
  }

  /**
   * {@link #openStack(URI)} with the chunks read through the node-local {@code cache}, as
   * {@link #open(URI, RemoteCache)} reads an npy stack. A local URI ignores the cache.
   *
   * @throws dev.sluice.core.MissingDependencyException for a remote URI without Hadoop on the class path
   * @throws DatasetIOException naming the URI when a chunk is missing or cannot be read or cached
   */
  public static NpyStack openStack(URI dir, RemoteCache cache) {
    Objects.requireNonNull(dir, "dir");
    Objects.requireNonNull(cache, "cache");
    return RemoteFiles.isRemote(dir) ? NpyStackDataset.openRemote(dir, DEFAULT_MAX_CHUNK_BYTES, cache)
        : openStack(RemoteFiles.localPath(dir));
  }

  /** Opens an npy stack directory ({@code 0.npy … k.npy}), its chunks read in {@code mode}. */
  public static NpyStack openStack(Path dir, IoMode mode) {
    return NpyStackDataset.open(dir, DEFAULT_MAX_CHUNK_BYTES, Objects.requireNonNull(mode, "mode"));
  }

  /**
   * Writes every example of {@code dataset} (one pass, source order) into {@code dir} as one
   * C-order little-endian {@code .npy} file per field ({@code <field>.npy}, shape
   * {@code [rows] + field shape}). Fields must be fixed-length and non-null. The files are written
   * into a temporary directory beside {@code dir} that replaces {@code dir} when complete (a failed
   * write leaves {@code dir} as it was); {@link NpyFormat#write} also offers
   * {@link dev.sluice.io.ExistingOutput#FAIL}.
   *
   * @throws IllegalArgumentException for a variable-length or null field, or when {@code dir} is a
   *     file, or a directory that holds something other than a dataset
   */
  public static void write(Dataset<Example> dataset, Path dir) {
    NpyWriter.write(dataset, dir);
  }
}
