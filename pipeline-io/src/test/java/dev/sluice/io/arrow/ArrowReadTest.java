package dev.sluice.io.arrow;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.core.Batch;
import dev.sluice.core.DType;
import dev.sluice.core.Example;
import dev.sluice.core.MemoryManager;
import dev.sluice.core.Schema;
import dev.sluice.core.Shape;
import dev.sluice.core.Split;
import dev.sluice.core.TensorSpec;
import dev.sluice.core.spi.BatchBuilder;
import dev.sluice.core.testing.NoLeaks;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.apache.arrow.vector.compression.CompressionUtil.CodecType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Files written by Arrow Java's own writers read back value by value, by every read path. */
@ExtendWith(NoLeaks.class)
class ArrowReadTest {
  @TempDir
  Path dir;

  static Stream<Arguments> layouts() {
    return Stream.of(
        Arguments.of(IpcFormat.FILE, CodecType.NO_COMPRESSION, new int[] {7, 0, 64, 5}),
        Arguments.of(IpcFormat.STREAM, CodecType.NO_COMPRESSION, new int[] {1, 40}),
        Arguments.of(IpcFormat.FILE, CodecType.LZ4_FRAME, new int[] {33, 0, 20}),
        Arguments.of(IpcFormat.STREAM, CodecType.ZSTD, new int[] {0, 50, 9}),
        Arguments.of(IpcFormat.FILE, CodecType.ZSTD, new int[] {200}));
  }

  @ParameterizedTest
  @MethodSource("layouts")
  void everyRowEqualsArrowJavasReading(IpcFormat format, CodecType codec, int[] batches) throws Exception {
    Path f = dir.resolve("rich." + (format == IpcFormat.FILE ? "arrow" : "arrows"));
    ArrowTestFiles.writeRich(f, format, codec, batches, 42);
    List<Map<String, Object>> expected = ArrowTestFiles.arrowRows(f, format);
    try (ArrowDataset ds = Arrow.open(f)) {
      assertThat(ds.format()).isEqualTo(format);
      assertThat(ds.recordBatches()).isEqualTo(batches.length);
      assertThat(ds.size()).isEqualTo(expected.size());
      // random access
      for (int i = 0; i < expected.size(); i++) {
        assertThat(ArrowTestFiles.sluiceRow(ds.get(i))).as("row %d", i).isEqualTo(expected.get(i));
      }
      // the columnar path: every record batch in batches of 6 rows
      List<Map<String, Object>> fromBatches = new ArrayList<>();
      for (Split s : ds.splits()) {
        for (Batch b : ds.readBatches(s, 0, Long.MAX_VALUE, 6).collectList().block()) {
          try (b) {
            for (int r = 0; r < b.size(); r++) {
              assertThat(b.index(r)).isEqualTo(fromBatches.size());
              fromBatches.add(ArrowTestFiles.sluiceRow(b.copyRow(r)));
            }
          }
        }
      }
      assertThat(fromBatches).isEqualTo(expected);
      // the index path: a scattered gather across record batches
      int n = expected.size();
      long[] indices = new long[n];
      for (int i = 0; i < n; i++) {
        indices[i] = (i * 37L + 11) % n;
      }
      if (n > 0) {
        try (BatchBuilder bb = BatchBuilder.create(ds.schema(), n, MemoryManager.shared().pool("test"))) {
          ds.gather(indices, 0, n, bb);
          try (Batch b = bb.build()) {
            for (int i = 0; i < n; i++) {
              assertThat(ArrowTestFiles.sluiceRow(b.copyRow(i))).as("gathered row %d", indices[i])
                  .isEqualTo(expected.get((int) indices[i]));
            }
          }
        }
      }
      // whole record batches
      List<Batch> whole = ds.batches().collectList().block();
      assertThat(whole).hasSize(batches.length);
      for (int k = 0; k < batches.length; k++) {
        assertThat(whole.get(k).size()).isEqualTo(batches[k]);
        whole.get(k).close();
      }
    }
  }

  @Test
  void tinyMappingChunksReadTheSameRows() throws Exception {
    Path f = dir.resolve("chunks.arrow");
    Arrow.write(dev.sluice.core.Datasets.synthetic(3000, 5, 2), f, ArrowWriteOptions.builder().batchRows(256).build());
    try (ArrowDataset whole = Arrow.open(f);
        ArrowDataset chunked = Arrow.open(f, ArrowOptions.builder().maxChunkBytes(3000).build())) {
      long[] indices = new long[500];
      for (int i = 0; i < indices.length; i++) {
        indices[i] = (i * 7919L) % 3000;
      }
      try (BatchBuilder a = BatchBuilder.create(whole.schema(), 500, MemoryManager.shared().pool("test"));
          BatchBuilder b = BatchBuilder.create(whole.schema(), 500, MemoryManager.shared().pool("test"))) {
        whole.gather(indices, 0, 500, a);
        chunked.gather(indices, 0, 500, b);
        try (Batch x = a.build(); Batch y = b.build()) {
          for (int i = 0; i < 500; i++) {
            assertThat(x.copyRow(i)).isEqualTo(y.copyRow(i)).isEqualTo(whole.get(indices[i]));
            assertThat(x.copyRow(i).tensor("label").getLong(0)).isEqualTo(indices[i]);
          }
        }
      }
    }
  }

