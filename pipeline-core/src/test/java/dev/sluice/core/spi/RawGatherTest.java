package dev.sluice.core.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.core.Batch;
import dev.sluice.core.Column;
import dev.sluice.core.DType;
import dev.sluice.core.Example;
import dev.sluice.core.MemoryManager;
import dev.sluice.core.Schema;
import dev.sluice.core.Shape;
import dev.sluice.core.Tensor;
import dev.sluice.core.TensorSpec;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link RawGather}, the gathers by address, against plain {@code ByteBuffer} loops written out
 * here; and {@link BatchBuilder#appendRows} from heap buffers (which never go by address) against
 * the same gather from pooled direct buffers.
 */
class RawGatherTest {
  private final MemoryManager memory = new MemoryManager();
  private final BufferPool pool = memory.pool("test.rawgather");
  private final SplittableRandom random = new SplittableRandom(42);

  @AfterEach
  void nothingLeaks() {
    memory.checkNoOutstanding();
  }

  private static ByteBuffer direct(int bytes) {
    return ByteBuffer.allocateDirect(bytes).order(ByteOrder.LITTLE_ENDIAN);
  }

  private ByteBuffer randomBytes(int bytes) {
    ByteBuffer b = direct(bytes);
    for (int i = 0; i < bytes; i++) {
      b.put(i, (byte) random.nextInt(256));
    }
    return b;
  }

  /** A permutation of {@code n} rows with {@code pad} unused entries before it. */
  private int[] rows(int n, int pad) {
    int[] p = new int[pad + n];
    for (int i = 0; i < n; i++) {
      p[pad + i] = i;
    }
    for (int i = n - 1; i > 0; i--) {
      int j = random.nextInt(i + 1);
      int t = p[pad + i];
      p[pad + i] = p[pad + j];
      p[pad + j] = t;
    }
    return p;
  }

  @Test
  void addressAccessIsUsedWhereTheJvmAllowsItWithoutAWarning() {
    String mode = System.getProperty("sun.misc.unsafe.memory.access"); // set by the launcher flag
    boolean allowed = mode != null ? mode.equals("allow") : Runtime.version().feature() < 24;
    assertThat(RawGather.ENABLED).isEqualTo(allowed);
    assertThat(RawGather.serves(direct(8), ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN))).isFalse();
    assertThat(RawGather.serves(direct(8), direct(8).order(ByteOrder.BIG_ENDIAN))).isFalse();
  }

  @Test
  void fixedWidthGathersMatchTheBufferLoops() {
    int n = 3000;
    int pad = 5;
    int[] rows = rows(n, pad);
    for (int width : new int[] {4, 8, 12, 256}) {
      ByteBuffer src = randomBytes(n * width);
      int at = 7;
      ByteBuffer dst = randomBytes((at + n) * width);
      ByteBuffer expected = direct(dst.capacity());
      expected.put(0, dst, 0, dst.capacity());
      for (int i = 0; i < n; i++) {
        expected.put((at + i) * width, src, rows[pad + i] * width, width);
      }
      if (width == 4 || width == 8) {
        RawGather.Offsets offsets = new RawGather.Rows(rows, pad, n, n).offsets(width == 4 ? 2 : 3);
        RawGather.gather(src, offsets, pad, 1000, dst, at); // in two parts, as over two target batches
        RawGather.gather(src, offsets, pad + 1000, n - 1000, dst, at + 1000);
      } else {
        RawGather.gatherRows(src, width, n, rows, pad, n, dst, at);
      }
      assertThat(dst.mismatch(expected)).as("width %d", width).isEqualTo(-1);
    }
  }

  @Test
  void twoColumnsGatherTogetherAsEachAlone() {
    int n = 3000;
    int pad = 3;
    int[] rows = rows(n, pad);
    ByteBuffer a = randomBytes(n * 4);
    ByteBuffer b = randomBytes(n * 4);
    int at = 11;
    ByteBuffer dstA = randomBytes((at + n) * 4);
    ByteBuffer dstB = randomBytes((at + n) * 4);
    ByteBuffer expectedA = direct(dstA.capacity()).put(0, dstA, 0, dstA.capacity());
    ByteBuffer expectedB = direct(dstB.capacity()).put(0, dstB, 0, dstB.capacity());
    for (int i = 0; i < n; i++) {
      expectedA.putInt((at + i) * 4, a.getInt(rows[pad + i] * 4));
      expectedB.putInt((at + i) * 4, b.getInt(rows[pad + i] * 4));
    }
    RawGather.Offsets offsets = new RawGather.Rows(rows, pad, n, n).offsets(2);
    RawGather.gather4(a, b, offsets, pad, n, dstA, dstB, at);
    assertThat(dstA.mismatch(expectedA)).isEqualTo(-1);
    assertThat(dstB.mismatch(expectedB)).isEqualTo(-1);
    RawGather.Offsets eight = new RawGather.Rows(rows, pad, n, n).offsets(3);
    assertThatThrownBy(() -> RawGather.gather4(a, b, eight, pad, n, dstA, dstB, at))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void offsetsAreMadeOnlyForRowsOfTheSource() {
    int[] rows = {2, 0, 5, 1};
    assertThatThrownBy(() -> new RawGather.Rows(rows, 0, 4, 5).offsets(2))
        .isInstanceOf(IndexOutOfBoundsException.class)
        .hasMessageContaining("row 5");
    assertThatThrownBy(() -> new RawGather.Rows(new int[] {-1}, 0, 1, 5).offsets(3))
        .isInstanceOf(IndexOutOfBoundsException.class)
        .hasMessageContaining("row -1");
    RawGather.Rows ok = new RawGather.Rows(rows, 1, 2, 6);
    assertThat(ok.offsets(2)).isSameAs(ok.offsets(2)); // made once per width
    ByteBuffer src = randomBytes(6 * 4);
    ByteBuffer dst = direct(8);
    assertThatThrownBy(() -> RawGather.gather(src, ok.offsets(2), 0, 2, dst, 0))
        .isInstanceOf(IndexOutOfBoundsException.class); // rows [0, 2) are not the offsets' [1, 3)
    RawGather.gather(src, ok.offsets(2), 1, 2, dst, 0);
    assertThat(dst.getInt(0)).isEqualTo(src.getInt(0));
    assertThat(dst.getInt(4)).isEqualTo(src.getInt(20));
    // byte offsets past Integer.MAX_VALUE: none, the gathers by row index serve
    assertThat(new RawGather.Rows(rows, 0, 4, Integer.MAX_VALUE / 4).offsets(3)).isNull();
  }

  @Test
  void variableLengthGathersMatchTheBufferLoops() {
    int n = 500;
    int pad = 3;
    for (int unit : new int[] {1, 2}) { // string bytes; a list of int16 items
      ByteBuffer so = direct((n + 1) * 8);
      long units = 0;
      for (int r = 0; r < n; r++) {
        so.putLong(r * 8, units);
        units += random.nextInt(40); // empty rows too
      }
      so.putLong(n * 8, units);
      ByteBuffer data = randomBytes((int) units * unit);
      int[] rows = rows(n, pad);
      long c = 4;
      long start = 11;
      // room to spare after the values for one run, none for the other: short values are moved as
      // two words where both buffers have 16 bytes from the value on, by a copy where they do not
      ByteBuffer dst = direct((int) (start + units * unit) + (unit == 1 ? 64 : 0));
      ByteBuffer off = direct((int) ((c + n) * 8));
      ByteBuffer wantDst = direct(dst.capacity());
      ByteBuffer wantOff = direct(off.capacity());
      long end = start;
      long total = 0;
      for (int i = 0; i < n; i++) {
        int r = rows[pad + i];
        long a = so.getLong(r * 8);
        int bytes = (int) ((so.getLong(r * 8 + 8) - a) * unit);
        wantOff.putLong((int) ((c + i) * 8), end / unit);
        wantDst.put((int) end, data, (int) (a * unit), bytes);
        end += bytes;
        total += bytes / unit;
      }
      assertThat(RawGather.unitsOf(so, n, rows, pad, n)).isEqualTo(total);
      long got = RawGather.gatherValues(so, data, unit, unit, n, rows, pad, n, dst, off, c, start);
      assertThat(got).isEqualTo(end);
      assertThat(dst.slice(0, (int) end).mismatch(wantDst.slice(0, (int) end))).isEqualTo(-1); // past the end: unspecified
      assertThat(off.mismatch(wantOff)).isEqualTo(-1);
    }
  }

  @Test
  void nullRowsAreFoundAtTheirPositions() {
    int n = 1000;
    ByteBuffer flags = direct(n);
    for (int r = 0; r < n; r++) {
      flags.put(r, (byte) (random.nextInt(10) == 0 ? 0 : r % 3 == 0 ? 0xFF : 1)); // any non-zero byte is valid
    }
    int[] rows = rows(n, 2);
    List<Integer> expected = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      if (flags.get(rows[2 + i]) == 0) {
        expected.add(i);
      }
    }
    assertThat(RawGather.nullRows(flags, n, rows, 2, n)).containsExactly(expected.stream().mapToInt(Integer::intValue).toArray());
    ByteBuffer none = direct(n);
    none.put(0, new byte[n]);
    assertThat(RawGather.nullRows(none, n, rows, 2, 0)).isEmpty();
  }

  @Test
  void buffersTooSmallForTheirRowsAreRefusedBeforeAnyCopy() {
    int[] rows = {0, 1, 2, 3};
    ByteBuffer dst = direct(16);
    RawGather.Offsets offsets = new RawGather.Rows(rows, 0, 4, 4).offsets(2);
    assertThatThrownBy(() -> RawGather.gather(direct(12), offsets, 0, 4, dst, 0))
        .isInstanceOf(IndexOutOfBoundsException.class); // 4 rows claimed, 3 values held
    assertThatThrownBy(() -> RawGather.gather(direct(16), offsets, 0, 4, dst, 1))
        .isInstanceOf(IndexOutOfBoundsException.class); // no room for the last value
    assertThatThrownBy(() -> RawGather.gather4(direct(16), direct(12), offsets, 0, 4, dst, direct(16), 0))
        .isInstanceOf(IndexOutOfBoundsException.class);
    assertThatThrownBy(() -> RawGather.gather4(direct(16), direct(16), offsets, 0, 4, dst, direct(12), 0))
        .isInstanceOf(IndexOutOfBoundsException.class);
    assertThatThrownBy(() -> RawGather.gatherRows(direct(40), 12, 4, rows, 0, 4, direct(48), 0))
        .isInstanceOf(IndexOutOfBoundsException.class);
    assertThatThrownBy(() -> RawGather.nullRows(direct(3), 4, rows, 0, 4))
        .isInstanceOf(IndexOutOfBoundsException.class);
    assertThatThrownBy(() -> RawGather.unitsOf(direct(32), 4, rows, 0, 4))
        .isInstanceOf(IndexOutOfBoundsException.class); // 5 offsets needed
    assertThat(dst.mismatch(direct(16))).isEqualTo(-1); // nothing written
  }

  @Test
  void anOffsetOutsideTheValuesIsRefusedNamingTheRow() {
    ByteBuffer so = direct(3 * 8);
    so.putLong(0, 0).putLong(8, 4).putLong(16, 90); // row 1 claims bytes 4 to 90 of 10
    ByteBuffer dst = direct(100);
    ByteBuffer off = direct(16);
    assertThatThrownBy(() -> RawGather.gatherValues(so, direct(10), 1, 1, 2, new int[] {1, 0}, 0, 2, dst, off, 0, 0))
        .isInstanceOf(IndexOutOfBoundsException.class)
        .hasMessageContaining("row 1")
        .hasMessageContaining("of 10");
    assertThatThrownBy(() -> RawGather.gatherValues(so, direct(10), 1, 1, 2, new int[] {0}, 0, 1, dst, off, 0, -1))
        .isInstanceOf(IndexOutOfBoundsException.class); // a negative end
    so.putLong(16, 8);
    assertThatThrownBy(() -> RawGather.gatherValues(so, direct(10), 1, 1, 2, new int[] {1, 0}, 0, 2, direct(3), off, 0, 0))
        .isInstanceOf(IndexOutOfBoundsException.class) // row 1's 4 bytes do not fit in 3
        .hasMessageContaining("row 1");
  }

  /** The rows of a pooled batch copied into heap buffers (a builder without a pool): the same batch, off the address path. */
  private static Batch onHeap(Batch direct) {
    List<Column> columns = new ArrayList<>();
    for (int f = 0; f < direct.schema().size(); f++) {
      ColumnBuilder c = new ColumnBuilder(direct.schema().field(f), direct.size(), null);
      c.copyRange(direct.column(f), 0, direct.size(), 0);
      columns.add(c.build(direct.size()));
    }
    long[] indices = new long[direct.size()];
    for (int r = 0; r < indices.length; r++) {
      indices[r] = direct.index(r);
    }
    return Batch.of(direct.schema(), columns, indices, () -> {});
  }

  /** Fields of 4-byte rows (gathered two at a time by address), one of them nullable, among others. */
  private static final Schema WORDS = Schema.of(
      new TensorSpec("a", DType.FLOAT32, Shape.scalar()),
      new TensorSpec("id", DType.INT64, Shape.scalar()),
      new TensorSpec("b", DType.INT32, Shape.scalar(), true),
      new TensorSpec("c", DType.FLOAT32, Shape.of(1)),
      new TensorSpec("name", DType.STRING, Shape.scalar()),
      new TensorSpec("d", DType.FLOAT32, Shape.scalar()));

  private static Example wordsRow(int r) {
    Example.Builder b = Example.builder(r)
        .put("a", Tensor.scalar(r * 0.5f))
        .put("id", Tensor.scalar((long) r << 33))
        .put("c", Tensor.of(r + 0.25f))
        .put("name", Tensor.ofString("n" + r))
        .put("d", Tensor.scalar(-r * 1.5f));
    if (r % 7 == 3) {
      b.putNull("b");
    } else {
      b.put("b", Tensor.wrap(DType.INT32, Shape.scalar(), Tensor.of(-r).data()));
    }
    return b.build();
  }

  @Test
  void pairedFieldsGatherLikeHeapOnesAcrossSeveralTargets() {
    int n = 2500;
    int[] rows = rows(n, 0);
    try (BatchBuilder b = BatchBuilder.create(WORDS, n, pool)) {
      for (int r = 0; r < n; r++) {
        b.append(wordsRow(r));
      }
      try (Batch pooled = b.build(); Batch heap = onHeap(pooled)) {
        List<BatchBuilder> fromPooled = new ArrayList<>();
        List<BatchBuilder> fromHeap = new ArrayList<>();
        try {
          for (int at = 0; at < n; at += 1024) {
            fromPooled.add(BatchBuilder.create(WORDS, Math.min(1024, n - at), pool));
            fromHeap.add(BatchBuilder.create(WORDS, Math.min(1024, n - at), pool));
          }
          BatchBuilder.appendRows(pooled, rows, 0, n, fromPooled);
          BatchBuilder.appendRows(heap, rows, 0, n, fromHeap);
          for (int t = 0, at = 0; t < fromPooled.size(); at += fromPooled.get(t).size(), t++) {
            try (Batch x = fromPooled.get(t).build(); Batch y = fromHeap.get(t).build()) {
              for (int i = 0; i < x.size(); i++) {
                assertThat(x.copyRow(i)).isEqualTo(y.copyRow(i)).isEqualTo(wordsRow(rows[at + i]));
              }
            }
          }
        } finally {
          fromPooled.forEach(BatchBuilder::close);
          fromHeap.forEach(BatchBuilder::close);
        }
      }
    }
  }

  @Test
  void gatheringNoRowsNeedsNoTargets() {
    try (BatchBuilder b = BatchBuilder.create(WORDS, 3, pool)) {
      for (int r = 0; r < 3; r++) {
        b.append(wordsRow(r));
      }
      try (Batch source = b.build()) {
        BatchBuilder.appendRows(source, new int[] {2, 1, 0}, 1, 0, List.of());
        assertThatThrownBy(() -> BatchBuilder.appendRows(source, new int[] {2, 1, 0}, 1, 1, List.of()))
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("room for 0");
      }
    }
  }

  @Test
  void heapSourcesGatherLikePooledOnes() {
    int n = 2600; // long enough for the gathers' warm-up read
    int[] rows = rows(n, 0);
    try (BatchBuilder b = BatchBuilder.create(BatchBuilderCopyTest.SCHEMA, n, pool)) {
      for (int r = 0; r < n; r++) {
        b.append(BatchBuilderCopyTest.row(r));
      }
      try (Batch pooled = b.build(); Batch heap = onHeap(pooled)) {
        assertThat(heap.column("x").values().data().isDirect()).isFalse();
        try (BatchBuilder fromPooled = BatchBuilder.create(pooled.schema(), n, pool);
            BatchBuilder fromHeap = BatchBuilder.create(pooled.schema(), n, pool)) {
          fromPooled.appendRows(pooled, rows, 0, n);
          fromHeap.appendRows(heap, rows, 0, n);
          try (Batch x = fromPooled.build(); Batch y = fromHeap.build()) {
            for (int i = 0; i < n; i++) {
              assertThat(y.index(i)).isEqualTo(x.index(i)).isEqualTo(1000 + rows[i]);
              assertThat(y.copyRow(i)).isEqualTo(x.copyRow(i)).isEqualTo(BatchBuilderCopyTest.row(rows[i]));
            }
          }
        }
      }
    }
  }
}
