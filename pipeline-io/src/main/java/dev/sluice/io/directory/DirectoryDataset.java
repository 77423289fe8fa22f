package dev.sluice.io.directory;

import dev.sluice.core.DType;
import dev.sluice.core.DatasetClosedException;
import dev.sluice.core.DatasetFormatException;
import dev.sluice.core.DatasetIOException;
import dev.sluice.core.Example;
import dev.sluice.core.HasSchema;
import dev.sluice.core.RandomAccessDataset;
import dev.sluice.core.Schema;
import dev.sluice.core.Shape;
import dev.sluice.core.Tensor;
import dev.sluice.core.TensorSpec;
import dev.sluice.core.internal.Fingerprints;
import dev.sluice.core.spi.Fingerprinted;
import dev.sluice.io.npy.Npy;
import dev.sluice.core.UnsupportedFormatException;
import dev.sluice.io.internal.RemoteFiles;
import dev.sluice.io.internal.RemoteInput;
import dev.sluice.io.RemoteCache;
import dev.sluice.io.internal.cache.CachedFile;
import dev.sluice.io.internal.cache.CopyCheck;
import dev.sluice.io.internal.cache.FileCache;
import java.io.IOException;
import java.net.URI;
import java.util.function.IntFunction;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/**
 * A directory of one file per sample ({@link Directory}): example {@code i} is the {@code i}-th file
 * in name order, read whole on {@link #get} (its tensor owns a copy of the file's bytes). One field:
 * {@code data}, either the raw bytes ({@code bytes}) or the file's {@code .npy} array.
 *
 * <p>{@link #close()} makes later reads throw {@link DatasetClosedException}; the dataset holds no
 * open file between reads.
 */
public final class DirectoryDataset implements RandomAccessDataset<Example>, HasSchema, Fingerprinted, AutoCloseable {
  private final Path dir;
  private final List<Path> files;
  private final String location;
  private final List<URI> uris;
  private final SampleFiles content;
  private final Schema schema;
  private final RemoteCache cache; // null: remote files are read remotely on every get
  private volatile boolean closed;

  private DirectoryDataset(Path dir, List<Path> files, String location, List<URI> uris, SampleFiles content,
      Schema schema, RemoteCache cache) {
    this.cache = cache;
    this.dir = dir;
    this.files = files;
    this.location = location;
    this.uris = uris;
    this.content = content;
    this.schema = schema;
  }

  /**
   * Opens the remote directory {@code dir}: lists it through Hadoop's {@code FileSystem} now (the
   * same files, in the same order, as a local listing) and, for {@code .npy} samples, takes the
   * schema from the first file's header (with a {@code cache}, from the first file, downloaded);
   * every later file is checked against it when it is read.
   *
   * @param cache the node-local cache the files are read through, or null to read them remotely
   */
  static DirectoryDataset openRemote(URI dir, SampleFiles content, RemoteCache cache) {
    List<URI> files = RemoteFiles.list(dir).stream().filter(u -> !RemoteFiles.name(u).startsWith(".")).toList();
    if (files.isEmpty()) {
      throw new DatasetFormatException(dir.toString(), null, "holds no files (a directory dataset is one file per "
          + "sample; names starting with '.' and subdirectories are skipped)");
    }
    SampleFiles c = content;
    if (c == SampleFiles.AUTO) {
      c = files.stream().allMatch(u -> RemoteFiles.name(u).endsWith(".npy")) ? SampleFiles.NPY : SampleFiles.RAW;
    }
    Schema schema;
    if (c == SampleFiles.RAW) {
      schema = Schema.of(new TensorSpec(Directory.RAW_FIELD, DType.BYTES, Shape.scalar()));
    } else if (cache == null) {
      schema = Schema.of(Npy.arraySpec(files.get(0), Directory.NPY_FIELD));
    } else {
      Tensor first = Npy.readArray(files.get(0), Directory.NPY_FIELD, cache);
      schema = Schema.of(new TensorSpec(Directory.NPY_FIELD, first.dtype(), first.shape()));
    }
    return new DirectoryDataset(null, List.of(), dir.toString(), files, c, schema, cache);
  }

