package dev.sluice.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.core.spi.BatchBuilder;
import dev.sluice.core.spi.BufferPool;
import dev.sluice.core.spi.ColumnBuilder;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Nested values: lists of strings, lists of lists, nulls at every level, in tensors, columns and batches. */
class NestedValuesTest {
  private final MemoryManager memory = new MemoryManager();
  private final BufferPool pool = memory.pool("test");

  @AfterEach
  void noLeaks() {
    memory.checkNoOutstanding();
  }

  // ------------------------------------------------------------------ specs

  @Test
  void specsCountRaggedLevelsAndNameTheirNullableElements() {
    TensorSpec tags = new TensorSpec("tags", DType.STRING, Shape.of(-1), true).withElementsNullable(0, true);
    assertThat(tags.raggedRank()).isEqualTo(1);
    assertThat(tags.elementsNullable(0)).isTrue();
    assertThat(tags.nullableAt(0)).isTrue();
    assertThat(tags.isFixedLength()).isFalse();
    assertThat(tags.toString()).isEqualTo("tags: string[-1?]?");
    TensorSpec grid = new TensorSpec("g", DType.FLOAT32, Shape.of(-1, -1, 3));
    assertThat(grid.raggedRank()).isEqualTo(2);
    assertThat(grid.isNested()).isTrue();
    assertThat(grid.itemShape()).isEqualTo(Shape.of(3));
    assertThat(grid.toString()).isEqualTo("g: float32[-1, -1, 3]");
    TensorSpec tensor = new TensorSpec("t", DType.FLOAT32, Shape.of(2, 3));
    assertThat(tensor.raggedRank()).isZero();
    assertThat(tensor.isFixedLength()).isTrue();
    assertThat(new TensorSpec("s", DType.STRING, Shape.scalar()).raggedRank()).isZero();
  }

  @Test
  void specsRefuseShapesTheLayoutCannotHold() {
    assertThatThrownBy(() -> new TensorSpec("x", DType.FLOAT32, Shape.of(3, -1)))
        .hasMessageContaining("variable dimensions must come first");
    assertThatThrownBy(() -> new TensorSpec("s", DType.STRING, Shape.of(-1, 2)))
        .hasMessageContaining("takes only variable (-1) dimensions");
    assertThatThrownBy(() -> new TensorSpec("x", DType.FLOAT32, Shape.of(-1), false, 0b10))
        .hasMessageContaining("beyond the 1 ragged level");
    assertThatThrownBy(() -> new TensorSpec("x", DType.FLOAT32, Shape.of(4)).withElementsNullable(0, true))
        .isInstanceOf(IndexOutOfBoundsException.class);
  }

  // ------------------------------------------------------------------ tensors

  @Test
  void aListOfStringsKeepsNullAndEmptyStringsApart() {
    Tensor t = Tensor.ofStrings("a", null, "", "héllo");
    assertThat(t.dtype()).isEqualTo(DType.STRING);
    assertThat(t.shape()).isEqualTo(Shape.of(4));
    assertThat(t.isNull(1)).isTrue();
    assertThat(t.isNull(2)).isFalse();
    assertThat(t.stringAt(0)).isEqualTo("a");
    assertThat(t.stringAt(1)).isEmpty();
    assertThat(t.stringAt(2)).isEmpty();
    assertThat(t.stringAt(3)).isEqualTo("héllo");
    assertThat(t.slice(3).getString()).isEqualTo("héllo");
    assertThat(t).isEqualTo(Tensor.ofStrings("a", null, "", "héllo"));
    assertThat(t).isNotEqualTo(Tensor.ofStrings("a", "", "", "héllo"));
  }

