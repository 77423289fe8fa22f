package dev.sluice.io.directory;

import dev.sluice.core.DType;
import dev.sluice.core.DatasetClosedException;
import dev.sluice.core.DatasetFormatException;
import dev.sluice.core.DatasetIOException;
import dev.sluice.core.Example;
import dev.sluice.core.Fingerprinted;
import dev.sluice.core.HasSchema;
import dev.sluice.core.RandomAccessDataset;
import dev.sluice.core.Schema;
import dev.sluice.core.Shape;
import dev.sluice.core.Tensor;
import dev.sluice.core.TensorSpec;
import dev.sluice.core.internal.Fingerprints;
import dev.sluice.io.npy.Npy;
import java.io.IOException;
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
  private final SampleFiles content;
  private final Schema schema;
  private volatile boolean closed;

  private DirectoryDataset(Path dir, List<Path> files, SampleFiles content, Schema schema) {
    this.dir = dir;
    this.files = files;
    this.content = content;
    this.schema = schema;
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
        : Schema.of(npySpec(files));
    return new DirectoryDataset(dir, List.copyOf(files), c, schema);
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
  private static TensorSpec npySpec(List<Path> files) {
    TensorSpec first = Npy.arraySpec(files.get(0), Directory.NPY_FIELD);
    long[] dims = first.shape().dims();
    for (int i = 1; i < files.size(); i++) {
      TensorSpec s = Npy.arraySpec(files.get(i), Directory.NPY_FIELD);
      long[] d = s.shape().dims();
      boolean sameTail = d.length == dims.length && d.length > 0
          && java.util.Arrays.equals(d, 1, d.length, dims, 1, dims.length);
      if (s.dtype() != first.dtype() || !(java.util.Arrays.equals(d, first.shape().dims()) || sameTail)) {
        throw new DatasetFormatException(files.get(i).toString(), "header", "holds " + s.dtype() + s.shape() + " but "
            + files.get(0).getFileName() + " holds " + first.dtype() + first.shape() + "; the samples of a directory "
            + "must share their dtype and all but their first dimension");
      }
      if (d.length > 0 && d[0] != dims[0]) {
        dims[0] = -1;
      }
    }
    return new TensorSpec(Directory.NPY_FIELD, first.dtype(), Shape.of(dims));
  }

  /** The directory. */
  public Path path() {
    return dir;
  }

  /** The sample files, in index order. */
  public List<Path> files() {
    return files;
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
    return files.size();
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
      throw new DatasetClosedException(dir.toString());
    }
    RandomAccessDataset.checkIndex(index, files.size(), this);
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
    Tensor t = Npy.readArray(file, Directory.NPY_FIELD);
    TensorSpec spec = schema.field(0);
    if (t.dtype() != spec.dtype() || !spec.shape().isCompatibleWith(t.shape())) {
      throw new DatasetFormatException(file.toString(), "header", "holds " + t.dtype() + t.shape() + " but the "
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
    return "directory " + content + "\n" + Fingerprints.files(files) + Fingerprints.schema(schema);
  }

  @Override
  public String toString() {
    return "directory(" + dir + ", " + files.size() + " files, " + content + ")";
  }
}
