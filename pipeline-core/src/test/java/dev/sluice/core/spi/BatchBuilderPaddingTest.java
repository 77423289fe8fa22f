package dev.sluice.core.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.core.Batch;
import dev.sluice.core.Column;
import dev.sluice.core.DType;
import dev.sluice.core.MemoryManager;
import dev.sluice.core.Schema;
import dev.sluice.core.Shape;
import dev.sluice.core.Tensor;
import dev.sluice.core.TensorSpec;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** {@link ColumnBuilder#pad} and {@link ColumnBuilder#setPadded}: padded columns of a {@link BatchBuilder}. */
class BatchBuilderPaddingTest {
  private final MemoryManager memory = new MemoryManager();
  private final BufferPool pool = memory.pool("test.padding");

  @AfterEach
  void nothingLeaks() {
    memory.checkNoOutstanding();
  }

  /** A float32 matrix of {@code rows × cols} with values from {@code random}. */
  private static Tensor matrix(Random random, int rows, int cols) {
    ByteBuffer b = ByteBuffer.allocate(4 * rows * cols).order(ByteOrder.LITTLE_ENDIAN);
    for (int i = 0; i < rows * cols; i++) {
      b.putFloat(random.nextFloat());
    }
    return Tensor.wrap(DType.FLOAT32, Shape.of(rows, cols), b.flip());
  }

  @Test
  void shorterValuesKeepTheirPositionsAndThePadValueFillsTheRest() {
    Random random = new Random(7);
    int n = 6;
    Tensor[] values = new Tensor[n];
    for (int i = 0; i < n; i++) {
      values[i] = matrix(random, 1 + random.nextInt(3), random.nextInt(5));
    }
    float pad = -2.5f;
    Schema schema = Schema.of(new TensorSpec("x", DType.FLOAT32, Shape.of(3, 4)));
    try (BatchBuilder b = BatchBuilder.create(schema, n, pool)) {
      b.column(0).pad(pad);
      for (int i = 0; i < n; i++) {
        b.column(0).setPadded(i, values[i]);
      }
      b.commitRange(100, n);
      try (Batch batch = b.build()) {
        Column c = batch.column("x");
        assertThat(c.hasLengths()).isTrue();
        for (int i = 0; i < n; i++) {
          assertThat(c.trueShape(i)).isEqualTo(values[i].shape());
          Tensor row = c.values().slice(i);
          long rows = values[i].shape().dim(0);
          long cols = values[i].shape().dim(1);
          for (int r = 0; r < 3; r++) {
            for (int k = 0; k < 4; k++) {
              float expected = r < rows && k < cols ? values[i].getFloat(r * cols + k) : pad;
              assertThat(row.getFloat(r * 4L + k)).as("row %d at (%d, %d)", i, r, k).isEqualTo(expected);
            }
          }
        }
        assertThat(batch.index(n - 1)).isEqualTo(100 + n - 1);
      }
    }
  }

  @Test
  void aRaggedValuePadsEachItemAndRecordsItsLongestItem() {
    Tensor ragged = Tensor.listOf(Tensor.of(1, 2), Tensor.of(3), Tensor.of(4, 5, 6));
    Schema schema = Schema.of(new TensorSpec("t", DType.INT32, Shape.of(4, 3)), new TensorSpec("s", DType.INT64,
        Shape.scalar()));
    try (BatchBuilder b = BatchBuilder.create(schema, 1, pool)) {
      b.column(0).pad(null);
      b.column(0).setPadded(0, ragged);
      b.column(1).pad(9);
      b.column(1).setPadded(0, Tensor.scalar(42L));
      b.commitRange(0, 1);
      try (Batch batch = b.build()) {
        Column c = batch.column("t");
        assertThat(c.trueShape(0)).isEqualTo(Shape.of(3, 3));
        assertThat(ColumnBuilder.paddedDims(ragged)).containsExactly(3, 3);
        for (int r = 0; r < 4; r++) {
          Tensor item = r < 3 ? ragged.slice(r) : null;
          for (int k = 0; k < 3; k++) {
            int expected = item != null && k < item.shape().dim(0) ? item.getInt(k) : 0;
            assertThat(c.values().getInt(r * 3L + k)).isEqualTo(expected);
          }
        }
        assertThat(batch.column("s").hasLengths()).as("a scalar field keeps no lengths").isFalse();
        assertThat(batch.column("s").values().getLong(0)).isEqualTo(42L);
      }
    }
  }

  @Test
  void negativeZeroIsAPadValueOfItsOwn() {
    Schema schema = Schema.of(new TensorSpec("x", DType.FLOAT64, Shape.of(2)));
    try (BatchBuilder b = BatchBuilder.create(schema, 1, pool)) {
      b.column(0).pad(-0.0);
      b.column(0).setPadded(0, Tensor.of(new double[] {1.0}));
      b.commitRange(0, 1);
      try (Batch batch = b.build()) {
        double padded = batch.column("x").values().data().getDouble(8);
        assertThat(Double.doubleToRawLongBits(padded)).isEqualTo(Double.doubleToRawLongBits(-0.0));
      }
    }
  }

  @Test
  void aValueThatDoesNotFitFailsAndClosingTheBuilderReleasesEverything() {
    Schema schema = Schema.of(new TensorSpec("x", DType.FLOAT32, Shape.of(2, 2)),
        new TensorSpec("y", DType.INT32, Shape.of(3)));
    BatchBuilder b = BatchBuilder.create(schema, 4, pool);
    try (b) {
      b.column(0).pad(1f);
      b.column(1).pad(0);
      b.column(0).setPadded(0, matrix(new Random(1), 2, 2));
      assertThat(memory.outstandingBytes()).isPositive();
      assertThatThrownBy(() -> b.column(0).setPadded(1, matrix(new Random(2), 3, 1)))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("field 'x'").hasMessageContaining("[3, 1]").hasMessageContaining("[2, 2]");
      assertThatThrownBy(() -> b.column(1).setPadded(0, Tensor.of(1f, 2f)))
          .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("float32[2]");
      assertThatThrownBy(() -> b.column(1).setPadded(0, Tensor.listOf(DType.INT32,
          Arrays.asList(Tensor.wrap(DType.INT32, Shape.scalar(), Tensor.of(1).data()), null))))
          .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("null elements");
    }
    // the failed appends left pooled buffers with the builder; closing it returned them (@AfterEach)
  }

  @Test
  void onlyFixedLengthFieldsPadAndOnlyPaddedOnesTakePaddedRows() {
    Schema schema = Schema.of(new TensorSpec("s", DType.STRING, Shape.scalar()),
        new TensorSpec("x", DType.INT32, Shape.of(2)), new TensorSpec("c", DType.COMPLEX64, Shape.of(1)));
    try (BatchBuilder b = BatchBuilder.create(schema, 2, pool)) {
      assertThatThrownBy(() -> b.column(0).pad(0)).isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("variable-length");
      assertThatThrownBy(() -> b.column(1).setPadded(0, Tensor.of(1))).isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("not padded");
      assertThatThrownBy(() -> b.column(2).pad(1)).isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("field 'c'");
    }
  }
}
