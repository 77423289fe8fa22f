package dev.sluice.core.spi;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.Objects;

/**
 * The gather kernels of column memory, the one place where core copies rows between buffers:
 * {@code dst[at + i] = src[rows[from + i]]} for fixed-width rows (one or two columns at once), the
 * null rows among them, variable-length values with their offsets, and the range copies of
 * offsets and null flags. By address ({@link RawGather}) where the JVM and the buffers allow it;
 * elsewhere with byte-buffer view handles and bulk copies. Neither path calls a {@code ByteBuffer}
 * accessor per value: such a call is inlined only when its receiver type was profiled before the
 * optimizing compile, and left a call per value otherwise.
 *
 * <p>Checks, the same on both paths: the caller has checked every row against {@code rowsBelow}
 * (the rows of the source); each kernel checks once that the source buffers hold that many rows and
 * that the targets have room, and a variable-length value's range against its buffers before it is
 * copied. A bad row or range is an {@link IndexOutOfBoundsException} naming it, never a write
 * outside a buffer.
 */
final class RowGathers {
  private RowGathers() {}

  private static final VarHandle INT = MethodHandles.byteBufferViewVarHandle(int[].class, ByteOrder.LITTLE_ENDIAN);
  private static final VarHandle LONG = MethodHandles.byteBufferViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

  /** Gathers of at least this many rows warm their source first ({@link #warm}). */
  private static final int WARM_FROM = 2048;

  /** Where {@link #warm} leaves what it read, so that the reads are not optimized away. */
  private static volatile long warmed;

  // ------------------------------------------------------------------ fixed-width rows

  /**
   * {@code dst[at + i] = src[rows[from + i]]} for {@code i < count}, rows of {@code rowBytes}
   * bytes: 4- and 8-byte rows value by value (by the byte offsets of {@code raw} where given and
   * the buffers allow), wider rows one bulk copy each.
   *
   * @param raw the same rows for gathers by address, or null
   * @throws IndexOutOfBoundsException if {@code src} holds fewer than {@code rowsBelow} rows or
   *     {@code dst} has no room for rows {@code [at, at + count)}
   */
  static void fixed(ByteBuffer src, int rowBytes, int rowsBelow, int[] rows, int from, int count, ByteBuffer dst,
      int at, RawGather.Rows raw) {
    Objects.checkFromIndexSize(from, count, rows.length);
    Objects.checkFromIndexSize(0, (long) rowsBelow * rowBytes, src.limit());
    Objects.checkFromIndexSize((long) at * rowBytes, (long) count * rowBytes, dst.limit());
    if (rowBytes == 4 || rowBytes == 8) {
      RawGather.Offsets offsets = raw != null && RawGather.serves(src, dst) ? raw.offsets(rowBytes == 4 ? 2 : 3) : null;
      if (offsets != null) {
        RawGather.gather(src, offsets, from, count, dst, at);
      } else if (rowBytes == 4) {
        gather4(src, rows, from, count, dst, at);
      } else {
        gather8(src, rows, from, count, dst, at);
      }
    } else if (RawGather.serves(src, dst)) {
      RawGather.gatherRows(src, rowBytes, rowsBelow, rows, from, count, dst, at);
    } else {
      for (int i = 0; i < count; i++) {
        dst.put((at + i) * rowBytes, src, rows[from + i] * rowBytes, rowBytes);
      }
    }
  }

  /**
   * {@code dst[at + i] = src[offsets[from + i] .. + rowBytes)} for {@code i < count}: rows found by
   * byte offset, copied as bytes (4- and 8-byte rows value by value, wider rows one bulk copy each,
   * their first cache lines read first by address). The caller ({@link OffsetGather}) has checked
   * every offset's row against {@code src}, and that {@code dst} has room.
   */
  static void atOffsets(ByteBuffer src, int rowBytes, int[] offsets, int from, int count, ByteBuffer dst, int at) {
    if (RawGather.serves(src, dst)) {
      RawGather.gatherAt(src, rowBytes, offsets, from, count, dst, at);
    } else if (rowBytes == 8) {
      for (int i = 0; i < count; i++) {
        LONG.set(dst, (at + i) << 3, (long) LONG.get(src, offsets[from + i]));
      }
    } else if (rowBytes == 4) {
      for (int i = 0; i < count; i++) {
        INT.set(dst, (at + i) << 2, (int) INT.get(src, offsets[from + i]));
      }
    } else {
      for (int i = 0; i < count; i++) {
        dst.put((at + i) * rowBytes, src, offsets[from + i], rowBytes);
      }
    }
  }

