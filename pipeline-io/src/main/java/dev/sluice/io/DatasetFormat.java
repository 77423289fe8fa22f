package dev.sluice.io;

import dev.sluice.core.Dataset;
import dev.sluice.core.Example;
import dev.sluice.core.IoMode;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;

/**
 * One on-disk format in the {@link Formats} registry: a probe that recognizes it from magic bytes
 * and layout, an opener, and optionally a writer. Implementations register through
 * {@code META-INF/services/dev.sluice.io.DatasetFormat}.
 */
public interface DatasetFormat {

  /** Short name used by {@code --format} and {@code --to} ({@code "npy"}, {@code "parquet"}). */
  String name();

  /**
   * True when {@code path} (a file or a directory) is in this format. Reads at most a few header
   * bytes; never throws for a file of another format.
   */
  boolean probe(Path path) throws IOException;

  /**
   * True when {@code path} is named as this format's data (for npy: a file whose name ends in
   * {@code .npy}) even though {@link #probe} does not recognize its contents. {@link Formats#detect}
   * asks only after every probe said no, and then hands the path to this format, whose opener says
   * precisely what is wrong with it instead of "not a recognized dataset". Never throws.
   */
  default boolean claimsByName(Path path) {
    return false;
  }

  /**
   * Opens {@code path} as a dataset of examples. Sources also implement {@link dev.sluice.core.HasSchema}
   * and, as the format allows, {@link dev.sluice.core.RandomAccessDataset} or
   * {@link dev.sluice.core.SplitDataset}.
   *
   * @throws dev.sluice.core.DatasetException naming the file and the problem
   */
  Dataset<Example> open(Path path);

  /**
   * Opens {@code path} reading only the fields {@code columns} (every field when empty), in that
   * order. A format that stores fields apart (Parquet columns) reads nothing else, so a field it
   * cannot represent blocks nothing when left out; the default opens every field and selects.
   *
   * @throws IllegalArgumentException naming a column the dataset does not have
   * @throws dev.sluice.core.DatasetException naming the file and the problem
   */
  default Dataset<Example> open(Path path, List<String> columns) {
    Dataset<Example> ds = open(path);
    return columns.isEmpty() ? ds : dev.sluice.io.internal.Projection.of(ds, columns);
  }

  /**
   * The I/O modes {@link #open(Path, List, IoMode)} accepts: both for formats that read local files
   * either through a mapping or with positioned reads (npy, shards, Arrow, Parquet), none for a
   * format that offers no choice (the default).
   */
  default Set<IoMode> ioModes() {
    return Set.of();
  }

  /**
   * {@link #open(Path, List)} with local files read in {@code io}: mapped ({@link IoMode#MMAP}) or
   * with positioned reads ({@link IoMode#READ}).
   *
   * @throws IllegalArgumentException when {@code io} is not one of {@link #ioModes()}
   * @throws dev.sluice.core.DatasetException naming the file and the problem
   */
  default Dataset<Example> open(Path path, List<String> columns, IoMode io) {
    throw new IllegalArgumentException(name() + " offers no choice of I/O mode, so it cannot be opened with "
        + io.name().toLowerCase(java.util.Locale.ROOT));
  }

  /** True when {@link #write} is implemented. */
  default boolean canWrite() {
    return false;
  }

  /**
   * True when {@link #write} writes one file at {@code out} (Parquet), false when it writes a
   * directory of files (npy). The command line uses it to put a one-file format's output inside a
   * directory when the user names one ({@code OUT/}).
   */
  default boolean writesOneFile() {
    return false;
  }

  /**
   * Writes every example of {@code dataset} (one pass, source order) to {@code out}.
   *
   * @throws UnsupportedOperationException unless {@link #canWrite()}
   */
  default void write(Dataset<Example> dataset, Path out, WriteOptions options) {
    throw new UnsupportedOperationException("writing " + name() + " is not supported");
  }
}
