package dev.sluice.io.arrow;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.core.Batch;
import dev.sluice.core.DType;
import dev.sluice.core.Datasets;
import dev.sluice.core.Example;
import dev.sluice.core.MemoryManager;
import dev.sluice.core.Schema;
import dev.sluice.core.Shape;
import dev.sluice.core.Tensor;
import dev.sluice.core.TensorSpec;
import dev.sluice.core.spi.BatchBuilder;
import dev.sluice.core.testing.NoLeaks;
import dev.sluice.io.Checksums;
import dev.sluice.io.Formats;
import dev.sluice.io.WriteOptions;
import dev.sluice.io.npy.Npy;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.memory.util.MemoryUtil;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.apache.arrow.vector.complex.LargeListVector;
import org.apache.arrow.vector.compression.CompressionUtil.CodecType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import reactor.core.publisher.Flux;

/** Writing with the Arrow sink and the bridge: round trips keep every value and the checksum. */
@ExtendWith(NoLeaks.class)
class ArrowWriteTest {
  @TempDir
  Path dir;

  @ParameterizedTest
  @EnumSource(ArrowCompression.class)
  void richFileRoundTripsThroughTheSink(ArrowCompression compression) throws Exception {
    Path in = dir.resolve("rich.arrow");
    ArrowTestFiles.writeRich(in, IpcFormat.FILE, CodecType.NO_COMPRESSION, new int[] {9, 0, 31}, 5);
    List<Map<String, Object>> expected = ArrowTestFiles.arrowRows(in, IpcFormat.FILE);
    for (IpcFormat format : IpcFormat.values()) {
      Path out = dir.resolve("out-" + format + ".arrow");
      try (ArrowDataset src = Arrow.open(in)) {
        long rows = Arrow.write(src, out, ArrowWriteOptions.builder().format(format).compression(compression)
            .batchRows(16).build());
        assertThat(rows).isEqualTo(expected.size());
        // Arrow Java reads what Sluice wrote as it read the original
        assertThat(ArrowTestFiles.arrowRows(out, format)).isEqualTo(expected);
        try (ArrowDataset back = Arrow.open(out)) {
          assertThat(back.format()).isEqualTo(format);
          assertThat(back.schema()).isEqualTo(src.schema());
          assertThat(back.recordBatches()).isEqualTo(3);
          assertThat(Checksums.sha256(back)).isEqualTo(Checksums.sha256(src));
        }
      }
    }
  }

  @Test
  void npyToArrowToNpyKeepsTheChecksum() throws Exception {
    Path npy = dir.resolve("npy");
    Npy.write(Datasets.synthetic(1000, 16, 3), npy);
    String before = Checksums.sha256(Formats.open(npy));
    Path arrow = dir.resolve("x.arrow");
    try (var ds = Npy.open(npy)) {
      Arrow.write(ds, arrow, ArrowWriteOptions.builder().batchRows(300).compression(ArrowCompression.ZSTD).build());
    }
    assertThat(Formats.detect(arrow).name()).isEqualTo("arrow");
    Path back = dir.resolve("back");
    try (ArrowDataset a = Arrow.open(arrow)) {
      assertThat(a.schema().field("x")).isEqualTo(new TensorSpec("x", DType.FLOAT32, Shape.of(16)));
      assertThat(Checksums.sha256(a)).isEqualTo(before);
      Formats.named("npy").write(a, back, WriteOptions.defaults());
    }
    assertThat(Checksums.sha256(Formats.open(back))).isEqualTo(before);
  }

  @Test
  void batchesBecomeRecordBatchesAndEveryBatchIsClosed() throws Exception {
    Schema schema = Schema.of(new TensorSpec("v", DType.INT32, Shape.of(2)), new TensorSpec("s", DType.STRING, Shape.of(-1)));
    List<Batch> batches = new ArrayList<>();
    for (int k = 0; k < 3; k++) {
      try (BatchBuilder b = BatchBuilder.create(schema, 4, MemoryManager.shared().pool("test"))) {
        for (int r = 0; r < 4; r++) {
          b.append(Example.of(k * 4L + r, Map.of("v", Tensor.of(r, k), "s", Tensor.ofStrings("a" + r, "b"))));
        }
        batches.add(b.build());
      }
    }
    Path out = dir.resolve("b.arrows");
    assertThat(Arrow.write(schema, Flux.fromIterable(batches), out,
        ArrowWriteOptions.builder().format(IpcFormat.STREAM).compression(ArrowCompression.LZ4_FRAME).build())).isEqualTo(12);
    assertThat(batches).allMatch(Batch::isReleased);
    try (ArrowDataset ds = Arrow.open(out)) {
      assertThat(ds.format()).isEqualTo(IpcFormat.STREAM);
      assertThat(ds.recordBatches()).isEqualTo(3);
      assertThat(ds.get(9).tensor("v").toByteArray()).isEqualTo(Tensor.of(1, 2).toByteArray());
      assertThat(ds.get(9).tensor("s").stringAt(0)).isEqualTo("a1");
    }
  }

  @Test
  void aFailedWriteLeavesNoFileAndClosesTheBatches() {
    Schema schema = Schema.of(new TensorSpec("v", DType.INT32, Shape.scalar()));
    Path out = dir.resolve("never.arrow");
    Flux<Batch> failing = Flux.error(new IllegalStateException("upstream failed"));
    assertThatThrownBy(() -> Arrow.write(schema, failing, out, ArrowWriteOptions.defaults()))
        .hasMessageContaining("upstream failed");
    assertThat(out).doesNotExist();
    assertThat(dir.toFile().list()).isEmpty();
  }

