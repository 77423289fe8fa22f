package dev.sluice.core.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * {@link RowGathers}, the gather kernels, on heap buffers (never by address: the view-handle path)
 * and on direct ones, against plain {@code ByteBuffer} loops written out here; and their checks,
 * which are the same on both paths.
 */
class RowGathersTest {
  private final SplittableRandom random = new SplittableRandom(7);

  private static ByteBuffer buffer(boolean direct, int bytes) {
    return (direct ? ByteBuffer.allocateDirect(bytes) : ByteBuffer.allocate(bytes)).order(ByteOrder.LITTLE_ENDIAN);
  }

  private ByteBuffer randomBytes(boolean direct, int bytes) {
    ByteBuffer b = buffer(direct, bytes);
    for (int i = 0; i < bytes; i++) {
      b.put(i, (byte) random.nextInt(256));
    }
    return b;
  }

  private int[] rows(int n, int pad) {
    int[] p = new int[pad + n];
    for (int i = 0; i < n; i++) {
      p[pad + i] = random.nextInt(n);
    }
    return p;
  }

  @Test
  void fixedWidthGathersMatchTheBufferLoopsOnEitherPath() {
    int n = 2500; // long enough for the warm-up read
    int pad = 4;
    for (boolean direct : new boolean[] {false, true}) {
      for (int width : new int[] {1, 2, 4, 8, 12}) {
        int[] rows = rows(n, pad);
        ByteBuffer src = randomBytes(direct, n * width);
        int at = 3;
        ByteBuffer dst = randomBytes(direct, (at + n) * width);
        ByteBuffer expected = buffer(false, dst.capacity()).put(0, dst, 0, dst.capacity());
        for (int i = 0; i < n; i++) {
          expected.put((at + i) * width, src, rows[pad + i] * width, width);
        }
        RawGather.Rows raw = RawGather.ENABLED ? new RawGather.Rows(rows, pad, n, n) : null;
        RowGathers.fixed(src, width, n, rows, pad, n, dst, at, raw);
        assertThat(dst.mismatch(expected)).as("direct %s, width %d", direct, width).isEqualTo(-1);
      }
    }
  }

  @Test
  void aSourceWithFewerRowsThanClaimedIsRefusedBeforeAnyCopy() {
    for (boolean direct : new boolean[] {false, true}) {
      for (int width : new int[] {4, 8, 12}) {
        ByteBuffer dst = buffer(direct, 4 * width);
        assertThatThrownBy(() -> RowGathers.fixed(buffer(direct, 3 * width), width, 4, new int[] {0, 3, 1, 2}, 0, 4,
            dst, 0, null)).isInstanceOf(IndexOutOfBoundsException.class);
        assertThatThrownBy(() -> RowGathers.fixed(buffer(direct, 4 * width), width, 4, new int[] {0, 3, 1, 2}, 0, 4,
            dst, 1, null)).isInstanceOf(IndexOutOfBoundsException.class); // no room for the last row
        assertThat(dst.mismatch(buffer(false, 4 * width))).isEqualTo(-1); // nothing written
      }
    }
  }

  @Test
  void variableLengthGathersMatchTheBufferLoopsOnEitherPath() {
    int n = 300;
    int pad = 2;
    for (boolean direct : new boolean[] {false, true}) {
      for (int unit : new int[] {1, 4}) {
        ByteBuffer so = buffer(direct, (n + 1) * 8);
        long units = 0;
        for (int r = 0; r < n; r++) {
          so.putLong(r * 8, units);
          units += random.nextInt(30);
        }
        so.putLong(n * 8, units);
        ByteBuffer data = randomBytes(direct, (int) units * unit);
        int[] rows = rows(n, pad);
        long c = 2;
        long start = 5;
        ByteBuffer dst = buffer(direct, (int) (start + (long) n * 30 * unit));
        ByteBuffer off = buffer(direct, (int) ((c + n) * 8));
        ByteBuffer wantDst = buffer(false, dst.capacity());
        ByteBuffer wantOff = buffer(false, off.capacity());
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
        assertThat(RowGathers.unitsOf(so, n, rows, pad, n)).isEqualTo(total);
        assertThat(RowGathers.values(so, data, unit, unit, n, rows, pad, n, dst, off, c, start)).isEqualTo(end);
        assertThat(dst.slice((int) start, (int) (end - start)).mismatch(wantDst.slice((int) start, (int) (end - start))))
            .isEqualTo(-1);
        assertThat(off.mismatch(wantOff)).isEqualTo(-1);
      }
    }
  }