  @Test
  void aListOfListsIsRaggedAndWalksLevelByLevel() {
    Tensor t = Tensor.listOf(Tensor.of(1, 2), null, Tensor.of(new int[0]),
        Tensor.listOf(DType.INT32, Arrays.asList(int32(3), null)));
    assertThat(t.shape()).isEqualTo(Shape.of(4, -1));
    assertThat(t.isRagged()).isTrue();
    assertThat(t.numElements()).isEqualTo(4); // 2 + 0 + 0 + 2 innermost values
    assertThat(t.isNull(0)).isFalse();
    assertThat(t.isNull(1)).isTrue();
    assertThat(t.isNull(2)).isFalse();
    assertThat(t.slice(0)).isEqualTo(Tensor.of(1, 2));
    assertThat(t.slice(1).shape()).isEqualTo(Shape.of(0));
    assertThat(t.slice(2).shape()).isEqualTo(Shape.of(0));
    Tensor last = t.slice(3);
    assertThat(last.shape()).isEqualTo(Shape.of(2));
    assertThat(last.getInt(0)).isEqualTo(3);
    assertThat(last.isNull(0)).isFalse();
    assertThat(last.isNull(1)).isTrue();
    assertThat(last.getInt(1)).isZero();
    assertThat(t.offsets(0).getLong(8)).isEqualTo(2);
  }

  @Test
  void equalShapesMakeADenseListAndUnequalOnesARaggedOne() {
    assertThat(Tensor.listOf(Tensor.of(1f, 2f), Tensor.of(3f, 4f)).shape()).isEqualTo(Shape.of(2, 2));
    assertThat(Tensor.listOf(Tensor.of(1f, 2f), Tensor.of(3f)).shape()).isEqualTo(Shape.of(2, -1));
    Tensor deep = Tensor.listOf(Tensor.listOf(Tensor.of(1f), Tensor.of(2f, 3f)), Tensor.listOf(Tensor.of(4f, 5f)));
    assertThat(deep.shape()).isEqualTo(Shape.of(2, -1, -1));
    assertThat(deep.slice(0).slice(1)).isEqualTo(Tensor.of(2f, 3f));
    assertThat(deep.slice(1).slice(0)).isEqualTo(Tensor.of(4f, 5f));
    assertThat(deep.slice(1, 1).slice(0).slice(0)).isEqualTo(Tensor.of(4f, 5f));
    assertThat(deep.toFloatArray()).containsExactly(1f, 2f, 3f, 4f, 5f);
    Tensor words = Tensor.listOf(Tensor.ofStrings("a", "bc"), Tensor.ofStrings(), Tensor.ofStrings("d"));
    assertThat(words.shape()).isEqualTo(Shape.of(3, -1));
    assertThat(words.offsetLevels()).isEqualTo(2);
    assertThat(words.slice(0).stringAt(1)).isEqualTo("bc");
    assertThat(words.stringAt(2)).isEqualTo("d");
  }

  @Test
  void wrapRaggedChecksEveryBufferAgainstTheShape() {
    ByteBuffer values = le(12).putFloat(0, 1f).putFloat(4, 2f).putFloat(8, 3f);
    Tensor t = Tensor.wrapRagged(DType.FLOAT32, Shape.of(2, -1), values, List.of(longs(0, 1, 3)), List.of());
    assertThat(t.slice(1)).isEqualTo(Tensor.of(2f, 3f));
    assertThatThrownBy(() -> Tensor.wrapRagged(DType.FLOAT32, Shape.of(2, -1), values, List.of(longs(0, 3, 1)), List.of()))
        .hasMessageContaining("never decrease");
    assertThatThrownBy(() -> Tensor.wrapRagged(DType.FLOAT32, Shape.of(2, -1), values, List.of(longs(0, 1, 4)), List.of()))
        .hasMessageContaining("needs 16 bytes of values but the buffer has 12");
    assertThatThrownBy(() -> Tensor.wrapRagged(DType.FLOAT32, Shape.of(2, -1), values, List.of(), List.of()))
        .hasMessageContaining("needs 1 offsets buffer(s)");
    assertThatThrownBy(() -> Tensor.wrapRagged(DType.FLOAT32, Shape.of(3, -1), values, List.of(longs(0, 1, 3)), List.of()))
        .hasMessageContaining("need 4 int64 values");
    assertThatThrownBy(() -> Tensor.wrapRagged(DType.FLOAT32, Shape.of(2, -1), values, List.of(longs(0, 1, 3)),
        Arrays.asList(ByteBuffer.wrap(new byte[] {1}), null)))
        .hasMessageContaining("validity of dimension 0 needs 2 bytes");
  }

