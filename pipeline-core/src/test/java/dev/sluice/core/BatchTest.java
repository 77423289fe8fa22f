package dev.sluice.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.core.spi.BatchBuilder;
import dev.sluice.core.spi.BufferPool;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class BatchTest {
  private final MemoryManager memory = new MemoryManager();
  private final BufferPool pool = memory.pool("test.batch");

  private static final Schema XY = Schema.of(
      new TensorSpec("x", DType.FLOAT32, Shape.of(3)),
      new TensorSpec("y", DType.INT64, Shape.scalar()));

  private Batch batchOf(int rows) {
    try (BatchBuilder b = BatchBuilder.create(XY, rows, pool)) {
      for (int i = 0; i < rows; i++) {
        b.append(Example.builder(100 + i).put("x", Tensor.of(i, i + 0.5f, -i)).put("y", Tensor.scalar((long) i * i)).build());
      }
      return b.build();
    }
  }

  @Test
  void columnsAreContiguousWithALeadingBatchDimension() {
    try (Batch batch = batchOf(4)) {
      assertThat(batch.size()).isEqualTo(4);
      assertThat(batch.indices()).containsExactly(100, 101, 102, 103);
      Column x = batch.column("x");
      assertThat(x.values().shape()).isEqualTo(Shape.of(4, 3));
      assertThat(x.values().getFloat(3 * 2 + 1)).isEqualTo(2.5f);
      assertThat(batch.column("y").values().toLongArray()).containsExactly(0, 1, 4, 9);
      assertThat(batch.byteSize()).isEqualTo(4 * 12 + 4 * 8);
      assertThat(x.hasValidity()).isFalse();
    }
  }

  @Test
  void closeReturnsTheMemoryAndASecondCloseIsHarmless() {
    Batch batch = batchOf(8);
    assertThat(memory.outstandingBytes()).isEqualTo(8 * 12 + 8 * 8);
    batch.close();
    assertThat(memory.outstandingBytes()).isZero();
    batch.close();
    assertThat(memory.outstandingBytes()).isZero();
    assertThat(batch.isClosed()).isTrue();
  }

  @Test
  void columnAccessAfterCloseNamesTheBatch() {
    Batch batch = batchOf(2);
    batch.close();
    assertThatThrownBy(() -> batch.column("x"))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining(batch.name())
        .hasMessageContaining("already closed");
  }

  @Test
  void retainKeepsMemoryUntilEveryHandleIsClosed() {
    Batch first = batchOf(2);
    Batch second = first.retain();
    first.close();
    first.close(); // idempotent per handle: must not release the second holder's memory
    assertThat(memory.outstandingBytes()).isPositive();
    assertThat(second.column("y").values().getLong(1)).isEqualTo(1);
    second.close();
    assertThat(memory.outstandingBytes()).isZero();
  }

  @Test
  void theManagerReportsADeliberatelyLeakedBatchByStage() {
    Batch leaked = batchOf(5);
    assertThat(memory.outstandingBytesByStage()).containsEntry("test.batch", 5L * (12 + 8));
    assertThatThrownBy(memory::checkNoOutstanding)
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("test.batch=100");
    leaked.close();
    memory.checkNoOutstanding();
  }

  @Test
  void pooledMemoryIsReused() {
    batchOf(16).close();
    long fresh = pool.allocatedBytesTotal();
    for (int i = 0; i < 10; i++) {
      batchOf(16).close();
    }
    assertThat(pool.allocatedBytesTotal()).isEqualTo(fresh);
    assertThat(pool.retainedBytes()).isPositive();
    memory.trim();
    assertThat(pool.retainedBytes()).isZero();
  }

  @Test
  void anUnbuiltBuilderReleasesOnClose() {
    BatchBuilder b = BatchBuilder.create(XY, 64, pool);
    assertThat(memory.outstandingBytes()).isPositive();
    b.close();
    assertThat(memory.outstandingBytes()).isZero();
    assertThatThrownBy(() -> b.append(Example.of(0, "x", Tensor.of(1f))))
        .isInstanceOf(IllegalStateException.class);
  }

  @Test
  void appendChecksDtypeShapeAndFields() {
    try (BatchBuilder b = BatchBuilder.create(XY, 2, pool)) {
      assertThatThrownBy(() -> b.append(Example.builder(7).put("x", Tensor.of(1f, 2f)).put("y", Tensor.scalar(1L)).build()))
          .hasMessageContaining("field 'x' of example 7 has shape [2] but the batch expects [3]");
      assertThatThrownBy(() -> b.append(Example.builder(8).put("x", Tensor.of(1.0, 2.0, 3.0)).put("y", Tensor.scalar(1L)).build()))
          .hasMessageContaining("is float64 but the batch expects float32");
      assertThatThrownBy(() -> b.append(Example.of(9, "x", Tensor.of(1f, 2f, 3f))))
          .hasMessageContaining("example 9 has no field 'y'");
    }
    assertThat(memory.outstandingBytes()).isZero();
  }

  @Test
  void variableLengthAndNullableColumnsUseOffsetsAndValidity() {
    Schema schema = Schema.of(
        new TensorSpec("tokens", DType.INT32, Shape.of(-1)),
        new TensorSpec("text", DType.STRING, Shape.scalar(), true),
        new TensorSpec("score", DType.FLOAT64, Shape.scalar(), true));
    try (BatchBuilder b = BatchBuilder.create(schema, 3, pool)) {
      b.append(Example.builder(0).put("tokens", Tensor.of(1, 2, 3)).put("text", Tensor.ofString("ab")).put("score", Tensor.scalar(0.5)).build());
      b.append(Example.builder(1).put("tokens", Tensor.of(new int[0])).putNull("text").putNull("score").build());
      b.append(Example.builder(2).put("tokens", Tensor.of(4)).put("text", Tensor.ofString("xyz")).put("score", Tensor.scalar(2.0)).build());
      try (Batch batch = b.build()) {
        Column tokens = batch.column("tokens");
        assertThat(tokens.isVariableLength()).isTrue();
        assertThat(tokens.offsets().toLongArray()).containsExactly(0, 3, 3, 4);
        assertThat(tokens.row(0).shape()).isEqualTo(Shape.of(3));
        assertThat(tokens.row(2).getInt(0)).isEqualTo(4);
        assertThat(tokens.hasValidity()).isFalse();
        Column text = batch.column("text");
        assertThat(text.offsets().toLongArray()).containsExactly(0, 2, 2, 5);
        assertThat(text.row(2).getString()).isEqualTo("xyz");
        assertThat(text.isValid(1)).isFalse();
        assertThat(text.isValid(2)).isTrue();
        Column score = batch.column("score");
        assertThat(score.isValid(1)).isFalse();
        assertThat(score.values().getDouble(1)).isZero();
        Example copy = batch.copyRow(1);
        assertThat(copy.isNull("score")).isTrue();
        assertThat(copy.index()).isEqualTo(1);
        Example copy2 = batch.copyRow(2);
        batch.close();
        assertThat(copy2.tensor("text").getString()).isEqualTo("xyz"); // copies outlive the batch
      }
    }
    assertThat(memory.outstandingBytes()).isZero();
  }

  @Test
  void variableColumnsGrowPastTheirInitialBuffer() {
    Schema schema = Schema.of(new TensorSpec("blob", DType.BYTES, Shape.scalar()));
    byte[] big = new byte[10_000];
    big[9_999] = 7;
    try (BatchBuilder b = BatchBuilder.create(schema, 4, pool)) {
      for (int i = 0; i < 4; i++) {
        b.appendVariable(0, ByteBuffer.wrap(big));
        b.commitRows(new long[] {i}, 0, 1);
      }
      try (Batch batch = b.build()) {
        assertThat(batch.column(0).row(3).bytesAt(0).get(9_999)).isEqualTo((byte) 7);
        assertThat(batch.column(0).values().byteSize()).isEqualTo(40_000);
      }
    }
    assertThat(memory.outstandingBytes()).isZero();
  }

  @Test
  void commitChecksVariableColumnsKeptPace() {
    Schema schema = Schema.of(new TensorSpec("s", DType.STRING, Shape.scalar()));
    try (BatchBuilder b = BatchBuilder.create(schema, 4, pool)) {
      b.appendVariable(0, ByteBuffer.wrap("a".getBytes(StandardCharsets.UTF_8)));
      assertThatThrownBy(() -> b.commitRows(new long[] {0, 1}, 0, 2))
          .hasMessageContaining("field 's' has 1 values appended but 2 rows are committed");
    }
  }

  @Test
  void capacityIsValidated() {
    assertThatThrownBy(() -> BatchBuilder.create(XY, 0, pool))
        .hasMessage("capacity > 0 required but it was 0");
  }

  @Test
  void aCommittedRangeKeepsItsIndicesWithoutAnArray() {
    Schema y = Schema.of(new TensorSpec("y", DType.INT64, Shape.scalar()));
    try (BatchBuilder b = BatchBuilder.create(y, 4, pool)) {
      for (int i = 0; i < 4; i++) {
        b.fixedColumn(0).putLong(i * 8, 10L * i);
      }
      b.commitRange(1_000_000_000_000L, 4);
      try (Batch batch = b.build()) {
        assertThat(batch.size()).isEqualTo(4);
        assertThat(batch.indices()).containsExactly(1_000_000_000_000L, 1_000_000_000_001L, 1_000_000_000_002L,
            1_000_000_000_003L);
        assertThat(batch.index(3)).isEqualTo(1_000_000_000_003L);
        assertThat(batch.copyRow(2).index()).isEqualTo(1_000_000_000_002L);
        assertThatThrownBy(() -> batch.index(4)).isInstanceOf(IndexOutOfBoundsException.class);
        assertThat(batch.toString()).contains("indices=[1000000000000, 1000000000001");
      }
    }
    assertThat(memory.outstandingBytes()).isZero();
  }

  @Test
  void rangesAndIndexArraysMixInOneBuilder() {
    Schema y = Schema.of(new TensorSpec("y", DType.INT64, Shape.scalar()));
    try (BatchBuilder b = BatchBuilder.create(y, 8, pool)) {
      b.commitRange(5, 2);
      b.commitRows(new long[] {-1, 40, 30}, 1, 2);
      b.commitRange(7, 2);
      b.append(Example.builder(99).put("y", Tensor.scalar(0L)).build());
      try (Batch batch = b.build()) {
        assertThat(batch.indices()).containsExactly(5, 6, 40, 30, 7, 8, 99);
      }
    }
    try (BatchBuilder b = BatchBuilder.create(y, 4, pool)) {
      b.commitRows(new long[] {3, 1, 2, 0}, 0, 4); // a whole batch of indices
      try (Batch batch = b.build()) {
        assertThat(batch.indices()).containsExactly(3, 1, 2, 0);
      }
    }
    try (BatchBuilder b = BatchBuilder.create(y, 4, pool); Batch empty = b.build()) {
      assertThat(empty.size()).isZero();
      assertThat(empty.indices()).isEmpty();
    }
    try (BatchBuilder b = BatchBuilder.create(y, 4, pool)) {
      assertThatThrownBy(() -> b.commitRange(-1, 1)).hasMessage("first index must be >= 0 but it was -1");
    }
    assertThat(memory.outstandingBytes()).isZero();
  }
}
