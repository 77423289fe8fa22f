package dev.sluice.examples.cli;

import dev.sluice.core.DType;
import dev.sluice.core.Dataset;
import dev.sluice.core.DatasetIOException;
import dev.sluice.core.Datasets;
import dev.sluice.core.Example;
import dev.sluice.core.HasSchema;
import dev.sluice.core.IoMode;
import dev.sluice.core.RandomAccessDataset;
import dev.sluice.core.Schema;
import dev.sluice.core.Shape;
import dev.sluice.core.Tensor;
import dev.sluice.core.TensorSpec;
import dev.sluice.core.internal.AtomicOutput;
import dev.sluice.io.DatasetFormat;
import dev.sluice.io.Formats;
import dev.sluice.io.WriteOptions;
import dev.sluice.io.directory.DirectoryDataset;
import dev.sluice.io.directory.SampleFiles;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;

/**
 * The datasets {@code sluice bench} generates when PATH is an empty directory: {@code rows} records
 * of {@code x} float32 values and an int64 {@code label} (the row index), either fixed-length
 * ({@code x} float32[dim], {@link Datasets#synthetic}) or variable-length ({@code x} float32[-1]
 * of 1 to {@code 2 dim - 1} values, {@code dim} on average, so both carry the same bytes on
 * average). A {@code directory} dataset holds one file per record with its {@code x} values as
 * little-endian float32 bytes.
 */
final class BenchData {
  /** The formats bench can generate, in the order the matrix runs them. */
  static final List<String> FORMATS = List.of("npy", "shards", "parquet", "arrow", "directory");
  /** Shards written for a generated {@code shards} dataset. */
  static final int SHARDS = 4;
  /** Row-group (Parquet) target of a generated dataset, so a few groups can decode in parallel. */
  static final long ROW_GROUP_BYTES = 1 << 20;
  /** The matrix's HDF5 series of contiguous datasets (h5py's default layout). */
  static final String HDF5 = "hdf5";
  /** The matrix's HDF5 series of chunked datasets: {@link #HDF5_CHUNK_ROWS} rows per chunk, shuffle + deflate level 4. */
  static final String HDF5_DEFLATE = "hdf5-deflate";
  /**
   * Rows per chunk of the chunked HDF5 series: small enough that a shuffled read of the matrix's
   * 50,000 records takes whole chunks as its blocks rather than decoding a chunk once per block.
   */
  static final int HDF5_CHUNK_ROWS = 1024;
  /** The file of a generated HDF5 dataset inside its directory. */
  static final String HDF5_FILE = "part-0.h5";
  /** The Python that writes HDF5 files (with h5py and NumPy). */
  static final String PYTHON = "/usr/bin/python3";
  private static final String WRITE_HDF5 = """
      import sys
      import numpy as np
      import h5py
      src, out, chunked, rows_per_chunk = sys.argv[1], sys.argv[2], sys.argv[3] == '1', int(sys.argv[4])
      x = np.load(src + '/x.npy', mmap_mode='r')
      label = np.load(src + '/label.npy', mmap_mode='r')
      with h5py.File(out, 'w') as f:
          if chunked and len(label) > 0:
              c = min(rows_per_chunk, len(label))
              kw = dict(shuffle=True, compression='gzip', compression_opts=4)
              f.create_dataset('x', data=x, chunks=(c,) + x.shape[1:], **kw)
              f.create_dataset('label', data=label, chunks=(c,), **kw)
          else:
              f.create_dataset('x', data=x)
              f.create_dataset('label', data=label)
      """;

  private BenchData() {}

  /** How a format reads its files: through a memory mapping or with read calls. */
  enum Access {
    MMAP("mmap", IoMode.MMAP),
    READ("read", IoMode.READ);

    final String label;
    final IoMode io;

    Access(String label, IoMode io) {
      this.label = label;
      this.io = io;
    }

    /** The access named {@code label} ({@code mmap} or {@code read}), as {@code option} gave it. */
    static Access of(String option, String label) {
      for (Access a : values()) {
        if (a.label.equals(label)) {
          return a;
        }
      }
      throw new IllegalArgumentException(option + " must be mmap or read but it was '" + label + "'");
    }
  }

  /**
   * The access modes {@code format} offers: npy, shards, Parquet and Arrow both (a mapping, or
   * positioned reads into batch memory; for Parquet each column chunk copied out); a directory reads
   * each sample file whole; other formats (HDF5) offer read calls when their format says so
   * ({@link DatasetFormat#ioModes()}), else are always mapped.
   */
  static List<Access> accessModes(String format) {
    return switch (format) {
      case "npy", "shards", "parquet", "arrow" -> List.of(Access.MMAP, Access.READ);
      case "directory" -> List.of(Access.READ);
      default -> Formats.named(format).ioModes().contains(IoMode.READ) ? List.of(Access.MMAP, Access.READ)
          : List.of(Access.MMAP);
    };
  }

