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
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** {@link BatchBuilder#appendRange} and {@link BatchBuilder#appendRows}: column ranges and gathers. */
class BatchBuilderCopyTest {
  private final MemoryManager memory = new MemoryManager();
  private final BufferPool pool = memory.pool("test.copy");

  /** Every layout: fixed scalar and tensor, int32 (4-byte gather), string, ragged list, nullable. */
  static final Schema SCHEMA = Schema.of(
      new TensorSpec("id", DType.INT64, Shape.scalar()),
      new TensorSpec("i", DType.INT32, Shape.scalar()),
      new TensorSpec("x", DType.FLOAT32, Shape.of(3)),
      new TensorSpec("s", DType.STRING, Shape.scalar(), true),
      new TensorSpec("tokens", DType.INT16, Shape.of(-1)),
      new TensorSpec("f", DType.FLOAT64, Shape.scalar(), true),
      new TensorSpec("tags", DType.STRING, Shape.of(-1), true).withElementsNullable(0, true),
      new TensorSpec("grid", DType.INT32, Shape.of(-1, -1)).withElementsNullable(0, true).withElementsNullable(1, true));

  private static Tensor int32(int v) {
    return Tensor.wrap(DType.INT32, Shape.scalar(), Tensor.of(v).data());
  }

  static Example row(long i) {
    Example.Builder b = Example.builder(1000 + i)
        .put("id", Tensor.scalar(i))
        .put("x", Tensor.of(i, i + 0.5f, -i));
    b.put("i", Tensor.wrap(DType.INT32, Shape.scalar(), Tensor.of((int) (i * 7)).data()));
    if (i % 4 == 3) {
      b.putNull("s");
    } else {
      b.put("s", Tensor.ofString("v" + "x".repeat((int) (i % 5))));
    }
    short[] t = new short[(int) (i % 4)];
    java.nio.ByteBuffer tb = java.nio.ByteBuffer.allocate(2 * t.length).order(java.nio.ByteOrder.LITTLE_ENDIAN);
    for (int k = 0; k < t.length; k++) {
      tb.putShort((short) (i * 10 + k));
    }
    b.put("tokens", Tensor.wrap(DType.INT16, Shape.of(t.length), tb.flip()));
    if (i % 3 == 1) {
      b.putNull("f");
    } else {
      b.put("f", Tensor.scalar(i * 1.5));
    }
    if (i % 6 == 5) {
      b.putNull("tags");
    } else {
      List<String> tags = new ArrayList<>();
      for (int k = 0; k < i % 4; k++) {
        tags.add(k == 1 ? null : k == 2 ? "" : "t" + i + "." + k);
      }
      b.put("tags", Tensor.ofStrings(tags.toArray(new String[0])));
    }
    List<Tensor> grid = new ArrayList<>();
    for (int k = 0; k < 1 + i % 4; k++) {
      grid.add(k == 1 && i % 2 == 0 ? null
          : k == 2 ? Tensor.listOf(DType.INT32, java.util.Arrays.asList(int32((int) i), null))
          : Tensor.of((int) i, k, (int) -i));
    }
    b.put("grid", Tensor.listOf(DType.INT32, grid));
    return b.build();
  }

  private Batch batch(long from, int n) {
    try (BatchBuilder b = BatchBuilder.create(SCHEMA, n, pool)) {
      for (int r = 0; r < n; r++) {
        b.append(row(from + r));
      }
      return b.build();
    }
  }

  private static void assertRows(Batch batch, long... expected) {
    assertThat(batch.size()).isEqualTo(expected.length);
    for (int r = 0; r < expected.length; r++) {
      assertThat(batch.index(r)).isEqualTo(1000 + expected[r]);
      assertThat(batch.copyRow(r)).isEqualTo(row(expected[r]));
    }
  }

  @AfterEach
  void nothingLeaks() {
    memory.checkNoOutstanding();
  }

  @Test
  void appendRangeCopiesEveryLayoutAndRebasesOffsets() {
    try (Batch a = batch(0, 6); Batch b = batch(6, 5)) {
      try (BatchBuilder out = BatchBuilder.create(SCHEMA, 7, pool)) {
        out.appendRange(a, 2, 4);
        out.appendRange(b, 0, 3);
        try (Batch joined = out.build()) {
          assertRows(joined, 2, 3, 4, 5, 6, 7, 8);
          assertThat(joined.column("s").offsets().getLong(0)).isZero();
          assertThat(joined.column("s").hasValidity()).isTrue();
          assertThat(joined.column("tokens").offsets().getLong(7)).isEqualTo(joined.column("tokens").values().numElements());
        }
      }
    }
  }

  @Test
  void aCopiedRunOfConsecutiveIndicesStaysARange() {
    try (Batch a = batch(0, 6)) {
      try (BatchBuilder out = BatchBuilder.create(SCHEMA, 4, pool)) {
        out.appendRange(a, 1, 2);
        out.appendRange(a, 3, 2);
        try (Batch joined = out.build()) {
          assertRows(joined, 1, 2, 3, 4);
        }
      }
    }
  }

  @Test
  void appendRowsGathersInAnyOrder() {
    try (Batch a = batch(0, 9)) {
      int[] order = {8, 4, 0, 5, 2, 6, 7, 1, 3};
      try (BatchBuilder out = BatchBuilder.create(SCHEMA, 9, pool)) {
        out.appendRows(a, order, 0, 4);
        out.appendRows(a, order, 4, 5);
        try (Batch gathered = out.build()) {
          assertRows(gathered, 8, 4, 0, 5, 2, 6, 7, 1, 3);
        }
      }
      try (BatchBuilder out = BatchBuilder.create(SCHEMA, 2, pool)) {
        assertThatThrownBy(() -> out.appendRows(a, new int[] {1, 9}, 0, 2)).isInstanceOf(IndexOutOfBoundsException.class);
      }
    }
  }

  @Test
  void oneGatherSpreadOverSeveralBatchesFillsEachInTurn() {
    int n = 2600; // more than a warmed gather's threshold
    int[] order = new int[n];
    for (int i = 0; i < n; i++) {
      order[i] = (i * 7919) % n;
    }
    try (BatchBuilder joined = BatchBuilder.create(SCHEMA, n, pool)) {
      for (int k = 0; k < 4; k++) {
        try (Batch part = batch(k * 650L, 650)) {
          joined.appendRange(part, 0, 650);
        }
      }
      try (Batch all = joined.build();
          BatchBuilder carried = BatchBuilder.create(SCHEMA, 1000, pool);
          BatchBuilder second = BatchBuilder.create(SCHEMA, 1000, pool);
          BatchBuilder third = BatchBuilder.create(SCHEMA, 1000, pool)) {
        carried.appendRows(all, order, 0, 300); // a batch already partly filled
        BatchBuilder.appendRows(all, order, 300, 2300, List.of(carried, second, third));
        assertThat(List.of(carried.size(), second.size(), third.size())).containsExactly(1000, 1000, 600);
        long[][] expected = new long[3][];
        for (int t = 0; t < 3; t++) {
          expected[t] = new long[t < 2 ? 1000 : 600];
          for (int i = 0; i < expected[t].length; i++) {
            expected[t][i] = order[t * 1000 + i];
          }
        }
        try (Batch a = carried.build(); Batch b = second.build(); Batch c = third.build()) {
          assertRows(a, expected[0]);
          assertRows(b, expected[1]);
          assertRows(c, expected[2]);
        }
      }
    }
  }

  @Test
  void aSpreadGatherSkipsATargetThatIsAlreadyFull() {
    try (Batch a = batch(0, 9);
        BatchBuilder full = BatchBuilder.create(SCHEMA, 2, pool);
        BatchBuilder next = BatchBuilder.create(SCHEMA, 4, pool)) {
      int[] order = {8, 4, 0, 5, 2};
      full.appendRows(a, order, 0, 2);
      BatchBuilder.appendRows(a, order, 2, 3, List.of(full, next));
      try (Batch first = full.build(); Batch second = next.build()) {
        assertRows(first, 8, 4);
        assertRows(second, 0, 5, 2);
      }
    }
  }

  @Test
  void aSpreadGatherWithTooLittleRoomChangesNothing() {
    try (Batch a = batch(0, 9);
        BatchBuilder one = BatchBuilder.create(SCHEMA, 4, pool);
        BatchBuilder two = BatchBuilder.create(SCHEMA, 4, pool)) {
      int[] order = {8, 4, 0, 5, 2, 6, 7, 1, 3};
      assertThatThrownBy(() -> BatchBuilder.appendRows(a, order, 0, 9, List.of(one, two)))
          .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("room for 8");
      assertThatThrownBy(() -> BatchBuilder.appendRows(a, new int[] {1, 9}, 0, 2, List.of(one, two)))
          .isInstanceOf(IndexOutOfBoundsException.class).hasMessageContaining("row 9");
      assertThat(one.size() + two.size()).isZero();
    }
  }

  @Test
  void wrongSchemasAndOverflowsAreRefused() {
    Schema other = Schema.of(new TensorSpec("id", DType.INT64, Shape.scalar()));
    try (Batch a = batch(0, 3)) {
      try (BatchBuilder out = BatchBuilder.create(other, 3, pool)) {
        assertThatThrownBy(() -> out.appendRange(a, 0, 1))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("has the fields");
      }
      try (BatchBuilder out = BatchBuilder.create(SCHEMA, 2, pool)) {
        assertThatThrownBy(() -> out.appendRange(a, 0, 3)).hasMessageContaining("cannot append 3 rows");
        assertThatThrownBy(() -> out.appendRange(a, 2, 2)).isInstanceOf(IndexOutOfBoundsException.class);
      }
    }
  }

  @Test
  void aLongGatherGrowsTheVariableValues() {
    int n = 2000;
    int[] order = new int[n];
    long[] expected = new long[n];
    for (int i = 0; i < n; i++) {
      order[i] = (i * 7919) % n; // a permutation of 0..1999
      expected[i] = order[i];
    }
    try (BatchBuilder joined = BatchBuilder.create(SCHEMA, n, pool)) {
      for (int k = 0; k < 4; k++) {
        try (Batch part = batch(k * 500L, 500)) {
          joined.appendRange(part, 0, 500);
        }
      }
      try (Batch all = joined.build(); BatchBuilder out = BatchBuilder.create(SCHEMA, n, pool)) {
        out.appendRows(all, order, 0, n);
        try (Batch gathered = out.build()) {
          assertRows(gathered, expected);
        }
      }
    }
  }
}