  @Test
  void aCopyOutlivesTheMemoryItViewed() {
    Tensor t = Tensor.listOf(Tensor.ofStrings("x", null), null, Tensor.ofStrings("yz"));
    Tensor c = t.copy();
    assertThat(c).isEqualTo(t);
    assertThat(c.slice(0).isNull(1)).isTrue();
    assertThat(c.isNull(1)).isTrue();
  }

  // ------------------------------------------------------------------ batches

  private static final TensorSpec TAGS =
      new TensorSpec("tags", DType.STRING, Shape.of(-1), true).withElementsNullable(0, true);
  private static final TensorSpec GRID = new TensorSpec("grid", DType.INT64, Shape.of(-1, -1), true, 0b11);
  private static final TensorSpec PIX = new TensorSpec("pix", DType.FLOAT32, Shape.of(2, 2));
  private static final TensorSpec POINTS = new TensorSpec("points", DType.FLOAT32, Shape.of(-1, 3));
  private static final Schema SCHEMA = Schema.of(TAGS, GRID, PIX, POINTS);

  @Test
  void nullListEmptyListAndNullElementAreThreeThingsInAColumn() {
    List<Example> rows = List.of(
        row(0, Tensor.ofStrings("a", null), Tensor.listOf(Tensor.of(1L, 2L), null, Tensor.of(new long[0]))),
        row(1, null, null),
        row(2, Tensor.ofStrings(), emptyGrid()),
        row(3, Tensor.ofStrings(null, "bcd"), Tensor.listOf(Tensor.listOf(DType.INT64, Arrays.asList(null, int64(7))))));
    try (BatchBuilder b = BatchBuilder.create(SCHEMA, 4, pool)) {
      rows.forEach(b::append);
      try (Batch batch = b.build()) {
        Column tags = batch.column("tags");
        assertThat(tags.offsetLevels()).isEqualTo(2);
        assertThat(tags.offsets(0).toLongArray()).containsExactly(0, 2, 2, 2, 4);
        assertThat(tags.offsets(1).toLongArray()).containsExactly(0, 1, 1, 1, 4);
        assertThat(bools(tags.validity(0))).containsExactly(1, 0, 1, 1);
        assertThat(bools(tags.validity(1))).containsExactly(1, 0, 0, 1);
        assertThat(tags.count(1)).isEqualTo(4);
        assertThat(tags.values().stringAt(3)).isEqualTo("bcd");
        Column grid = batch.column("grid");
        assertThat(grid.offsets(0).toLongArray()).containsExactly(0, 3, 3, 3, 4);
        assertThat(grid.offsets(1).toLongArray()).containsExactly(0, 2, 2, 2, 4);
        assertThat(bools(grid.validity(0))).containsExactly(1, 0, 1, 1);
        assertThat(bools(grid.validity(1))).containsExactly(1, 0, 1, 1);
        assertThat(bools(grid.validity(2))).containsExactly(1, 1, 0, 1);
        assertThat(grid.values().toLongArray()).containsExactly(1, 2, 0, 7);
        Column pix = batch.column("pix");
        assertThat(pix.isVariableLength()).isFalse();
        assertThat(pix.values().shape()).isEqualTo(Shape.of(4, 2, 2)); // one contiguous block
        Column points = batch.column("points");
        assertThat(points.offsets().toLongArray()).containsExactly(0, 0, 0, 1, 1);
        assertThat(points.values().shape()).isEqualTo(Shape.of(1, 3));
        for (int r = 0; r < rows.size(); r++) {
          assertThat(batch.copyRow(r)).isEqualTo(rows.get(r));
        }
        assertThat(batch.copyRow(3).tensor("grid").slice(0).isNull(0)).isTrue();
        assertThat(batch.byteSize()).isGreaterThan(0);
      }
    }
  }