  /** The access {@code format} uses when none is asked for: read calls for Parquet and directories, else the mapping. */
  static Access defaultAccess(String format) {
    return format.equals("parquet") || format.equals("directory") ? Access.READ : accessModes(format).get(0);
  }

  /**
   * The error for an access mode that {@code format} does not offer, asked for with {@code option}
   * ({@code --use-mmap}, {@code --io read}): it names what the format does.
   */
  static IllegalArgumentException accessNotAChoice(String option, String format) {
    String what = accessModes(format).equals(List.of(Access.READ))
        ? "reads each sample file with read calls and has no mapped mode"
        : "is always read through a memory mapping";
    return new IllegalArgumentException(option + ": " + format + " " + what
        + "; the choice between a mapping and read calls applies to npy, shards, parquet and arrow");
  }

  /** True when {@code format} (or the matrix series of that name) stores variable-length records. */
  static boolean holdsVariableLength(String format) {
    return !format.equals("npy") && !formatOf(format).equals(HDF5);
  }

  /** The format of a matrix series: {@code hdf5} for both HDF5 series, else the series' own name. */
  static String formatOf(String series) {
    return series.equals(HDF5_DEFLATE) ? HDF5 : series;
  }

  /**
   * Null when {@link #PYTHON} can write HDF5 files (h5py and NumPy import), else what is missing and
   * how to install it.
   */
  static String h5pyMissing() {
    String missing = PYTHON + " with h5py and NumPy is missing (apt-get install python3-h5py)";
    if (!Files.isExecutable(Path.of(PYTHON))) {
      return missing;
    }
    try {
      Process p = new ProcessBuilder(PYTHON, "-c", "import h5py, numpy").redirectErrorStream(true)
          .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
      if (!p.waitFor(60, java.util.concurrent.TimeUnit.SECONDS)) {
        p.destroyForcibly();
        return missing;
      }
      return p.exitValue() == 0 ? null : missing;
    } catch (IOException e) {
      return missing;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return missing;
    }
  }

