package dev.sluice.benchmarks.parquet;

import dev.sluice.core.DType;
import dev.sluice.core.Dataset;
import dev.sluice.core.Example;
import dev.sluice.core.HasSchema;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.Schema;
import dev.sluice.core.Shape;
import dev.sluice.core.Tensor;
import dev.sluice.core.TensorSpec;
import dev.sluice.io.ExistingOutput;
import dev.sluice.io.WriteOptions;
import dev.sluice.io.parquet.internal.ParquetWriting;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import reactor.core.publisher.Flux;

/**
 * Generates the benchmark files (never committed) with Sluice's Parquet writer: {@code rows} rows of
 * {@code x} = {@code dim} float32 plus {@code label} int64, {@code score} a nullable float32 (null in
 * every tenth row) and {@code name} a string ({@code "item-<row>"}), snappy, no dictionary encoding,
 * with {@code x} stored either as one LIST column ({@code x.list.element}, shape declared in
 * {@code sluice.shape.x}) or as {@code dim} flat float columns {@code x0 … x<dim-1>}. Every field is
 * optional. Files are cached under {@code java.io.tmpdir} by their parameters.
 */
public final class BenchFiles {
  /** How x is stored. */
  public enum Layout { LIST, FLAT }

  private BenchFiles() {}

  /** The fields of a benchmark file. */
  public static Schema schema(Layout layout, int dim) {
    List<TensorSpec> fields = new ArrayList<>();
    if (layout == Layout.LIST) {
      fields.add(new TensorSpec("x", DType.FLOAT32, Shape.of(dim), true));
    } else {
      for (int i = 0; i < dim; i++) {
        fields.add(new TensorSpec("x" + i, DType.FLOAT32, Shape.scalar(), true));
      }
    }
    fields.add(new TensorSpec("label", DType.INT64, Shape.scalar(), true));
    fields.add(new TensorSpec("score", DType.FLOAT32, Shape.scalar(), true));
    fields.add(new TensorSpec("name", DType.STRING, Shape.scalar(), true));
    return Schema.of(fields);
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
    WriteOptions options = WriteOptions.defaults().withCodec("snappy").withRowGroupBytes(rowGroupBytes)
        .withExisting(ExistingOutput.REPLACE);
    ParquetWriting.write(new Rows(layout, rows, dim), f, options, rowGroupRows, false);
    return f;
  }

  /** The rows of a benchmark file: seeded floats, label = row, score null in every tenth row. */
  private record Rows(Layout layout, long rows, int dim) implements Dataset<Example>, HasSchema {
    @Override
    public Schema schema() {
      return BenchFiles.schema(layout, dim);
    }

    @Override
    public Flux<Example> flux(PipelineContext context) {
      return Flux.<Long, Long>generate(() -> 0L, (r, sink) -> {
        if (r < rows) {
          sink.next(r);
        } else {
          sink.complete();
        }
        return r + 1;
      }).map(this::row);
    }

    private Example row(long row) {
      // not a multiple of SplittableRandom's own increment (the golden gamma): otherwise row r + 1
      // would repeat row r shifted by one value, and snappy would compress the list column 10x
      SplittableRandom rnd = new SplittableRandom(row * 0xBF58476D1CE4E5B9L + 0x94D049BB133111EBL);
      Map<String, Tensor> fields = new LinkedHashMap<>();
      if (layout == Layout.LIST) {
        float[] x = new float[dim];
        for (int i = 0; i < dim; i++) {
          x[i] = (float) rnd.nextDouble();
        }
        fields.put("x", Tensor.of(x));
      } else {
        for (int i = 0; i < dim; i++) {
          fields.put("x" + i, Tensor.scalar((float) rnd.nextDouble()));
        }
      }
      fields.put("label", Tensor.scalar(row));
      fields.put("score", row % 10 != 0 ? Tensor.scalar(row * 0.001f) : null);
      fields.put("name", Tensor.ofString("item-" + row));
      return Example.of(row, fields);
    }
  }
}
