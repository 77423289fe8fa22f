package dev.sluice.core.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.core.Batch;
import dev.sluice.core.DType;
import dev.sluice.core.Example;
import dev.sluice.core.MemoryManager;
import dev.sluice.core.Schema;
import dev.sluice.core.Shape;
import dev.sluice.core.Tensor;
import dev.sluice.core.TensorSpec;
import dev.sluice.core.testing.CheckedCursor;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link BatchBuilder#appendRows(ColumnWindow, int[], int, int, List)}: a window decoded one field
 * at a time from cursors gathers what the same rows joined into one batch gather, and the window's
 * contract is enforced.
 */
class ColumnWindowTest {
  private final MemoryManager memory = new MemoryManager();
  private final BufferPool pool = memory.pool("test.window");

  /** The rows of a batch from a row on, one field at a time (the batch's indices run consecutively). */
  static final class BatchCursor extends CheckedCursor {
    private final Batch batch;

    BatchCursor(Batch batch, int position) {
      super(batch.schema(), first(batch) + position, batch.size() - position);
      this.batch = batch;
    }

    private static long first(Batch batch) {
      return batch.size() == 0 ? 0 : batch.index(0);
    }

    @Override
    protected void write(int field, ColumnBuilder into, int at, long first, int rows) {
      into.copyRange(batch.column(field), (int) (first - first(batch)), rows, at);
    }
  }

  private Batch batch(long from, int n) {
    try (BatchBuilder b = BatchBuilder.create(BatchBuilderCopyTest.SCHEMA, n, pool)) {
      for (int r = 0; r < n; r++) {
        b.append(BatchBuilderCopyTest.row(from + r));
      }
      return b.build();
    }
  }

  private static void assertSameRows(Batch expected, Batch actual) {
    assertThat(actual.size()).isEqualTo(expected.size());
    for (int r = 0; r < expected.size(); r++) {
      assertThat(actual.index(r)).isEqualTo(expected.index(r));
      assertThat(actual.copyRow(r)).isEqualTo(expected.copyRow(r));
    }
  }

  @AfterEach
  void nothingLeaks() {
    memory.checkNoOutstanding();
  }

  @Test
  void aWindowOverTwoCursorsGathersWhatTheJoinedRowsGather() {
    int n = 2600; // more than a warmed gather's threshold, every layout and nulls at every depth
    int[] order = new int[n];
    for (int i = 0; i < n; i++) {
      order[i] = (i * 7919) % n;
    }
    Schema schema = BatchBuilderCopyTest.SCHEMA;
    try (Batch a = batch(0, 1300); Batch b = batch(1300, 1900);
        ColumnWindow window = new ColumnWindow(schema, n, pool, "test rows")) {
      BatchCursor first = new BatchCursor(a, 300);
      BatchCursor second = new BatchCursor(b, 0);
      window.add(first, 1000);
      window.add(second, 1600);
      assertThat(window.size()).isEqualTo(n);
      try (BatchBuilder joinedRows = BatchBuilder.create(schema, n, pool)) {
        joinedRows.appendRange(a, 300, 1000);
        joinedRows.appendRange(b, 0, 1600);
        try (Batch joined = joinedRows.build();
            BatchBuilder carried = BatchBuilder.create(schema, 1000, pool);
            BatchBuilder second1 = BatchBuilder.create(schema, 1000, pool);
            BatchBuilder third = BatchBuilder.create(schema, 1000, pool);
            BatchBuilder expected1 = BatchBuilder.create(schema, 1000, pool);
            BatchBuilder expected2 = BatchBuilder.create(schema, 1000, pool);
            BatchBuilder expected3 = BatchBuilder.create(schema, 1000, pool)) {
          carried.appendRange(a, 0, 10); // a batch already partly filled
          expected1.appendRange(a, 0, 10);
          BatchBuilder.appendRows(window, order, 5, 2500, List.of(carried, second1, third));
          BatchBuilder.appendRows(joined, order, 5, 2500, List.of(expected1, expected2, expected3));
          assertThat(List.of(carried.size(), second1.size(), third.size())).containsExactly(1000, 1000, 510);
          try (Batch x = carried.build(); Batch y = second1.build(); Batch z = third.build();
              Batch ex = expected1.build(); Batch ey = expected2.build(); Batch ez = expected3.build()) {
            assertSameRows(ex, x);
            assertSameRows(ey, y);
            assertSameRows(ez, z);
          }
        }
      }
      assertThat(window.size()).as("consumed").isZero();
      assertThat(first.remaining()).isZero();
      assertThat(second.remaining()).isEqualTo(300);
      assertThat(second.index()).isEqualTo(b.index(1600));
    }
  }