  @Test
  void theColumnBuilderAndAppendBuildTheSameColumn() {
    Example e = row(5, Tensor.ofStrings("x", null, "yy"), Tensor.listOf(null, Tensor.of(4L)));
    try (BatchBuilder a = BatchBuilder.create(SCHEMA, 1, pool); BatchBuilder b = BatchBuilder.create(SCHEMA, 1, pool)) {
      a.append(e);
      ColumnBuilder tags = b.column(0);
      tags.startList(0);
      tags.addBytes("x".getBytes());
      tags.addNull(1);
      tags.addBytes(ByteBuffer.wrap("-yy-".getBytes()), 1, 2);
      ColumnBuilder grid = b.column(1);
      grid.startList(0);
      grid.addNull(1);
      grid.startList(1);
      int at = grid.reserveValues(1);
      grid.valueBuffer().putLong(at, 4L);
      b.fixedColumn(2).putFloat(0, 1f);
      ColumnBuilder points = b.column(3);
      points.startList(0);
      points.reserveValues(0);
      b.commitRange(5, 1);
      try (Batch x = a.build(); Batch y = b.build()) {
        for (int c = 0; c < 2; c++) {
          assertThat(y.column(c).tensor()).isEqualTo(x.column(c).tensor());
        }
        assertThat(y.copyRow(0).tensor("tags")).isEqualTo(e.tensor("tags"));
      }
    }
  }

  @Test
  void nullsWhereTheSpecAllowsNoneAreRefusedNamingTheField() {
    Schema strict = Schema.of(new TensorSpec("tags", DType.STRING, Shape.of(-1)));
    try (BatchBuilder b = BatchBuilder.create(strict, 2, pool)) {
      assertThatThrownBy(() -> b.append(Example.of(0, "tags", Tensor.ofStrings("a", null))))
          .hasMessageContaining("example 0")
          .hasMessageContaining("'tags'")
          .hasMessageContaining("allows no null elements");
      assertThatThrownBy(() -> b.column(0).addNull(0)).hasMessageContaining("allows no null rows");
    }
    Schema fixed = Schema.of(new TensorSpec("v", DType.INT32, Shape.of(2)));
    try (BatchBuilder b = BatchBuilder.create(fixed, 1, pool)) {
      assertThatThrownBy(() -> b.append(Example.of(0, "v", Tensor.listOf(DType.INT32, Arrays.asList(int32(1), null)))))
          .hasMessageContaining("with null elements");
    }
  }

  @Test
  void shapesThatDoNotFitTheItemShapeAreRefused() {
    try (BatchBuilder b = BatchBuilder.create(SCHEMA, 1, pool)) {
      Example bad = Example.of(0, Map.of("tags", Tensor.ofStrings(), "grid", Tensor.listOf(Tensor.of(1L)),
          "pix", Tensor.wrap(DType.FLOAT32, Shape.of(2, 2), le(16)), "points", Tensor.listOf(Tensor.of(1f, 2f))));
      assertThatThrownBy(() -> b.append(bad)).hasMessageContaining("'points'").hasMessageContaining("[-1, 3]");
      Example ragged = bad.with("points", Tensor.listOf(Tensor.of(1f, 2f, 3f), Tensor.of(4f, 5f)));
      assertThatThrownBy(() -> b.append(ragged)).hasMessageContaining("'points'")
          .hasMessageContaining("shape [2] does not fit the item shape [3]");
      Example good = bad.with("points", Tensor.listOf(Tensor.of(1f, 2f, 3f)));
      b.append(good); // the failed appends left nothing behind
      try (Batch batch = b.build()) {
        assertThat(batch.copyRow(0)).isEqualTo(good);
        assertThat(batch.column("tags").count(1)).isZero();
      }
    }
  }

