package dev.sluice.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.core.spi.BatchBuilder;
import dev.sluice.core.spi.BufferPool;
import dev.sluice.core.spi.PooledBuffer;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.Test;

/** A tensor or column taken from a batch can never read the batch's memory once it went back. */
class BatchLifetimeTest {
  private final MemoryManager memory = new MemoryManager();
  private final BufferPool pool = memory.pool("test.lifetime");

  private static final Schema SCHEMA = Schema.of(
      new TensorSpec("x", DType.FLOAT32, Shape.of(2)),
      new TensorSpec("s", DType.STRING, Shape.scalar(), true));

  private Batch batch() {
    try (BatchBuilder b = BatchBuilder.create(SCHEMA, 3, pool)) {
      for (int i = 0; i < 3; i++) {
        Example.Builder e = Example.builder(10 + i).put("x", Tensor.of(i + 0.25f, -i));
        b.append(i == 1 ? e.putNull("s").build() : e.put("s", Tensor.ofString("row" + i)).build());
      }
      return b.build();
    }
  }

  private static void assertNamesTheBatch(Batch b, ThrowingCallable read) {
    assertThatThrownBy(read)
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining(b.name() + " is closed");
  }

  @Test
  void aTensorReadAfterCloseThrowsInsteadOfReadingReusedMemory() {
    Batch b = batch();
    Tensor v = b.column("x").values();
    assertThat(v.getFloat(0)).isEqualTo(0.25f);
    b.close();
    try (Batch reuse = batch()) { // takes the same pooled buffers back
      assertThat(reuse.isReleased()).isFalse();
      assertNamesTheBatch(b, () -> v.getFloat(0));
      assertNamesTheBatch(b, v::toFloatArray);
    }
  }

  @Test
  void everyReadOfATensorOrColumnOfAClosedBatchThrows() {
    Batch b = batch();
    Column x = b.column("x");
    Column s = b.column("s");
    Tensor v = x.values();
    Tensor row = v.slice(1);
    Tensor strings = s.values();
    b.close();
    assertThat(b.isReleased()).isTrue();
    List<ThrowingCallable> reads = List.of(
        () -> v.getFloat(1), () -> v.getAsDouble(0), v::toByteArray, v::data, () -> v.slice(0), () -> v.slice(0, 2),
        () -> v.copyTo(ByteBuffer.allocate(64).order(ByteOrder.LITTLE_ENDIAN)), v::hashCode,
        () -> v.contentEquals(Tensor.of(1f)), () -> row.getFloat(0), row::toFloatArray,
        () -> strings.stringAt(0), () -> strings.bytesAt(2), strings::offsets,
        x::values, () -> x.row(0), () -> x.isValid(0), () -> x.length(0), () -> x.trueShape(0),
        s::offsets, s::validity);
    for (ThrowingCallable read : reads) {
      assertNamesTheBatch(b, read);
    }
    // what describes the tensor still works, and printing it never throws
    assertThat(v.shape()).isEqualTo(Shape.of(3, 2));
    assertThat(v.dtype()).isEqualTo(DType.FLOAT32);
    assertThat(x.size()).isEqualTo(3);
    assertThat(x.name()).isEqualTo("x");
    assertThat(v.toString()).contains("closed " + b.name());
  }

  @Test
  void aRetainedHandleKeepsTensorsReadable() {
    Batch b = batch();
    Tensor v = b.column("x").values();
    Batch second = b.retain();
    b.close();
    assertThat(v.getFloat(4)).isEqualTo(2.25f);
    assertThat(second.column("s").values().stringAt(2)).isEqualTo("row2");
    second.close();
    assertNamesTheBatch(b, () -> v.getFloat(4));
    assertThat(memory.outstandingBytes()).isZero();
  }

