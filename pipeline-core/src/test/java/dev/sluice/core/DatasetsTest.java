package dev.sluice.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.core.spi.BatchBuilder;
import dev.sluice.core.testing.NoLeaks;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import reactor.core.publisher.Flux;
import reactor.test.StepVerifier;

@ExtendWith(NoLeaks.class)
class DatasetsTest {

  @Test
  void rangeHasOneInt64FieldEqualToTheIndex() {
    RandomAccessDataset<Example> r = Datasets.range(5);
    assertThat(r.size()).isEqualTo(5);
    assertThat(((HasSchema) r).schema().field("value").dtype()).isEqualTo(DType.INT64);
    StepVerifier.create(r.flux().map(e -> e.tensor("value").getLong(0)))
        .expectNext(0L, 1L, 2L, 3L, 4L)
        .verifyComplete();
    assertThatThrownBy(() -> r.get(5)).isInstanceOf(IndexOutOfBoundsException.class).hasMessageContaining("range(5)");
    assertThatThrownBy(() -> Datasets.range(-1)).hasMessage("n >= 0 required but it was -1");
  }

  @Test
  void everyPassIsIndependent() {
    RandomAccessDataset<Example> s = Datasets.synthetic(50, 4, 9);
    List<Example> first = s.flux().collectList().block();
    List<Example> second = s.flux().collectList().block();
    assertThat(first).hasSize(50).isEqualTo(second);
    Flux<Long> flux = Datasets.range(3).flux().map(Example::index);
    StepVerifier.create(flux).expectNext(0L, 1L, 2L).verifyComplete();
    StepVerifier.create(flux).expectNext(0L, 1L, 2L).verifyComplete();
  }

  @Test
  void nothingIsReadBeforeSubscription() {
    int[] reads = {0};
    RandomAccessDataset<Example> counting = new RandomAccessDataset<>() {
      @Override
      public long size() {
        return 3;
      }

      @Override
      public Example get(long index) {
        reads[0]++;
        return Example.of(index, "v", Tensor.scalar(index));
      }
    };
    Flux<Example> flux = counting.flux();
    assertThat(reads[0]).isZero();
    StepVerifier.create(flux, 0).expectSubscription().thenRequest(1).expectNextCount(1).thenCancel().verify();
    assertThat(reads[0]).isEqualTo(1);
  }

  @Test
  void syntheticIsSeededAndLabelIsTheIndex() {
    RandomAccessDataset<Example> a = Datasets.synthetic(100, 8, 1);
    RandomAccessDataset<Example> b = Datasets.synthetic(100, 8, 2);
    Example e = a.get(37);
    assertThat(e.tensor("label").getLong(0)).isEqualTo(37);
    assertThat(e.tensor("x").shape()).isEqualTo(Shape.of(8));
    assertThat(e.tensor("x")).isEqualTo(a.get(37).tensor("x"));
    assertThat(e.tensor("x")).isNotEqualTo(b.get(37).tensor("x"));
    for (float v : e.tensor("x").toFloatArray()) {
      assertThat(v).isBetween(0f, 1f);
    }
  }

  @Test
  void gatherEqualsGetRowByRow() {
    RandomAccessDataset<Example> s = Datasets.synthetic(1000, 16, 3);
    long[] indices = {999, 5, 6, 7, 0, 500};
    Schema schema = ((HasSchema) s).schema();
    try (BatchBuilder b = BatchBuilder.create(schema, 8, MemoryManager.shared().pool("test.gather"))) {
      s.gather(indices, 1, 5, b);
      try (Batch batch = b.build()) {
        assertThat(batch.indices()).containsExactly(5, 6, 7, 0, 500);
        for (int row = 0; row < batch.size(); row++) {
          Example expected = s.get(indices[row + 1]);
          assertThat(batch.column("x").row(row)).isEqualTo(expected.tensor("x"));
          assertThat(batch.column("label").row(row)).isEqualTo(expected.tensor("label"));
        }
      }
    }
  }

  @Test
  void fromTensorsSlicesWithoutCopying() {
    ByteBuffer xs = ByteBuffer.allocateDirect(4 * 2 * 3).order(ByteOrder.LITTLE_ENDIAN);
    Tensor x = Tensor.wrap(DType.FLOAT32, Shape.of(3, 2), xs);
    RandomAccessDataset<Example> d = Datasets.fromTensors(Map.of("x", x));
    Example row2 = d.get(2);
    xs.putFloat(4 * 5, 3.25f);
    assertThat(row2.tensor("x").getFloat(1)).isEqualTo(3.25f);
    assertThat(d.size()).isEqualTo(3);

    RandomAccessDataset<Example> pair = Datasets.fromTensors(new java.util.LinkedHashMap<>(Map.of("a", Tensor.of(1L, 2L))));
    try (BatchBuilder b = BatchBuilder.create(((HasSchema) pair).schema(), 2, MemoryManager.shared().pool("test.gather"))) {
      pair.gather(new long[] {1, 0}, 0, 2, b);
      try (Batch batch = b.build()) {
        assertThat(batch.column("a").values().toLongArray()).containsExactly(2, 1);
      }
    }
  }

  @Test
  void fromTensorsRejectsMismatchedRows() {
    java.util.Map<String, Tensor> m = new java.util.LinkedHashMap<>();
    m.put("a", Tensor.of(1f, 2f, 3f));
    m.put("b", Tensor.of(1L, 2L));
    assertThatThrownBy(() -> Datasets.fromTensors(m))
        .hasMessageContaining("'b' has 2 rows but 'a' has 3");
    assertThatThrownBy(() -> Datasets.fromTensors("s", Tensor.scalar(1L))).hasMessageContaining("scalar");
  }

  @Test
  void defaultFluxHonoursBackpressure() {
    StepVerifier.create(Datasets.range(10).flux().map(Example::index), 0)
        .expectSubscription()
        .expectNoEvent(java.time.Duration.ZERO)
        .thenRequest(2)
        .expectNext(0L, 1L)
        .thenRequest(100)
        .expectNextCount(8)
        .verifyComplete();
  }

  @Test
  void schemaRejectsDuplicateAndUnknownFields() {
    TensorSpec a = new TensorSpec("a", DType.INT8, Shape.scalar());
    assertThatThrownBy(() -> Schema.of(a, a)).hasMessageContaining("duplicate field name 'a'");
    assertThatThrownBy(() -> Schema.of(a).field("b")).hasMessageContaining("no field 'b'; fields are [a]");
    assertThat(Schema.of(new TensorSpec("z", DType.INT8, Shape.scalar()), a).sortedByName().field(0).name()).isEqualTo("a");
    assertThat(Schema.of(a, new TensorSpec("v", DType.FLOAT32, Shape.of(-1))).fixedRowBytes()).isEqualTo(-1);
  }
}