  @Test
  void aFieldWithoutNullsAfterOneWithNullsOfTheSameKindGetsNoNullFlags() {
    Schema schema = Schema.of(
        new TensorSpec("a", DType.FLOAT64, Shape.scalar(), true),
        new TensorSpec("b", DType.FLOAT64, Shape.scalar(), true),
        new TensorSpec("s", DType.STRING, Shape.scalar(), true),
        new TensorSpec("t", DType.STRING, Shape.scalar(), true));
    try (BatchBuilder rows = BatchBuilder.create(schema, 50, pool)) {
      for (int r = 0; r < 50; r++) {
        Example.Builder e = Example.builder(r).put("b", Tensor.scalar(r * 2.0)).put("t", Tensor.ofString("t" + r));
        if (r % 3 == 0) {
          e.putNull("a").putNull("s");
        } else {
          e.put("a", Tensor.scalar(r * 1.0)).put("s", Tensor.ofString("s" + r));
        }
        rows.append(e.build());
      }
      int[] order = new int[50];
      for (int i = 0; i < 50; i++) {
        order[i] = 49 - i;
      }
      try (Batch source = rows.build(); ColumnWindow window = new ColumnWindow(schema, 50, pool, "test rows")) {
        for (int pass = 0; pass < 2; pass++) { // the window's buffers are reused by the second pass
          window.add(new BatchCursor(source, 0), 50);
          try (BatchBuilder out = BatchBuilder.create(schema, 50, pool)) {
            BatchBuilder.appendRows(window, order, 0, 50, List.of(out));
            try (Batch b = out.build()) {
              assertThat(b.column("a").hasValidity()).isTrue();
              assertThat(b.column("s").hasValidity()).isTrue();
              assertThat(b.column("b").hasValidity()).as("b has no nulls").isFalse();
              assertThat(b.column("t").hasValidity()).as("t has no nulls").isFalse();
              for (int r = 0; r < 50; r++) {
                assertThat(b.copyRow(r)).isEqualTo(source.copyRow(49 - r));
              }
            }
          }
        }
        // one buffer serves a and b in turn: b's decode finds no null flags left by a's
        window.add(new BatchCursor(source, 0), 50);
        assertThat(window.decode(0, 0).hasValidity(0)).isTrue();
        assertThat(window.decode(1, 0).hasValidity(0)).isFalse();
        assertThat(window.decode(2, 0).hasValidity(0)).isTrue();
        assertThat(window.decode(3, 0).hasValidity(0)).isFalse();
        window.clear();
      }
    }
  }

  @Test
  void aGatherOfNoRowsStillPassesTheWindowsRows() {
    try (Batch a = batch(0, 40); ColumnWindow window = new ColumnWindow(BatchBuilderCopyTest.SCHEMA, 64, pool, "w")) {
      BatchCursor c = new BatchCursor(a, 0);
      window.add(c, 25);
      BatchBuilder.appendRows(window, new int[25], 0, 0, List.of());
      assertThat(c.remaining()).isEqualTo(15);
      assertThat(window.size()).isZero();
    }
  }

  @Test
  void theWindowsContractIsEnforced() {
    Schema other = Schema.of(new TensorSpec("id", DType.INT64, Shape.scalar()));
    try (Batch a = batch(0, 40); Batch b = batch(40, 10);
        ColumnWindow window = new ColumnWindow(BatchBuilderCopyTest.SCHEMA, 32, pool, "the rows")) {
      BatchCursor c = new BatchCursor(a, 0);
      try (BatchBuilder o = BatchBuilder.create(other, 1, pool); Batch otherRows = o.build()) {
        assertThatThrownBy(() -> window.add(new BatchCursor(otherRows, 0), 1))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("fields");
      }
      assertThatThrownBy(() -> window.add(new BatchCursor(b, 0), 11))
          .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("has 10 left");
      assertThatThrownBy(() -> window.add(c, 33))
          .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("window of 0 of 32");
      window.add(c, 20);
      assertThatThrownBy(() -> window.add(c, 1))
          .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("already in the window");
      try (BatchBuilder out = BatchBuilder.create(BatchBuilderCopyTest.SCHEMA, 4, pool)) {
        assertThatThrownBy(() -> BatchBuilder.appendRows(window, new int[] {1, 2, 20}, 0, 3, List.of(out)))
            .isInstanceOf(IndexOutOfBoundsException.class).hasMessageContaining("row 20").hasMessageContaining("the rows");
        assertThatThrownBy(() -> BatchBuilder.appendRows(window, new int[5], 0, 5, List.of(out)))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("room for 4");
        assertThat(out.size()).isZero();
        assertThat(c.remaining()).as("nothing decoded").isEqualTo(40);
      }
    }
    ColumnWindow closed = new ColumnWindow(BatchBuilderCopyTest.SCHEMA, 4, pool, "w");
    closed.close();
    try (Batch a = batch(0, 2)) {
      assertThatThrownBy(() -> closed.add(new BatchCursor(a, 0), 1)).isInstanceOf(IllegalStateException.class);
    }
  }
}
