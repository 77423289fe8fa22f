package dev.sluice.core.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.core.Column;
import dev.sluice.core.DType;
import dev.sluice.core.MemoryManager;
import dev.sluice.core.Shape;
import dev.sluice.core.Tensor;
import dev.sluice.core.TensorSpec;
import java.nio.ByteBuffer;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** {@link ColumnBuffers}: a column's buffers, each allocated by its first request, written whole and wrapped. */
class ColumnBuffersTest {
  private final MemoryManager memory = new MemoryManager();
  private final BufferPool pool = memory.pool("test.buffers");

  @AfterEach
  void nothingLeaks() {
    memory.checkNoOutstanding();
  }

  @Test
  void buffersAreAllocatedWhenFirstAskedForAndGivenBackOnClose() {
    TensorSpec strings = new TensorSpec("s", DType.STRING, Shape.scalar(), true);
    try (ColumnBuffers c = ColumnBuffers.create(strings, 1000, pool)) {
      assertThat(pool.outstandingBytes()).as("nothing before the first request").isZero();
      c.validityBuffer(0, 1000);
      assertThat(pool.outstandingBytes()).as("the row flags").isEqualTo(1000);
      c.offsetsBuffer(0, 1000);
      assertThat(pool.outstandingBytes()).isEqualTo(1000 + 8 * 1001);
      c.valuesBuffer(10);
      assertThat(pool.outstandingBytes()).isEqualTo(1000 + 8 * 1001 + 10);
    }
  }

  @Test
  void writtenBuffersMakeAColumn() {
    TensorSpec strings = new TensorSpec("s", DType.STRING, Shape.scalar(), true);
    try (ColumnBuffers c = ColumnBuffers.create(strings, 3, pool)) {
      ByteBuffer bytes = c.valuesBuffer(5).put(0, "abcde".getBytes(java.nio.charset.StandardCharsets.UTF_8));
      ByteBuffer off = c.offsetsBuffer(0, 3);
      long[] ends = {0, 2, 2, 5};
      for (int i = 0; i < ends.length; i++) {
        off.putLong(i * 8, ends[i]);
      }
      c.validityBuffer(0, 3).put(1, (byte) 0);
      ByteBuffer o = off.slice(0, 32).order(java.nio.ByteOrder.LITTLE_ENDIAN);
      Column col = Column.of(strings, 3, Tensor.wrapVariable(DType.STRING, bytes.slice(0, 5), o),
          List.of(Tensor.wrap(DType.INT64, Shape.of(4), o)), List.of(c.validity(0, 3)));
      assertThat(col.row(0).getString()).isEqualTo("ab");
      assertThat(col.isValid(1)).isFalse();
      assertThat(col.row(2).getString()).isEqualTo("cde");
    }
  }

  @Test
  void fixedLengthValuesFitTheRows() {
    TensorSpec ints = new TensorSpec("i", DType.INT32, Shape.scalar(), true);
    try (ColumnBuffers c = ColumnBuffers.create(ints, 4, pool)) {
      assertThat(c.valuesBuffer(16).capacity()).isGreaterThanOrEqualTo(16);
      assertThatThrownBy(() -> c.valuesBuffer(17)).isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("valuesBuffer needs bytes in [0, 16] but got 17");
      assertThatThrownBy(() -> c.offsetsBuffer(0, 1)).isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("0 offsets level(s)");
    }
  }

  @Test
  void closedBuffersRefuseRequests() {
    TensorSpec ints = new TensorSpec("i", DType.INT32, Shape.scalar(), true);
    ColumnBuffers c = ColumnBuffers.create(ints, 4, pool);
    c.valuesBuffer(16);
    c.close();
    c.close();
    assertThat(pool.outstandingBytes()).isZero();
    assertThatThrownBy(() -> c.validityBuffer(0, 1)).isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("already closed");
    assertThatThrownBy(() -> ColumnBuffers.create(ints, 0, pool)).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("capacity > 0 required but it was 0");
  }
}
