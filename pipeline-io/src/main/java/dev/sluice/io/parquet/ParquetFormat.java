package dev.sluice.io.parquet;

import dev.sluice.core.Dataset;
import dev.sluice.core.DatasetIOException;
import dev.sluice.core.Example;
import dev.sluice.core.HasSchema;
import dev.sluice.core.Schema;
import dev.sluice.core.internal.AtomicOutput;
import dev.sluice.io.DatasetFormat;
import dev.sluice.io.WriteOptions;
import dev.sluice.io.internal.Outputs;
import dev.sluice.io.parquet.internal.ExampleWriteSupport;
import dev.sluice.io.parquet.internal.PageCodecs;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.SeekableByteChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.stream.Stream;
import org.apache.parquet.conf.PlainParquetConfiguration;
import org.apache.parquet.hadoop.ParquetFileWriter;
import org.apache.parquet.hadoop.ParquetWriter;
import org.apache.parquet.hadoop.api.WriteSupport;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;
import org.apache.parquet.io.LocalOutputFile;
import org.apache.parquet.io.OutputFile;

/**
 * The Parquet entry of the format registry: recognizes a file by its {@code PAR1} magic at both
 * ends (or a directory of such files), opens it with {@link Parquet#open(Path)}, and writes
 * examples (see {@link #write}).
 */
public final class ParquetFormat implements DatasetFormat {
  /** Default target row-group size of {@link #write}: 128 MiB (parquet-java's default). */
  public static final long DEFAULT_ROW_GROUP_BYTES = 128L << 20;
  /** Default codec of {@link #write}: snappy (as pyarrow and Spark). */
  public static final CompressionCodecName DEFAULT_CODEC = CompressionCodecName.SNAPPY;

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
   */
  /** Rows between two calls of the progress listener. */
  private static final int PROGRESS_ROWS = 1024;

  @Override
  public void write(Dataset<Example> dataset, Path out, WriteOptions options) {
    CompressionCodecName codec = codec(options.codec());
    long rowGroup = options.rowGroupBytes() > 0 ? options.rowGroupBytes() : DEFAULT_ROW_GROUP_BYTES;
    Iterator<Example> it = dataset.flux().toIterable(256).iterator();
    Schema schema;
    Example first = null;
    if (dataset instanceof HasSchema hs) {
      schema = hs.schema();
    } else {
      if (!it.hasNext()) {
        throw new IllegalArgumentException("cannot write an empty dataset without a schema to " + out);
      }
      first = it.next();
      schema = schemaOf(first);
    }
    ExampleWriteSupport support = new ExampleWriteSupport(schema);
    try (AtomicOutput file = Outputs.file(out, options.existing())) {
      try (ParquetWriter<Example> w = new Builder(new LocalOutputFile(file.temp()), support)
          .withConf(new PlainParquetConfiguration())
          .withCodecFactory(new PageCodecs()) // no Hadoop codecs: local writes need no Hadoop
          .withWriteMode(ParquetFileWriter.Mode.OVERWRITE)
          .withCompressionCodec(codec)
          .withRowGroupSize(rowGroup)
          .build()) {
        long unreported = 0;
        if (first != null) {
          w.write(first);
          unreported++;
        }
        while (it.hasNext()) {
          w.write(it.next());
          if (++unreported == PROGRESS_ROWS) {
            options.progress().accept(unreported);
            unreported = 0;
          }
        }
        if (unreported > 0) {
          options.progress().accept(unreported);
        }
      }
      Outputs.commit(file, options.existing(), out.toString());
    } catch (IOException e) {
      throw new DatasetIOException(out.toString(), "cannot write: " + Outputs.reason(e), e);
    } catch (UncheckedIOException e) {
      throw new DatasetIOException(out.toString(), "cannot write: " + Outputs.reason(e.getCause()), e.getCause());
    }
  }

  private static Schema schemaOf(Example e) {
    List<dev.sluice.core.TensorSpec> specs = new ArrayList<>();
    e.fields().forEach((name, t) -> {
      if (t == null) {
        throw new IllegalArgumentException("example " + e.index() + ": field '" + name
            + "' is null; give the dataset a schema (HasSchema) to write nullable fields");
      }
      specs.add(dev.sluice.core.TensorSpec.of(name, t, false));
    });
    return Schema.of(specs);
  }

  /** Parses a codec name ({@code snappy}, {@code zstd}, …); null means the default. */
  static CompressionCodecName codec(String name) {
    if (name == null || name.isBlank()) {
      return DEFAULT_CODEC;
    }
    String n = name.trim().toUpperCase(Locale.ROOT);
    if (n.equals("NONE")) {
      n = "UNCOMPRESSED";
    }
    try {
      CompressionCodecName c = CompressionCodecName.valueOf(n);
      if (PageCodecs.WRITE_CODECS.contains(c)) {
        return c;
      }
    } catch (IllegalArgumentException e) {
      // fall through
    }
    throw new IllegalArgumentException("codec must be one of [uncompressed, snappy, gzip, zstd, lz4_raw] but it was '"
        + name + "'");
  }

  private static final class Builder extends ParquetWriter.Builder<Example, Builder> {
    private final ExampleWriteSupport support;

    Builder(OutputFile file, ExampleWriteSupport support) {
      super(file);
      this.support = support;
    }

    @Override
    protected Builder self() {
      return this;
    }

    @Override
    protected WriteSupport<Example> getWriteSupport(org.apache.hadoop.conf.Configuration conf) {
      return support;
    }

    @Override
    protected WriteSupport<Example> getWriteSupport(org.apache.parquet.conf.ParquetConfiguration conf) {
      return support;
    }
  }
}