  @Test
  void copiedRowsAndTensorsNotFromABatchHaveNoLifetime() {
    Batch b = batch();
    Example copy = b.copyRow(0);
    b.close();
    assertThat(copy.tensor("x").toFloatArray()).containsExactly(0.25f, 0f);
    Tensor heap = Tensor.of(1f, 2f);
    assertThat(heap.slice(1).getFloat(0)).isEqualTo(2f);
  }

  @Test
  void batchesMadeWithAnOwnerAreCheckedToo() {
    ByteBuffer data = ByteBuffer.allocateDirect(8).order(ByteOrder.LITTLE_ENDIAN).putFloat(0, 1.5f).putFloat(4, 2.5f);
    Column c = new Column(new TensorSpec("x", DType.FLOAT32, Shape.scalar()), 2,
        Tensor.wrap(DType.FLOAT32, Shape.of(2), data), null, null);
    boolean[] released = new boolean[1];
    Batch b = Batch.of(Schema.of(c.spec()), List.of(c), new long[] {0, 1}, () -> released[0] = true);
    Tensor v = b.column("x").values();
    assertThat(v.getFloat(1)).isEqualTo(2.5f);
    b.close();
    assertThat(released[0]).isTrue();
    assertNamesTheBatch(b, () -> v.getFloat(1));
    assertThat(c.values().getFloat(1)).isEqualTo(2.5f); // the caller's own column is not bound to the batch
  }

  @Test
  void nestedColumnsAndTheirRaggedTensorsAreCheckedToo() {
    TensorSpec tags = new TensorSpec("tags", DType.STRING, Shape.of(-1), true).withElementsNullable(0, true);
    TensorSpec grid = new TensorSpec("grid", DType.INT64, Shape.of(-1, -1));
    Batch b;
    try (BatchBuilder builder = BatchBuilder.create(Schema.of(tags, grid), 2, pool)) {
      builder.append(Example.builder(0).put("tags", Tensor.ofStrings("a", null))
          .put("grid", Tensor.listOf(Tensor.of(1L, 2L), Tensor.of(3L))).build());
      builder.append(Example.builder(1).put("tags", Tensor.ofStrings("bc"))
          .put("grid", Tensor.listOf(Tensor.of(4L))).build());
      b = builder.build();
    }
    Column t = b.column("tags");
    Column g = b.column("grid");
    Tensor whole = g.tensor();
    Tensor row = g.row(0);
    assertThat(whole.numElements()).isEqualTo(4);
    assertThat(row.slice(0).toLongArray()).containsExactly(1L, 2L);
    assertThat(t.row(0).stringAt(0)).isEqualTo("a");
    b.close();
    for (ThrowingCallable read : List.<ThrowingCallable>of(
        whole::numElements, () -> whole.slice(1), () -> row.slice(0), () -> row.isNull(0), () -> g.offsets(1),
        () -> g.count(1), g::tensor, () -> t.row(1), () -> t.validity(1), () -> t.values().stringAt(0))) {
      assertNamesTheBatch(b, read);
    }
    assertThat(memory.outstandingBytes()).isZero();
  }

  @Test
  void aBatchOverPooledBuffersReturnsThemAndIsChecked() {
    PooledBuffer x = pool.allocate(8);
    x.buffer().putFloat(0, 1.5f).putFloat(4, 2.5f);
    Column c = new Column(new TensorSpec("x", DType.FLOAT32, Shape.scalar()), 2,
        Tensor.wrap(DType.FLOAT32, Shape.of(2), x.buffer().slice(0, 8)), null, null);
    Batch b = Batch.ofPooled(Schema.of(c.spec()), List.of(c), new long[] {0, 1}, List.of(x));
    Tensor v = b.column("x").values();
    assertThat(v.getFloat(1)).isEqualTo(2.5f);
    assertThat(memory.outstandingBytes()).isEqualTo(8);
    b.close();
    assertThat(x.isClosed()).isTrue();
    assertThat(memory.outstandingBytes()).isZero();
    assertNamesTheBatch(b, () -> v.getFloat(1));
  }
}