  /**
   * Writes the fixed-length records bench generates as {@code dir/}{@value #HDF5_FILE}: datasets
   * {@code x} float32[rows, dim] and {@code label} int64[rows] holding the values of the generated
   * npy dataset, contiguous or (with {@code chunked}) in chunks of {@value #HDF5_CHUNK_ROWS} rows
   * with shuffle and deflate. The npy files are written first (beside {@code dir}, removed after)
   * and h5py ({@link #PYTHON}) copies them.
   *
   * @throws DatasetIOException naming the file when Python fails to write it
   */
  static Path generateHdf5(Path dir, boolean chunked, long rows, int dim, long seed) {
    Path src = dir.resolveSibling(dir.getFileName() + ".npy-source");
    Path out = dir.resolve(HDF5_FILE);
    Path part = dir.resolve(HDF5_FILE + ".tmp");
    try {
      deleteTree(src);
      generate(src, "npy", rows, dim, true, seed);
      Files.createDirectories(dir);
      Path err = Files.createTempFile("sluice-h5py", ".err");
      try {
        Process p = new ProcessBuilder(PYTHON, "-c", WRITE_HDF5, src.toString(), part.toString(), chunked ? "1" : "0",
            Integer.toString(HDF5_CHUNK_ROWS)).redirectOutput(ProcessBuilder.Redirect.DISCARD)
            .redirectError(err.toFile()).start();
        if (!p.waitFor(30, java.util.concurrent.TimeUnit.MINUTES)) {
          p.destroyForcibly();
          throw new DatasetIOException(out.toString(), PYTHON + " (h5py) did not finish writing it", null);
        }
        if (p.exitValue() != 0) {
          List<String> lines = Files.readAllLines(err);
          throw new DatasetIOException(out.toString(), PYTHON + " (h5py) failed to write it: "
              + (lines.isEmpty() ? "exit " + p.exitValue() : lines.get(lines.size() - 1)), null);
        }
      } finally {
        Files.deleteIfExists(err);
      }
      Files.move(part, out, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
      return out;
    } catch (IOException e) {
      throw new DatasetIOException(out.toString(), "cannot write: " + AtomicOutput.reason(e), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new DatasetIOException(out.toString(), "interrupted while writing", e);
    } finally {
      try {
        deleteTree(src);
        Files.deleteIfExists(part);
      } catch (IOException ignored) {
        // a leftover scratch copy is harmless; the next run removes it
      }
    }
  }

  private static void deleteTree(Path p) throws IOException {
    if (!Files.exists(p)) {
      return;
    }
    try (var walk = Files.walk(p)) {
      for (Path q : walk.sorted(java.util.Comparator.reverseOrder()).toList()) {
        Files.delete(q);
      }
    }
  }

  /** The records bench generates, before they are written. */
  static RandomAccessDataset<Example> records(long rows, int dim, boolean fixedLength, long seed) {
    return fixedLength ? Datasets.synthetic(rows, dim, seed) : new VariableRecords(rows, dim, seed);
  }

  /**
   * Writes the generated dataset in {@code format} into the empty directory {@code dir} and
   * returns the path to read it from ({@code dir} itself, or the one file of a one-file format).
   *
   * @throws IllegalArgumentException for variable-length records in a format that cannot hold them
   */
  static Path generate(Path dir, String format, long rows, int dim, boolean fixedLength, long seed) {
    if (!fixedLength && !holdsVariableLength(format)) {
      throw new IllegalArgumentException(format + " stores fixed-length records only: add --fixed-length "
          + "(variable-length records: shards, parquet, arrow, directory)");
    }
    RandomAccessDataset<Example> records = records(rows, dim, fixedLength, seed);
    try {
      Files.createDirectories(dir);
    } catch (IOException e) {
      throw new DatasetIOException(dir.toString(), "cannot create: " + AtomicOutput.reason(e), e);
    }
    if (format.equals("directory")) {
      writeDirectory(records, dir);
      return dir;
    }
    DatasetFormat f = Formats.named(format);
    if (!f.canWrite()) {
      throw new IllegalArgumentException("bench cannot generate " + format + " data; it generates " + FORMATS);
    }
    Path target = f.writesOneFile() ? dir.resolve("part-0." + format) : dir;
    f.write(records, target, WriteOptions.defaults().withNumShards(SHARDS).withRowGroupBytes(ROW_GROUP_BYTES));
    return target;
  }

  private static void writeDirectory(RandomAccessDataset<Example> records, Path dir) {
    int digits = Math.max(6, Long.toString(records.size()).length());
    String name = "%0" + digits + "d.bin";
    for (long i = 0; i < records.size(); i++) {
      Tensor x = records.get(i).tensor("x");
      byte[] bytes = new byte[(int) x.byteSize()];
      x.data().duplicate().order(ByteOrder.LITTLE_ENDIAN).get(bytes);
      Path file = dir.resolve(String.format(Locale.ROOT, name, i));
      try {
        Files.write(file, bytes);
      } catch (IOException e) {
        throw new DatasetIOException(file.toString(), "cannot write: " + AtomicOutput.reason(e), e);
      }
    }
  }

  /**
   * Whether every record of {@code data} has the same length: from the schema (every field
   * fixed-length), and for a directory of raw files from their sizes. Null when neither tells.
   */
  static Boolean fixedLength(Dataset<?> data) {
    if (data instanceof DirectoryDataset d && d.content() != SampleFiles.NPY) {
      long first = -1;
      for (Path p : d.files()) {
        long size;
        try {
          size = Files.size(p);
        } catch (IOException e) {
          throw new DatasetIOException(p.toString(), "cannot read its size: " + e.getMessage(), e);
        }
        if (first >= 0 && size != first) {
          return false;
        }
        first = size;
      }
      return true;
    }
    if (data instanceof HasSchema h) {
      return h.schema().fields().stream().allMatch(TensorSpec::isFixedLength);
    }
    return null;
  }

  /**
   * Variable-length records: {@code x} float32[-1] of {@code 1 + r % (2 dim - 1)} values for a
   * seeded draw {@code r} per row (values in [0, 1) from (seed, row, column)), {@code label} int64.
   */
  static final class VariableRecords implements RandomAccessDataset<Example>, HasSchema {
    private static final Schema SCHEMA = Schema.of(
        new TensorSpec("x", DType.FLOAT32, Shape.of(-1)),
        new TensorSpec("label", DType.INT64, Shape.scalar()));
    private final long rows;
    private final int dim;
    private final long seed;

    VariableRecords(long rows, int dim, long seed) {
      OptionChecks.nonNegative("--num-samples", rows);
      OptionChecks.positive("--dim", dim);
      this.rows = rows;
      this.dim = dim;
      this.seed = seed;
    }

    @Override
    public Schema schema() {
      return SCHEMA;
    }

    @Override
    public long size() {
      return rows;
    }

    @Override
    public Example get(long index) {
      RandomAccessDataset.checkIndex(index, rows, this);
      SplittableRandom random = new SplittableRandom(seed * 0x9E3779B97F4A7C15L + index);
      int n = 1 + random.nextInt(2 * dim - 1);
      ByteBuffer x = ByteBuffer.allocate(n * 4).order(ByteOrder.LITTLE_ENDIAN);
      for (int j = 0; j < n; j++) {
        x.putFloat(j * 4, (float) random.nextDouble());
      }
      return Example.builder(index)
          .put("x", Tensor.wrap(DType.FLOAT32, Shape.of(n), x))
          .put("label", Tensor.scalar(index))
          .build();
    }

    @Override
    public String toString() {
      return "variable-length records(rows=" + rows + ", mean length=" + dim + ", seed=" + seed + ")";
    }
  }
}
