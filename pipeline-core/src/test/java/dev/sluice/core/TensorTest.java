package dev.sluice.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.junit.jupiter.api.Test;

class TensorTest {

  @Test
  void wrapSharesMemoryWithItsSource() {
    ByteBuffer source = ByteBuffer.allocateDirect(4 * 6).order(ByteOrder.LITTLE_ENDIAN);
    Tensor t = Tensor.wrap(DType.FLOAT32, Shape.of(2, 3), source);
    Tensor row1 = t.slice(1);
    source.putFloat(4 * 4, 42.5f); // element [1][1]
    assertThat(t.getFloat(4)).isEqualTo(42.5f);
    assertThat(row1.getFloat(1)).isEqualTo(42.5f);
    assertThat(row1.shape()).isEqualTo(Shape.of(3));
  }

  @Test
  void rangeSliceIsAViewAndKeepsTrailingDimensions() {
    ByteBuffer source = ByteBuffer.allocate(8 * 10).order(ByteOrder.LITTLE_ENDIAN);
    for (int i = 0; i < 10; i++) {
      source.putLong(i * 8, i);
    }
    Tensor t = Tensor.wrap(DType.INT64, Shape.of(5, 2), source);
    Tensor mid = t.slice(1, 3);
    assertThat(mid.shape()).isEqualTo(Shape.of(3, 2));
    assertThat(mid.toLongArray()).containsExactly(2, 3, 4, 5, 6, 7);
    source.putLong(2 * 8, 99);
    assertThat(mid.getLong(0)).isEqualTo(99);
  }

  @Test
  void sliceBoundsAreCheckedWithClearMessages() {
    Tensor t = Tensor.of(1f, 2f, 3f);
    assertThatThrownBy(() -> t.slice(3))
        .isInstanceOf(IndexOutOfBoundsException.class)
        .hasMessageContaining("rows [3, 4)")
        .hasMessageContaining("first dimension 3");
    assertThatThrownBy(() -> t.slice(-1))
        .isInstanceOf(IndexOutOfBoundsException.class)
        .hasMessageContaining("[-1, 0)");
    assertThatThrownBy(() -> t.slice(2, 2))
        .isInstanceOf(IndexOutOfBoundsException.class)
        .hasMessageContaining("rows [2, 4)");
    assertThatThrownBy(() -> Tensor.scalar(1L).slice(0))
        .isInstanceOf(IndexOutOfBoundsException.class)
        .hasMessageContaining("scalar");
    assertThatThrownBy(() -> t.getFloat(3))
        .isInstanceOf(IndexOutOfBoundsException.class)
        .hasMessageContaining("element 3 out of bounds for 3 elements");
  }

  @Test
  void wrapChecksTheByteSize() {
    assertThatThrownBy(() -> Tensor.wrap(DType.FLOAT64, Shape.of(3), ByteBuffer.allocate(16)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("needs 24 bytes but the buffer has 16");
    assertThatThrownBy(() -> Tensor.wrap(DType.FLOAT32, Shape.of(-1), ByteBuffer.allocate(4)))
        .hasMessageContaining("concrete shape");
  }

  @Test
  void typedReadsRejectTheWrongWidth() {
    assertThatThrownBy(() -> Tensor.of(1L, 2L).getFloat(0))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("int64");
  }

  @Test
  void getAsDoubleConvertsEveryRealDtype() {
    ByteBuffer b = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN);
    b.putLong(0, -1L);
    assertThat(Tensor.wrap(DType.UINT64, Shape.scalar(), b).getAsDouble(0)).isEqualTo(1.8446744073709552E19);
    assertThat(Tensor.wrap(DType.INT64, Shape.scalar(), b).getAsDouble(0)).isEqualTo(-1.0);
    assertThat(Tensor.wrap(DType.UINT8, Shape.of(8), b).getAsDouble(0)).isEqualTo(255.0);
    assertThat(Tensor.wrap(DType.INT8, Shape.of(8), b).getAsLong(0)).isEqualTo(-1L);
    ByteBuffer h = ByteBuffer.allocate(2).order(ByteOrder.LITTLE_ENDIAN);
    h.putShort(0, Float16.fromFloat(1.5f));
    assertThat(Tensor.wrap(DType.FLOAT16, Shape.scalar(), h).getAsDouble(0)).isEqualTo(1.5);
    h.putShort(0, (short) (Float.floatToIntBits(-2.25f) >>> 16));
    assertThat(Tensor.wrap(DType.BFLOAT16, Shape.scalar(), h).getAsDouble(0)).isEqualTo(-2.25);
  }

  @Test
  void float16RoundTripsEveryHalfValue() {
    for (int bits = 0; bits < 0x10000; bits++) {
      short h = (short) bits;
      float f = Float16.toFloat(h);
      if (Float.isNaN(f)) {
        assertThat(Float.isNaN(Float16.toFloat(Float16.fromFloat(f)))).isTrue();
      } else {
        assertThat(Float16.fromFloat(f)).as("bits %04x", bits).isEqualTo(h);
      }
    }
    assertThat(Float16.toFloat(Float16.fromFloat(65504f))).isEqualTo(65504f);
    assertThat(Float16.toFloat(Float16.fromFloat(1e6f))).isEqualTo(Float.POSITIVE_INFINITY);
  }

  @Test
  void variableLengthTensorsUseOffsets() {
    byte[] data = "abcdef".getBytes();
    ByteBuffer offsets = ByteBuffer.allocate(8 * 3).order(ByteOrder.LITTLE_ENDIAN);
    offsets.putLong(0, 0).putLong(8, 2).putLong(16, 6);
    Tensor t = Tensor.wrapVariable(DType.STRING, ByteBuffer.wrap(data), offsets);
    assertThat(t.shape()).isEqualTo(Shape.of(2));
    assertThat(t.stringAt(0)).isEqualTo("ab");
    assertThat(t.stringAt(1)).isEqualTo("cdef");
    assertThat(t.slice(1, 1).stringAt(0)).isEqualTo("cdef");
    assertThat(Tensor.ofString("héllo").getString()).isEqualTo("héllo");
    offsets.putLong(16, 7);
    assertThatThrownBy(() -> Tensor.wrapVariable(DType.STRING, ByteBuffer.wrap(data), offsets))
        .hasMessageContaining("data has 6 bytes");
  }

  @Test
  void dataViewsAreReadOnly() {
    Tensor t = Tensor.of(1, 2, 3);
    assertThat(t.data().isReadOnly()).isTrue();
    assertThat(t.data().order()).isEqualTo(ByteOrder.LITTLE_ENDIAN);
  }

  @Test
  void dtypeNames() {
    assertThat(DType.fromName("float32")).isEqualTo(DType.FLOAT32);
    assertThat(DType.fromName("double")).isEqualTo(DType.FLOAT64);
    assertThat(DType.fromName("complex128").byteSize()).isEqualTo(16);
    assertThat(DType.STRING.isVariableLength()).isTrue();
    assertThatThrownBy(() -> DType.fromName("object")).hasMessageContaining("unknown dtype 'object'");
  }
}