  /**
   * Two columns of 4-byte rows in one pass by address ({@link RawGather#gather4(ByteBuffer, ByteBuffer,
   * RawGather.Offsets, int, int, ByteBuffer, ByteBuffer, int)}); returns false, having copied
   * nothing, where {@code raw} is null or a buffer cannot be gathered by address.
   */
  static boolean pair4(ByteBuffer srcA, ByteBuffer srcB, RawGather.Rows raw, int from, int count, ByteBuffer dstA,
      ByteBuffer dstB, int at) {
    RawGather.Offsets offsets = raw != null && RawGather.serves(srcA, srcB, dstA, dstB) ? raw.offsets(2) : null;
    if (offsets == null) {
      return false;
    }
    RawGather.gather4(srcA, srcB, offsets, from, count, dstA, dstB, at);
    return true;
  }

  /** {@code dst[at + i] = src[rows[from + i]]} for 4-byte values (a small method the JIT compiles on its own). */
  private static void gather4(ByteBuffer src, int[] rows, int from, int count, ByteBuffer dst, int at) {
    warm(src, count);
    for (int i = 0; i < count; i++) {
      INT.set(dst, (at + i) << 2, (int) INT.get(src, rows[from + i] << 2));
    }
  }

  /** {@code dst[at + i] = src[rows[from + i]]} for 8-byte values. */
  private static void gather8(ByteBuffer src, int[] rows, int from, int count, ByteBuffer dst, int at) {
    warm(src, count);
    for (int i = 0; i < count; i++) {
      LONG.set(dst, (at + i) << 3, (long) LONG.get(src, rows[from + i] << 3));
    }
  }

  /**
   * Before a long gather, reads one value per cache line of {@code src} in order: the hardware then
   * streams the column into the cache, and the gather's reads in random order hit it instead of
   * each waiting for memory.
   */
  private static void warm(ByteBuffer src, int count) {
    if (count < WARM_FROM) {
      return;
    }
    long sum = 0;
    for (int i = 0, last = src.limit() - 8; i <= last; i += 64) {
      sum += (long) LONG.get(src, i);
    }
    warmed = sum;
  }

  // ------------------------------------------------------------------ null flags

  /**
   * The positions {@code i - from}, for {@code i} in {@code [from, from + count)}, whose row
   * {@code rows[i]} is null (flag byte 0) in {@code flags}, in order.
   *
   * @throws IndexOutOfBoundsException if {@code flags} holds fewer than {@code rowsBelow} flags, or a
   *     row is not below {@code rowsBelow}
   */
  static int[] nullRows(ByteBuffer flags, int rowsBelow, int[] rows, int from, int count) {
    Objects.checkFromIndexSize(from, count, rows.length);
    Objects.checkFromIndexSize(0, rowsBelow, flags.limit());
    if (RawGather.serves(flags)) {
      return RawGather.nullRows(flags, rowsBelow, rows, from, count);
    }
    byte[] f = flagBytes(flags, 0, rowsBelow);
    int base = flags.hasArray() ? flags.arrayOffset() : 0;
    int[] found = new int[count];
    int n = 0;
    for (int i = 0; i < count; i++) {
      int r = rows[from + i];
      if (r < 0 || r >= rowsBelow) {
        throw new IndexOutOfBoundsException("row " + r + " out of bounds for " + rowsBelow + " rows");
      }
      found[n] = i;
      n += ((f[base + r] & 0xFF) - 1) >>> 31; // 1 for a zero byte, else 0
    }
    return n == count ? found : Arrays.copyOf(found, n);
  }

  /**
   * The positions {@code i} in {@code [0, count)} whose flag {@code from + i} in {@code flags} is
   * 0 (null), in order: the null items of a range copy.
   *
   * @throws IndexOutOfBoundsException if {@code flags} does not hold flags {@code [from, from + count)}
   */
  static int[] nullsIn(ByteBuffer flags, int from, int count) {
    Objects.checkFromIndexSize(from, count, flags.limit());
    byte[] f = flagBytes(flags, from, count);
    int base = flags.hasArray() ? flags.arrayOffset() + from : 0;
    int[] found = new int[count];
    int n = 0;
    for (int i = 0; i < count; i++) {
      found[n] = i;
      n += ((f[base + i] & 0xFF) - 1) >>> 31;
    }
    return n == count ? found : Arrays.copyOf(found, n);
  }