  @Test
  void anOffsetOutsideTheValuesIsRefusedNamingTheRowOnEitherPath() {
    for (boolean direct : new boolean[] {false, true}) {
      ByteBuffer so = buffer(direct, 3 * 8);
      so.putLong(0, 0).putLong(8, 4).putLong(16, 90); // row 1 claims bytes 4 to 90 of 10
      ByteBuffer dst = buffer(direct, 100);
      ByteBuffer off = buffer(direct, 16);
      assertThatThrownBy(() -> RowGathers.values(so, buffer(direct, 10), 1, 1, 2, new int[] {1, 0}, 0, 2, dst, off, 0,
          0)).isInstanceOf(IndexOutOfBoundsException.class).hasMessageContaining("row 1").hasMessageContaining("of 10");
      so.putLong(8, 6).putLong(16, 2); // row 1 ends before it starts
      assertThatThrownBy(() -> RowGathers.values(so, buffer(direct, 10), 1, 1, 2, new int[] {1}, 0, 1, dst, off, 0, 0))
          .isInstanceOf(IndexOutOfBoundsException.class).hasMessageContaining("row 1");
      so.putLong(8, 4).putLong(16, 8);
      assertThatThrownBy(() -> RowGathers.values(so, buffer(direct, 10), 1, 1, 2, new int[] {1, 0}, 0, 2,
          buffer(direct, 3), off, 0, 0)).isInstanceOf(IndexOutOfBoundsException.class).hasMessageContaining("row 1");
      assertThatThrownBy(() -> RowGathers.unitsOf(buffer(direct, 16), 2, new int[] {1}, 0, 1))
          .isInstanceOf(IndexOutOfBoundsException.class); // 3 offsets needed
    }
  }

  @Test
  void nullRowsAndNullRangesAreFoundAtTheirPositionsOnEitherPath() {
    int n = 700;
    for (boolean direct : new boolean[] {false, true}) {
      ByteBuffer flags = buffer(direct, n + 5);
      for (int r = 0; r < n + 5; r++) {
        flags.put(r, (byte) (random.nextInt(8) == 0 ? 0 : r % 3 == 0 ? 0xFF : 1)); // any non-zero byte is valid
      }
      int[] rows = rows(n, 3);
      List<Integer> expected = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        if (flags.get(rows[3 + i]) == 0) {
          expected.add(i);
        }
      }
      assertThat(RowGathers.nullRows(flags, n, rows, 3, n)).containsExactly(ints(expected));
      List<Integer> inRange = new ArrayList<>();
      for (int i = 0; i < 100; i++) {
        if (flags.get(40 + i) == 0) {
          inRange.add(i);
        }
      }
      assertThat(RowGathers.nullsIn(flags, 40, 100)).containsExactly(ints(inRange));
      ByteBuffer sliced = flags.slice(40, 100); // a heap slice has an array offset
      assertThat(RowGathers.nullsIn(sliced, 0, 100)).containsExactly(ints(inRange));
      assertThatThrownBy(() -> RowGathers.nullRows(flags, n + 6, rows, 3, n))
          .isInstanceOf(IndexOutOfBoundsException.class);
      assertThatThrownBy(() -> RowGathers.nullsIn(flags, n, 6)).isInstanceOf(IndexOutOfBoundsException.class);
    }
  }

  @Test
  void offsetsAreRebasedAndBytesFilled() {
    for (boolean direct : new boolean[] {false, true}) {
      ByteBuffer so = buffer(direct, 6 * 8);
      for (int i = 0; i < 6; i++) {
        so.putLong(i * 8, i * 10L);
      }
      ByteBuffer dst = buffer(direct, 8 * 8);
      RowGathers.rebase(so, 2, 3, 100, dst, 4);
      assertThat(dst.getLong(32)).isEqualTo(120);
      assertThat(dst.getLong(48)).isEqualTo(140);
      assertThat(dst.getLong(56)).isZero();
      assertThatThrownBy(() -> RowGathers.rebase(so, 4, 3, 0, dst, 0)).isInstanceOf(IndexOutOfBoundsException.class);
      ByteBuffer b = buffer(direct, 21);
      RowGathers.fill(b, 2, 19, (byte) 1);
      for (int i = 0; i < 21; i++) {
        assertThat(b.get(i)).as("byte %d", i).isEqualTo((byte) (i >= 2 && i < 19 ? 1 : 0));
      }
    }
  }

  private static int[] ints(List<Integer> list) {
    return list.stream().mapToInt(Integer::intValue).toArray();
  }
}
