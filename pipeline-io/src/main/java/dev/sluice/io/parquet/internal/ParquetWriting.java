package dev.sluice.io.parquet.internal;

import dev.sluice.core.Dataset;
import dev.sluice.core.DatasetIOException;
import dev.sluice.core.Example;
import dev.sluice.core.HasSchema;
import dev.sluice.core.Schema;
import dev.sluice.core.internal.AtomicOutput;
import dev.sluice.io.WriteOptions;
import dev.sluice.io.internal.Outputs;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import org.apache.parquet.conf.PlainParquetConfiguration;
import org.apache.parquet.hadoop.ParquetFileWriter;
import org.apache.parquet.hadoop.ParquetWriter;
import org.apache.parquet.hadoop.api.WriteSupport;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;
import org.apache.parquet.io.LocalOutputFile;
import org.apache.parquet.io.OutputFile;

/**
 * Sluice's Parquet writer behind {@code ParquetFormat.write}: parquet-java's writer with
 * {@link ExampleWriteSupport} and {@link PageCodecs}, so local writes need no Hadoop. It names
 * parquet-java's types, so it is loaded only once the format checked that parquet-java is there.
 */
public final class ParquetWriting {
  /** Default target row-group size: 128 MiB (parquet-java's default). */
  public static final long DEFAULT_ROW_GROUP_BYTES = 128L << 20;
  /** Default codec: snappy (as pyarrow and Spark). */
  public static final CompressionCodecName DEFAULT_CODEC = CompressionCodecName.SNAPPY;

  /** Rows between two calls of the progress listener. */
  private static final int PROGRESS_ROWS = 1024;

  private ParquetWriting() {}

  /** {@link ParquetFormat#write}: see there. */
  public static void write(Dataset<Example> dataset, Path out, WriteOptions options) {
    write(dataset, out, options, Integer.MAX_VALUE, true);
  }

  /**
   * As {@link #write(Dataset, Path, WriteOptions)}, with at most {@code rowGroupRows} rows per row
   * group and dictionary encoding on or off (parquet-java's defaults: no row limit, on).
   *
   * @param rowGroupRows the most rows of one row group, &gt; 0
   */
  public static void write(Dataset<Example> dataset, Path out, WriteOptions options, int rowGroupRows,
      boolean dictionary) {
    if (rowGroupRows <= 0) {
      throw new IllegalArgumentException("rowGroupRows > 0 required but it was " + rowGroupRows);
    }
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
          .withRowGroupRowCountLimit(rowGroupRows)
          .withDictionaryEncoding(dictionary)
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
  public static CompressionCodecName codec(String name) {
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
