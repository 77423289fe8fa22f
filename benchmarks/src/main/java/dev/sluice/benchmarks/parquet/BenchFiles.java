package dev.sluice.benchmarks.parquet;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.apache.parquet.conf.PlainParquetConfiguration;
import org.apache.parquet.hadoop.ParquetFileWriter;
import org.apache.parquet.hadoop.ParquetWriter;
import org.apache.parquet.hadoop.api.WriteSupport;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;
import org.apache.parquet.io.LocalOutputFile;
import org.apache.parquet.io.OutputFile;
import org.apache.parquet.io.api.RecordConsumer;
import org.apache.parquet.schema.LogicalTypeAnnotation;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName;
import org.apache.parquet.schema.Type;
import org.apache.parquet.schema.Types;

/**
 * Generates the benchmark files (never committed): {@code rows} rows of {@code x} = {@code dim}
 * float32 plus {@code label} int64, {@code score} a nullable float32 (null in every tenth row) and
 * {@code name} a string ({@code "item-<row>"}), snappy, with {@code x} stored either as one LIST
 * column in pyarrow's layout ({@code x.list.element}, shape declared in {@code sluice.shape.x}) or as
 * {@code dim} flat float columns {@code x0 … x<dim-1>}. Files are cached under
 * {@code java.io.tmpdir} by their parameters.
 */
public final class BenchFiles {
  /** How x is stored. */
  public enum Layout { LIST, FLAT }

  private BenchFiles() {}

  public static MessageType schema(Layout layout, int dim) {
    List<Type> fields = new ArrayList<>();
    if (layout == Layout.LIST) {
      fields.add(Types.optionalGroup().as(LogicalTypeAnnotation.listType())
          .repeatedGroup().optional(PrimitiveTypeName.FLOAT).named("element").named("list").named("x"));
    } else {
      for (int i = 0; i < dim; i++) {
        fields.add(Types.optional(PrimitiveTypeName.FLOAT).named("x" + i));
      }
    }
    fields.add(Types.optional(PrimitiveTypeName.INT64).named("label"));
    fields.add(Types.optional(PrimitiveTypeName.FLOAT).named("score"));
    fields.add(Types.optional(PrimitiveTypeName.BINARY).as(LogicalTypeAnnotation.stringType()).named("name"));
    return new MessageType("bench", fields);
  }

  /** The cached file for these parameters, generated on first use. */
  public static Path file(Layout layout, long rows, int dim, long rowGroupBytes) throws IOException {
    return file(layout, rows, dim, rowGroupBytes, Integer.MAX_VALUE);
  }

  /** As {@link #file(Layout, long, int, long)}, with at most {@code rowGroupRows} rows per row group. */
  public static Path file(Layout layout, long rows, int dim, long rowGroupBytes, int rowGroupRows) throws IOException {
    Path dir = Path.of(System.getProperty("java.io.tmpdir"), "sluice-bench");
    Files.createDirectories(dir);
    Path f = dir.resolve(layout.name().toLowerCase() + "-" + rows + "x" + dim + "-rg" + rowGroupBytes
        + (rowGroupRows == Integer.MAX_VALUE ? "" : "-" + rowGroupRows) + "-label-score-name.parquet");
    if (Files.exists(f)) {
      return f;
    }
    Path tmp = Files.createTempFile(dir, "gen", ".tmp");
    write(new LocalOutputFile(tmp), layout, rows, dim, rowGroupBytes, rowGroupRows);
    Files.move(tmp, f, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    return f;
  }

  static void write(OutputFile out, Layout layout, long rows, int dim, long rowGroupBytes, int rowGroupRows)
      throws IOException {
    MessageType schema = schema(layout, dim);
    try (ParquetWriter<Long> w = new Builder(out, new RowsWriteSupport(schema, layout, dim))
        .withConf(new PlainParquetConfiguration())
        .withWriteMode(ParquetFileWriter.Mode.OVERWRITE)
        .withCompressionCodec(CompressionCodecName.SNAPPY)
        .withRowGroupSize(rowGroupBytes)
        .withRowGroupRowCountLimit(rowGroupRows)
        .withDictionaryEncoding(false)
        .build()) {
      for (long r = 0; r < rows; r++) {
        w.write(r);
      }
    }
  }

  /** Writes row {@code r}: seeded floats and label = r. */
  private static final class RowsWriteSupport extends WriteSupport<Long> {
    private final MessageType schema;
    private final Layout layout;
    private final int dim;
    private RecordConsumer rc;

    RowsWriteSupport(MessageType schema, Layout layout, int dim) {
      this.schema = schema;
      this.layout = layout;
      this.dim = dim;
    }

    @Override
    public WriteContext init(org.apache.hadoop.conf.Configuration configuration) {
      return new WriteContext(schema, Map.of("sluice.shape.x", "[" + dim + "]"));
    }

    @Override
    public WriteContext init(org.apache.parquet.conf.ParquetConfiguration configuration) {
      return new WriteContext(schema, Map.of("sluice.shape.x", "[" + dim + "]"));
    }

    @Override
    public void prepareForWrite(RecordConsumer recordConsumer) {
      rc = recordConsumer;
    }

    @Override
    public void write(Long row) {
      // not a multiple of SplittableRandom's own increment (the golden gamma): otherwise row r + 1
      // would repeat row r shifted by one value, and snappy would compress the list column 10x
      SplittableRandom rnd = new SplittableRandom(row * 0xBF58476D1CE4E5B9L + 0x94D049BB133111EBL);
      rc.startMessage();
      if (layout == Layout.LIST) {
        rc.startField("x", 0);
        rc.startGroup();
        rc.startField("list", 0);
        for (int i = 0; i < dim; i++) {
          rc.startGroup();
          rc.startField("element", 0);
          rc.addFloat((float) rnd.nextDouble());
          rc.endField("element", 0);
          rc.endGroup();
        }
        rc.endField("list", 0);
        rc.endGroup();
        rc.endField("x", 0);
        rc.startField("label", 1);
        rc.addLong(row);
        rc.endField("label", 1);
        extras(row, 2);
      } else {
        for (int i = 0; i < dim; i++) {
          rc.startField("x" + i, i);
          rc.addFloat((float) rnd.nextDouble());
          rc.endField("x" + i, i);
        }
        rc.startField("label", dim);
        rc.addLong(row);
        rc.endField("label", dim);
        extras(row, dim + 1);
      }
      rc.endMessage();
    }

    /** {@code score} (null in every tenth row) and {@code name} at field positions {@code at, at + 1}. */
    private void extras(long row, int at) {
      if (row % 10 != 0) {
        rc.startField("score", at);
        rc.addFloat(row * 0.001f);
        rc.endField("score", at);
      }
      rc.startField("name", at + 1);
      rc.addBinary(org.apache.parquet.io.api.Binary.fromString("item-" + row));
      rc.endField("name", at + 1);
    }
  }

  private static final class Builder extends ParquetWriter.Builder<Long, Builder> {
    private final RowsWriteSupport support;

    Builder(OutputFile file, RowsWriteSupport support) {
      super(file);
      this.support = support;
    }

    @Override
    protected Builder self() {
      return this;
    }

    @Override
    protected WriteSupport<Long> getWriteSupport(org.apache.hadoop.conf.Configuration conf) {
      return support;
    }

    @Override
    protected WriteSupport<Long> getWriteSupport(org.apache.parquet.conf.ParquetConfiguration conf) {
      return support;
    }
  }
}