  @Test
  void bridgeSharesMemoryBothWays() {
    Schema schema = Schema.of(new TensorSpec("x", DType.FLOAT32, Shape.of(3)),
        new TensorSpec("t", DType.FLOAT32, Shape.of(-1), true, 1), new TensorSpec("b", DType.BOOL, Shape.scalar(), true));
    Batch batch;
    try (BatchBuilder b = BatchBuilder.create(schema, 3, MemoryManager.shared().pool("test"))) {
      for (int r = 0; r < 3; r++) {
        Map<String, Tensor> fields = new java.util.HashMap<>();
        fields.put("x", Tensor.of(r, r + 0.5f, -r));
        fields.put("t", r == 1 ? null : Tensor.listOf(DType.FLOAT32, java.util.Arrays.asList(
            Tensor.scalar((float) r), r == 2 ? null : Tensor.scalar(7f))));
        fields.put("b", r == 0 ? null : Tensor.copyOf(DType.BOOL, Shape.scalar(), new byte[] {(byte) (r % 2)}));
        b.append(Example.of(r, fields));
      }
      batch = b.build();
    }
    try (BufferAllocator alloc = new RootAllocator()) {
      try (VectorSchemaRoot root = ArrowBridge.toArrow(batch, alloc)) {
        long xAddress = MemoryUtil.getByteBufferAddress(batch.column("x").values().data());
        batch.close(); // the root keeps the memory
        assertThat(batch.isReleased()).isFalse();
        FixedSizeListVector x = (FixedSizeListVector) root.getVector("x");
        assertThat(x.getDataVector().getDataBuffer().memoryAddress()).isEqualTo(xAddress);
        assertThat(((Float4Vector) x.getDataVector()).get(4)).isEqualTo(1.5f);
        LargeListVector t = (LargeListVector) root.getVector("t");
        assertThat(t.isNull(1)).isTrue();
        assertThat(t.getObject(2)).isEqualTo(java.util.Arrays.asList(2f, null));
        assertThat(root.getVector("b").getObject(0)).isNull();
        assertThat(root.getVector("b").getObject(1)).isEqualTo(true);
        assertThat(ArrowBridge.toSluiceSchema(root.getSchema(), null)).isEqualTo(schema);
        try (Batch back = ArrowBridge.fromArrow(root, null, 10)) {
          assertThat(back.schema()).isEqualTo(schema);
          assertThat(back.index(2)).isEqualTo(12);
          assertThat(MemoryUtil.getByteBufferAddress(back.column("x").values().data())).isEqualTo(xAddress);
          for (int r = 0; r < 3; r++) {
            assertThat(ArrowTestFiles.sluiceRow(back.copyRow(r))).isEqualTo(expectedRow(r));
          }
          root.clear(); // the batch holds its own references
          assertThat(back.column("x").values().getFloat(4)).isEqualTo(1.5f);
        }
      }
      assertThat(batch.isReleased()).isTrue();
      assertThat(alloc.getAllocatedMemory()).isZero();
    }
  }

  private static Map<String, Object> expectedRow(int r) {
    Map<String, Object> m = new java.util.LinkedHashMap<>();
    m.put("x", List.of((double) r, r + 0.5, (double) -r));
    m.put("t", r == 1 ? null : java.util.Arrays.asList((double) r, r == 2 ? null : 7.0));
    m.put("b", r == 0 ? null : r % 2 == 1);
    return m;
  }

  @Test
  void streamFromAnInputIsReadOnce() throws Exception {
    Path f = dir.resolve("rich.arrows");
    ArrowTestFiles.writeRich(f, IpcFormat.STREAM, CodecType.ZSTD, new int[] {5, 0, 12}, 9);
    List<Map<String, Object>> expected = ArrowTestFiles.arrowRows(f, IpcFormat.STREAM);
    try (ArrowStream s = Arrow.openStream(Files.newInputStream(f), "stdin")) {
      List<Map<String, Object>> rows = new ArrayList<>();
      for (Example e : s.flux().toIterable()) {
        rows.add(ArrowTestFiles.sluiceRow(e));
      }
      assertThat(rows).isEqualTo(expected);
      assertThatThrownBy(() -> s.batches().blockLast()).isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("read once");
    }
    try (InputStream in = Files.newInputStream(f); ArrowStream s = Arrow.openStream(in, "pipe")) {
      List<Batch> batches = s.batches().collectList().block();
      assertThat(batches).extracting(Batch::size).containsExactly(5, 0, 12);
      assertThat(ArrowTestFiles.sluiceRow(batches.get(2).copyRow(3))).isEqualTo(expected.get(8));
      assertThat(batches.get(2).index(3)).isEqualTo(8);
      batches.forEach(Batch::close);
    }
  }

  @Test
  void writesToAnOutputStream() throws Exception {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    Schema schema = Schema.of(new TensorSpec("value", DType.INT64, Shape.scalar()));
    Flux<Batch> batches = Flux.range(0, 3).map(k -> {
      try (BatchBuilder b = BatchBuilder.create(schema, 5, MemoryManager.shared().pool("test"))) {
        Datasets.range(100).gather(new long[] {k * 5L, k * 5L + 1, k * 5L + 2, k * 5L + 3, k * 5L + 4}, 0, 5, b);
        return b.build();
      }
    });
    Arrow.write(schema, batches, bytes, ArrowWriteOptions.builder().format(IpcFormat.STREAM).build());
    try (ArrowStream s = Arrow.openStream(new java.io.ByteArrayInputStream(bytes.toByteArray()), "bytes")) {
      assertThat(s.flux().map(e -> e.tensor("value").getLong(0)).collectList().block())
          .containsExactlyElementsOf(Flux.range(0, 15).map(Long::valueOf).collectList().block());
    }
  }
}