  /** The array behind a heap buffer, else a copy of its bytes {@code [from, from + count)}. */
  private static byte[] flagBytes(ByteBuffer flags, int from, int count) {
    if (flags.hasArray()) {
      return flags.array();
    }
    byte[] copy = new byte[count];
    flags.get(from, copy);
    return copy;
  }

  /** Sets bytes {@code [from, to)} of {@code b} to {@code value}, eight at a time. */
  static void fill(ByteBuffer b, int from, int to, byte value) {
    Objects.checkFromToIndex(from, to, b.limit());
    long word = (value & 0xFFL) * 0x0101010101010101L;
    int i = from;
    for (; i + 8 <= to; i += 8) {
      LONG.set(b, i, word);
    }
    for (; i < to; i++) {
      b.put(i, value);
    }
  }

  // ------------------------------------------------------------------ offsets and variable-length values

  /**
   * Offsets {@code so[a .. a + n)} plus {@code base} written to {@code dst} from entry {@code c}
   * on: a range of rows' offsets rebased onto the items a column already holds.
   *
   * @throws IndexOutOfBoundsException if a buffer does not hold those entries
   */
  static void rebase(ByteBuffer so, long a, long n, long base, ByteBuffer dst, long c) {
    Objects.checkFromIndexSize(a * 8, n * 8, so.limit());
    Objects.checkFromIndexSize(c * 8, n * 8, dst.limit());
    int s = (int) (a * 8);
    int d = (int) (c * 8);
    for (int i = 0; i < n; i++) {
      LONG.set(dst, d + (i << 3), base + (long) LONG.get(so, s + (i << 3)));
    }
  }

  /**
   * The items (bytes, or fixed-width list items) of rows {@code rows[from .. from + count)} under
   * offsets {@code so} ({@code so[r + 1] - so[r]} summed).
   *
   * @throws IndexOutOfBoundsException if {@code so} holds fewer than {@code rowsBelow + 1} offsets
   */
  static long unitsOf(ByteBuffer so, int rowsBelow, int[] rows, int from, int count) {
    Objects.checkFromIndexSize(from, count, rows.length);
    Objects.checkFromIndexSize(0, ((long) rowsBelow + 1) * 8, so.limit());
    if (RawGather.serves(so)) {
      return RawGather.unitsOf(so, rowsBelow, rows, from, count);
    }
    long units = 0;
    for (int i = 0; i < count; i++) {
      int r = rows[from + i] << 3;
      units += (long) LONG.get(so, r + 8) - (long) LONG.get(so, r);
    }
    return units;
  }

  /**
   * The variable-length values of rows {@code rows[from .. from + count)}: each row's units
   * {@code [so[r], so[r + 1])} of {@code unit} bytes in {@code data} appended to {@code dst} from
   * byte {@code end} on, and each row's start (in units of {@code per} bytes) written to offsets
   * {@code off} from entry {@code c} on; returns the new end.
   *
   * @throws IndexOutOfBoundsException if {@code so} holds fewer than {@code rowsBelow + 1} offsets,
   *     {@code off} has no room, or a row's range falls outside {@code data} or {@code dst} (naming
   *     the row)
   */
  static long values(ByteBuffer so, ByteBuffer data, int unit, int per, int rowsBelow, int[] rows, int from,
      int count, ByteBuffer dst, ByteBuffer off, long c, long end) {
    if (RawGather.serves(so, data, dst, off)) {
      return RawGather.gatherValues(so, data, unit, per, rowsBelow, rows, from, count, dst, off, c, end);
    }
    Objects.checkFromIndexSize(from, count, rows.length);
    Objects.checkFromIndexSize(0, ((long) rowsBelow + 1) * 8, so.limit());
    Objects.checkFromIndexSize(c * 8, (long) count * 8, off.limit());
    Objects.checkIndex(end, (long) dst.limit() + 1);
    long units = data.limit() / unit;
    long room = dst.limit();
    for (int i = 0; i < count; i++) {
      int r = rows[from + i] << 3;
      long a = (long) LONG.get(so, r);
      long b = (long) LONG.get(so, r + 8);
      long bytes = (b - a) * unit;
      if (a < 0 || b < a || b > units || end + bytes > room) {
        throw new IndexOutOfBoundsException("row " + rows[from + i] + ": units " + a + " to " + b + " of " + units
            + ", to bytes " + end + " to " + (end + bytes) + " of " + room);
      }
      LONG.set(off, (int) ((c + i) << 3), per == 1 ? end : end / per);
      dst.put((int) end, data, (int) (a * unit), (int) bytes);
      end += bytes;
    }
    return end;
  }
}
