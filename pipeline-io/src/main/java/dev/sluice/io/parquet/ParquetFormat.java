package dev.sluice.io.parquet;

import dev.sluice.core.Dataset;
import dev.sluice.core.Example;
import dev.sluice.core.IoMode;
import dev.sluice.core.internal.OptionalLibrary;
import dev.sluice.io.DatasetFormat;
import dev.sluice.io.WriteOptions;
import dev.sluice.io.parquet.internal.ParquetWriting;
import java.io.IOException;
import java.nio.channels.SeekableByteChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;

/**
 * The Parquet entry of the format registry: recognizes a file by its {@code PAR1} magic at both
 * ends (or a directory of such files), opens it with {@link Parquet#open(Path)}, and writes
 * examples (see {@link #write}). Recognizing a file needs nothing beyond pipeline-io; opening and
 * writing one need parquet-java ({@code org.apache.parquet:parquet-hadoop}) on the class path, and
 * say so with a {@link dev.sluice.core.MissingDependencyException} when it is missing.
 */
public final class ParquetFormat implements DatasetFormat {
  /** Default target row-group size of {@link #write}: 128 MiB (parquet-java's default). */
  public static final long DEFAULT_ROW_GROUP_BYTES = ParquetWriting.DEFAULT_ROW_GROUP_BYTES;
  /** Default codec of {@link #write}: {@code snappy} (as pyarrow and Spark). */
  public static final String DEFAULT_CODEC = "snappy";

  @Override
  public String name() {
    return "parquet";
  }

  @Override
  public boolean probe(Path path) throws IOException {
    if (Files.isDirectory(path)) {
      List<Path> files;
      try (Stream<Path> s = Files.list(path)) {
        files = s.filter(Files::isRegularFile)
            .filter(p -> !p.getFileName().toString().startsWith(".") && !p.getFileName().toString().startsWith("_"))
            .toList();
      }
      if (files.isEmpty()) {
        return false;
      }
      for (Path f : files) {
        if (!isParquetFile(f)) {
          return false;
        }
      }
      return true;
    }
    return Files.isRegularFile(path) && isParquetFile(path);
  }

  private static boolean isParquetFile(Path p) throws IOException {
    long size = Files.size(p);
    if (size < 12) {
      return false;
    }
    byte[] head = new byte[4];
    try (SeekableByteChannel ch = Files.newByteChannel(p)) {
      java.nio.ByteBuffer b = java.nio.ByteBuffer.wrap(head);
      while (b.hasRemaining() && ch.read(b) >= 0) { /* fill */ }
    }
    String h = new String(head, java.nio.charset.StandardCharsets.ISO_8859_1);
    // The leading magic is enough to claim the file: a truncated or corrupt footer is then reported
    // by open() as what it is ("truncated", "corrupt footer") instead of "not a recognized dataset".
    return h.equals("PAR1") || h.equals("PARE");
  }

  @Override
  public Dataset<Example> open(Path path) {
    return Parquet.open(path);
  }

  /** Reads only these columns: the others are never decoded, whatever their type. */
  @Override
  public Dataset<Example> open(Path path, List<String> columns) {
    return Parquet.open(path, ParquetOptions.builder().columns(columns).build());
  }

  @Override
  public boolean canWrite() {
    return true;
  }

  /** One {@code .parquet} file. */
  @Override
  public boolean writesOneFile() {
    return true;
  }

  /**
   * Writes every example of {@code dataset} to the file {@code out}: under a temporary name beside
   * it, renamed to {@code out} when complete (a failure deletes it), replacing a file already there
   * or refusing it as {@link WriteOptions#existing()} says.
   * Fields with a shape become 3-level LIST columns ({@code list} / {@code element}, pyarrow's
   * layout) whose concrete shape is declared in footer key {@code sluice.shape.<name>}; scalars
   * become primitive columns. Row groups target {@link WriteOptions#rowGroupBytes()} bytes
   * (default {@link #DEFAULT_ROW_GROUP_BYTES}); the codec is {@link WriteOptions#codec()}
   * ({@code uncompressed}, {@code snappy} (default), {@code gzip}, {@code zstd}, {@code lz4_raw}).
   * {@link WriteOptions#progress()} is told every 1,024 rows handed to the writer, and the rest at the end.
   *
   * @throws dev.sluice.core.MissingDependencyException when parquet-java
   *     ({@code org.apache.parquet:parquet-hadoop}) is not on the class path
   */
  @Override
  public void write(Dataset<Example> dataset, Path out, WriteOptions options) {
    OptionalLibrary.PARQUET.require(out.toString());
    ParquetWriting.write(dataset, out, options);
  }

  @Override
  public Set<IoMode> ioModes() {
    return Set.of(IoMode.MMAP, IoMode.READ);
  }

  @Override
  public Dataset<Example> open(Path path, List<String> columns, IoMode io) {
    return Parquet.open(path, ParquetOptions.builder().columns(columns).localFiles(io == IoMode.MMAP
        ? ParquetOptions.LocalFiles.MAPPED : ParquetOptions.LocalFiles.STREAM).build());
  }
}