  @Test
  void randomNestedRowsRoundTripThroughBatchesAndGrowTheirBuffers() {
    Random rnd = new Random(17);
    for (int round = 0; round < 20; round++) {
      int n = 1 + rnd.nextInt(60);
      List<Example> rows = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        rows.add(row(i, rnd.nextInt(6) == 0 ? null : randomTags(rnd), rnd.nextInt(6) == 0 ? null : randomGrid(rnd)));
      }
      try (BatchBuilder b = BatchBuilder.create(SCHEMA, n, pool)) {
        rows.forEach(b::append);
        try (Batch batch = b.build()) {
          for (int i = 0; i < n; i++) {
            assertThat(batch.copyRow(i)).as("round %d row %d", round, i).isEqualTo(rows.get(i));
            Tensor tags = rows.get(i).fields().get("tags");
            if (tags != null) {
              assertThat(batch.column("tags").row(i)).isEqualTo(tags);
            }
          }
        }
      }
    }
  }

  // ------------------------------------------------------------------ helpers

  private static Tensor randomTags(Random rnd) {
    String[] s = new String[rnd.nextInt(40)];
    for (int i = 0; i < s.length; i++) {
      s[i] = rnd.nextInt(5) == 0 ? null : "t" + "é".repeat(rnd.nextInt(300));
    }
    return Tensor.ofStrings(s);
  }

  private static Tensor emptyGrid() {
    return Tensor.wrapRagged(DType.INT64, Shape.of(0, -1), le(0), List.of(longs(0)), List.of());
  }

  private static Tensor randomGrid(Random rnd) {
    int n = rnd.nextInt(8);
    if (n == 0) {
      return emptyGrid();
    }
    List<Tensor> inner = new ArrayList<>();
    inner.add(Tensor.of(rnd.nextLong())); // one non-null inner list gives the list its rank
    for (int i = n - 1; i > 0; i--) {
      if (rnd.nextInt(5) == 0) {
        inner.add(null);
        continue;
      }
      List<Tensor> values = new ArrayList<>();
      for (int j = rnd.nextInt(50); j > 0; j--) {
        values.add(rnd.nextInt(7) == 0 ? null : int64(rnd.nextLong()));
      }
      inner.add(Tensor.listOf(DType.INT64, values));
    }
    java.util.Collections.shuffle(inner, rnd);
    return Tensor.listOf(DType.INT64, inner);
  }

  private static Example row(long index, Tensor tags, Tensor grid) {
    Map<String, Tensor> m = new java.util.LinkedHashMap<>();
    m.put("tags", tags);
    m.put("grid", grid);
    m.put("pix", Tensor.wrap(DType.FLOAT32, Shape.of(2, 2), le(16).putFloat(0, index)));
    m.put("points", Tensor.wrap(DType.FLOAT32, Shape.of(index % 2 == 0 ? index / 2 : 0, 3),
        le((int) (index % 2 == 0 ? index / 2 : 0) * 12)));
    return Example.of(index, m);
  }

  private static Tensor int32(int v) {
    return Tensor.wrap(DType.INT32, Shape.scalar(), le(4).putInt(0, v));
  }

  private static Tensor int64(long v) {
    return Tensor.scalar(v);
  }

  private static ByteBuffer le(int bytes) {
    return ByteBuffer.allocate(bytes).order(ByteOrder.LITTLE_ENDIAN);
  }

  private static ByteBuffer longs(long... v) {
    ByteBuffer b = le(v.length * 8);
    for (int i = 0; i < v.length; i++) {
      b.putLong(i * 8, v[i]);
    }
    return b;
  }

  private static int[] bools(Tensor t) {
    int[] out = new int[(int) t.numElements()];
    for (int i = 0; i < out.length; i++) {
      out[i] = t.getBoolean(i) ? 1 : 0;
    }
    return out;
  }
}