  static DirectoryDataset open(Path dir, SampleFiles content) {
    List<Path> files = list(dir);
    if (files.isEmpty()) {
      throw new DatasetFormatException(dir.toString(), null, "holds no files (a directory dataset is one file per "
          + "sample; names starting with '.' and subdirectories are skipped)");
    }
    SampleFiles c = content;
    if (c == SampleFiles.AUTO) {
      c = files.stream().allMatch(p -> p.getFileName().toString().endsWith(".npy")) ? SampleFiles.NPY : SampleFiles.RAW;
    }
    Schema schema = c == SampleFiles.RAW
        ? Schema.of(new TensorSpec(Directory.RAW_FIELD, DType.BYTES, Shape.scalar()))
        : Schema.of(npySpec(files.stream().map(Path::toString).toList(),
            i -> Npy.arraySpec(files.get(i), Directory.NPY_FIELD)));
    return new DirectoryDataset(dir, List.copyOf(files), dir.toString(), null, c, schema, null);
  }

  private static List<Path> list(Path dir) {
    try (Stream<Path> s = Files.list(dir)) {
      List<Path> out = new ArrayList<>();
      s.filter(p -> !p.getFileName().toString().startsWith(".") && Files.isRegularFile(p)).forEach(out::add);
      out.sort(Comparator.comparing(p -> p.getFileName().toString()));
      return out;
    } catch (IOException e) {
      throw new DatasetIOException(dir.toString(), "cannot list: " + e, e);
    }
  }

  /** The common spec of every sample array: one dtype, shapes equal but for a variable first dimension. */
  private static TensorSpec npySpec(List<String> files, IntFunction<TensorSpec> specOf) {
    TensorSpec first = specOf.apply(0);
    long[] dims = first.shape().dims();
    for (int i = 1; i < files.size(); i++) {
      TensorSpec s = specOf.apply(i);
      long[] d = s.shape().dims();
      boolean sameTail = d.length == dims.length && d.length > 0
          && java.util.Arrays.equals(d, 1, d.length, dims, 1, dims.length);
      if (s.dtype() != first.dtype() || !(java.util.Arrays.equals(d, first.shape().dims()) || sameTail)) {
        throw new DatasetFormatException(files.get(i), "header", "holds " + s.dtype() + s.shape() + " but "
            + files.get(0).substring(files.get(0).lastIndexOf('/') + 1) + " holds " + first.dtype() + first.shape() + "; the samples of a directory "
            + "must share their dtype and all but their first dimension");
      }
      if (d.length > 0 && d[0] != dims[0]) {
        dims[0] = -1;
      }
    }
    return new TensorSpec(Directory.NPY_FIELD, first.dtype(), Shape.of(dims));
  }

  /** The directory; null when it was opened from a remote URI. */
  public Path path() {
    return dir;
  }

  /** The directory or URI this dataset was opened from, as given. */
  public String location() {
    return location;
  }

  /** The sample files, in index order; empty when the directory was opened from a remote URI. */
  public List<Path> files() {
    return files;
  }

  /** The sample files as URIs ({@code file:} ones for a local directory), in index order. */
  public List<URI> uris() {
    return uris != null ? uris : files.stream().map(Path::toUri).toList();
  }

  /** What the files hold ({@link SampleFiles#RAW} or {@link SampleFiles#NPY}, never AUTO). */
  public SampleFiles content() {
    return content;
  }

  @Override
  public Schema schema() {
    return schema;
  }

  @Override
  public long size() {
    return uris != null ? uris.size() : files.size();
  }