  @Test
  void typesMapToSluiceFields() throws Exception {
    Path f = dir.resolve("rich.arrow");
    ArrowTestFiles.writeRich(f, IpcFormat.FILE, CodecType.NO_COMPRESSION, new int[] {3}, 1);
    try (ArrowDataset ds = Arrow.open(f)) {
      Schema s = ds.schema();
      assertThat(s.field("b")).isEqualTo(new TensorSpec("b", DType.BOOL, Shape.scalar(), true));
      assertThat(s.field("i64")).isEqualTo(new TensorSpec("i64", DType.INT64, Shape.scalar(), false));
      assertThat(s.field("u64").dtype()).isEqualTo(DType.UINT64);
      assertThat(s.field("f16").dtype()).isEqualTo(DType.FLOAT16);
      assertThat(s.field("s").dtype()).isEqualTo(DType.STRING);
      assertThat(s.field("lbin").dtype()).isEqualTo(DType.BYTES);
      assertThat(s.field("fsb").dtype()).isEqualTo(DType.BYTES);
      assertThat(s.field("date32").dtype()).isEqualTo(DType.INT32);
      assertThat(s.field("date64").dtype()).isEqualTo(DType.INT64);
      assertThat(s.field("ts").dtype()).isEqualTo(DType.INT64);
      assertThat(s.field("dec256").dtype()).isEqualTo(DType.FLOAT64);
      assertThat(s.field("list_i32")).isEqualTo(new TensorSpec("list_i32", DType.INT32, Shape.of(-1), true, 1));
      assertThat(s.field("fsl_f32")).isEqualTo(new TensorSpec("fsl_f32", DType.FLOAT32, Shape.of(3), true));
      assertThat(s.field("fsl_fsl")).isEqualTo(new TensorSpec("fsl_fsl", DType.INT8, Shape.of(2, 2), false));
      assertThat(s.field("list_fsl")).isEqualTo(new TensorSpec("list_fsl", DType.FLOAT32, Shape.of(-1, 2), true, 1));
      assertThat(s.field("list_list").shape()).isEqualTo(Shape.of(-1, -1));
      assertThat(s.field("fsl_str")).isEqualTo(new TensorSpec("fsl_str", DType.STRING, Shape.of(-1), true, 1));
      assertThat(s.field("st.a")).isEqualTo(new TensorSpec("st.a", DType.INT32, Shape.scalar(), true));
      assertThat(s.field("m.key")).isEqualTo(new TensorSpec("m.key", DType.STRING, Shape.of(-1), true, 0));
      assertThat(s.field("m.value")).isEqualTo(new TensorSpec("m.value", DType.INT64, Shape.of(-1), true, 1));
      assertThat(s.field("list_struct.q")).isEqualTo(new TensorSpec("list_struct.q", DType.FLOAT64, Shape.of(-1), true, 1));
      assertThat(s.field("dict_s")).isEqualTo(new TensorSpec("dict_s", DType.STRING, Shape.scalar(), true));
      assertThat(s.field("dict_i").dtype()).isEqualTo(DType.INT64);
    }
  }

  @Test
  void projectionReadsTheNamedFieldsInOrder() throws Exception {
    Path f = dir.resolve("rich.arrow");
    ArrowTestFiles.writeRich(f, IpcFormat.FILE, CodecType.ZSTD, new int[] {10, 4}, 3);
    List<Map<String, Object>> expected = ArrowTestFiles.arrowRows(f, IpcFormat.FILE);
    try (ArrowDataset ds = Arrow.open(f, ArrowOptions.builder().columns("st", "i32", "m").build())) {
      assertThat(ds.schema().fields().stream().map(TensorSpec::name))
          .containsExactly("st.a", "st.b", "i32", "m.key", "m.value");
      Example e = ds.get(12);
      Map<String, Object> row = expected.get(12);
      Map<String, Object> want = new java.util.LinkedHashMap<>();
      for (String n : List.of("st.a", "st.b", "i32", "m.key", "m.value")) {
        want.put(n, row.get(n));
      }
      assertThat(ArrowTestFiles.sluiceRow(e)).isEqualTo(want);
    }
  }
}