  /**
   * Reads file {@code index} whole.
   *
   * @throws DatasetIOException naming the file when it is gone or unreadable
   * @throws DatasetFormatException when a {@code .npy} sample is malformed or changed since the open
   */
  @Override
  public Example get(long index) {
    if (closed) {
      throw new DatasetClosedException(location);
    }
    RandomAccessDataset.checkIndex(index, size(), this);
    if (uris != null) {
      return getRemote(index);
    }
    Path file = files.get((int) index);
    if (content == SampleFiles.RAW) {
      try {
        byte[] bytes = Files.readAllBytes(file);
        return Example.of(index, Directory.RAW_FIELD,
            Tensor.wrap(DType.BYTES, Shape.scalar(), ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN)));
      } catch (NoSuchFileException e) {
        throw new DatasetIOException(file.toString(), "no such file (removed after " + dir + " was opened)", e);
      } catch (IOException e) {
        throw new DatasetIOException(file.toString(), "cannot read: " + e, e);
      }
    }
    return npyExample(index, file.toString(), Npy.readArray(file, Directory.NPY_FIELD));
  }

  /**
   * Reads remote file {@code index} whole: one open and, for an {@code .npy} sample, its header then
   * its data with one positioned read each; through the cache, from the local copy (downloaded on
   * the first read).
   */
  private Example getRemote(long index) {
    URI uri = uris.get((int) index);
    if (content == SampleFiles.NPY) {
      Tensor t = cache != null ? Npy.readArray(uri, Directory.NPY_FIELD, cache) : Npy.readArray(uri, Directory.NPY_FIELD);
      return npyExample(index, uri.toString(), t);
    }
    try (RemoteInput in = cache != null ? FileCache.of(cache).open(uri, CopyCheck.NONE) : RemoteFiles.open(uri)) {
      if (in.size() > Integer.MAX_VALUE) {
        throw new UnsupportedFormatException(uri.toString(), null, "is " + in.size() + " bytes; one sample holds at"
            + " most " + Integer.MAX_VALUE);
      }
      if (in instanceof CachedFile c) {
        c.opened();
      }
      ByteBuffer bytes = ByteBuffer.allocate((int) in.size()).order(ByteOrder.LITTLE_ENDIAN);
      in.readFully(0, bytes);
      return Example.of(index, Directory.RAW_FIELD, Tensor.wrap(DType.BYTES, Shape.scalar(), bytes.flip()));
    }
  }

  private Example npyExample(long index, String file, Tensor t) {
    TensorSpec spec = schema.field(0);
    if (uris != null && (t.dtype() != spec.dtype() || !spec.shape().equals(t.shape()))) {
      throw new DatasetFormatException(file, "header", "holds " + t.dtype() + t.shape() + " but "
          + RemoteFiles.name(uris.get(0)) + " holds " + spec.dtype() + spec.shape() + "; the samples of a remote"
          + " directory must share the first file's dtype and shape (read a directory of samples whose first"
          + " dimension varies from a local copy, or convert it into shards)");
    }
    if (t.dtype() != spec.dtype() || !spec.shape().isCompatibleWith(t.shape())) {
      throw new DatasetFormatException(file, "header", "holds " + t.dtype() + t.shape() + " but the "
          + "directory's samples are " + spec.dtype() + spec.shape() + " (the file changed after the open)");
    }
    return Example.of(index, Directory.NPY_FIELD, t);
  }

  @Override
  public void close() {
    closed = true;
  }

  /** Every sample file (path, size, modification time), how they are read and the schema. */
  @Override
  public String fingerprint() {
    if (uris == null) {
      return "directory " + content + "\n" + Fingerprints.files(files) + Fingerprints.schema(schema);
    }
    StringBuilder sb = new StringBuilder("directory " + content + "\n");
    for (URI u : uris) {
      try (RemoteInput in = RemoteFiles.open(u)) {
        sb.append(in.fingerprint()).append('\n');
      }
    }
    return sb.append(Fingerprints.schema(schema)).toString();
  }

  @Override
  public String toString() {
    return "directory(" + location + ", " + size() + " files, " + content + ")";
  }
}
