package dev.sluice.core.spi;

import java.lang.ref.Reference;
import java.lang.reflect.Field;
import java.nio.Buffer;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.Objects;

/**
 * The address path of the gather kernels ({@link RowGathers}): {@code dst[at + i] =
 * src[rows[from + i]]} between direct buffers, by address. A {@code ByteBuffer}'s absolute
 * {@code getInt} checks its index, its memory session and its byte order on every call. Here each
 * buffer's bounds are checked once per call, against the row bound the caller has already checked
 * every row against, and what is left per value is one load and one store.
 *
 * <p>Address access uses {@code sun.misc.Unsafe}, as Arrow's and Netty's allocators do. JDK 24 and
 * later print a warning on its first use unless started with
 * {@code --sun-misc-unsafe-memory-access=allow}. So it is {@linkplain #ENABLED enabled} only where
 * the JVM allows it without a warning: that flag given (the {@code sluice} command gives it on JDK
 * 24+), or no mode given on JDK 17 to 23. Elsewhere {@link RowGathers} copies through view handles,
 * with the same results.
 */
final class RawGather {
  private RawGather() {}

  private static final sun.misc.Unsafe U;
  private static final long ADDRESS;

  /** Where {@link #gatherAt} leaves the bytes it touched, so that the reads are not optimized away. */
  private static volatile long touched;

  /** Whether address access is used: the JVM allows it without a warning and it could be set up. */
  static final boolean ENABLED;

  static {
    sun.misc.Unsafe u = null;
    long address = -1;
    if (allowed()) {
      try {
        Field f = sun.misc.Unsafe.class.getDeclaredField("theUnsafe");
        f.setAccessible(true);
        u = (sun.misc.Unsafe) f.get(null);
        address = u.objectFieldOffset(Buffer.class.getDeclaredField("address"));
      } catch (ReflectiveOperationException | RuntimeException e) {
        u = null; // not available in this JVM: the ByteBuffer loops serve
      }
    }
    U = u;
    ADDRESS = address;
    ENABLED = u != null && ByteOrder.nativeOrder() == ByteOrder.LITTLE_ENDIAN;
  }

  /**
   * Whether {@code sun.misc.Unsafe} memory access is allowed silently: as the JVM was told
   * (the launcher turns {@code --sun-misc-unsafe-memory-access=<mode>} into this property), or else by
   * the JDK's default, which allows it up to JDK 23 and warns from JDK 24.
   */
  private static boolean allowed() {
    String mode = System.getProperty("sun.misc.unsafe.memory.access");
    return mode != null ? mode.equals("allow") : Runtime.version().feature() < 24;
  }

  /** Whether this buffer can be read by address: enabled, and the buffer direct and little-endian. */
  static boolean serves(ByteBuffer a) {
    return ENABLED && direct(a);
  }

  /** Whether these buffers can be gathered by address: enabled, and all of them direct and little-endian. */
  static boolean serves(ByteBuffer a, ByteBuffer b) {
    return ENABLED && direct(a) && direct(b);
  }

  /** Whether these buffers can be gathered by address: enabled, and all of them direct and little-endian. */
  static boolean serves(ByteBuffer a, ByteBuffer b, ByteBuffer c, ByteBuffer d) {
    return serves(a, b) && direct(c) && direct(d);
  }

  private static boolean direct(ByteBuffer b) {
    return b.isDirect() && b.order() == ByteOrder.LITTLE_ENDIAN;
  }

  /**
   * The rows of one gather, {@code rows[from .. from + count)}, each below {@code rowsBelow}, with
   * their byte offsets per value width made on first use and then read by every column of that
   * width.
   */
  static final class Rows {
    private final int[] rows;
    private final int from;
    private final int count;
    private final int rowsBelow;
    private final Offsets[] byShift = new Offsets[4];

    Rows(int[] rows, int from, int count, int rowsBelow) {
      Objects.checkFromIndexSize(from, count, rows.length);
      this.rows = rows;
      this.from = from;
      this.count = count;
      this.rowsBelow = rowsBelow;
    }

    /**
     * The byte offsets for values of {@code 1 << shift} bytes; null when a row's offset could pass
     * {@code Integer.MAX_VALUE} (a buffer holds no more, so the caller's gather by row index serves).
     *
     * @throws IndexOutOfBoundsException if a row is negative or not below {@code rowsBelow}
     */
    Offsets offsets(int shift) {
      Objects.checkIndex(shift, byShift.length);
      if (byShift[shift] == null && rowsBelow <= Integer.MAX_VALUE >> shift) {
        int[] bytes = new int[count];
        for (int i = 0; i < count; i++) {
          int r = rows[from + i];
          if (r < 0 || r >= rowsBelow) {
            throw new IndexOutOfBoundsException("row " + r + " out of bounds for " + rowsBelow + " rows");
          }
          bytes[i] = r << shift;
        }
        byShift[shift] = new Offsets(bytes, from, shift, rowsBelow);
      }
      return byShift[shift];
    }
  }

  /**
   * The byte offsets {@code rows[i] << shift} of the rows {@code i} in {@code [base, base +
   * bytes.length)} of a gather, each row checked to be below {@code rowsBelow}, so that each value's
   * address is one add (from a row index it would take a sign extension and a shift per value and
   * column).
   */
  static final class Offsets {
    private final int[] bytes;
    private final int base;
    private final int shift;
    private final int rowsBelow;

    private Offsets(int[] bytes, int base, int shift, int rowsBelow) {
      this.bytes = bytes;
      this.base = base;
      this.shift = shift;
      this.rowsBelow = rowsBelow;
    }
  }

  /**
   * {@code dst[at + i] = src[rows[from + i]]} for {@code i < count}, by the offsets of those rows, values
   * of 4 or 8 bytes; checks that {@code src} holds the rows' values and {@code dst} has room for
   * {@code at + count}.
   *
   * @throws IndexOutOfBoundsException if either buffer is too small
   */
  static void gather(ByteBuffer src, Offsets rows, int from, int count, ByteBuffer dst, int at) {
    int shift = checkGather(rows, from, count);
    checkSource(src, rows);
    checkTarget(dst, shift, at, count);
    long s = U.getLong(src, ADDRESS);
    long d = U.getLong(dst, ADDRESS) + ((long) at << shift);
    if (shift == 2) {
      gather4(s, rows.bytes, from - rows.base, count, d);
    } else {
      gather8(s, rows.bytes, from - rows.base, count, d);
    }
    Reference.reachabilityFence(src);
    Reference.reachabilityFence(dst);
  }

  /**
   * Two columns of 4-byte values at once: {@code dstA[at + i] = srcA[rows[from + i]]} and the same
   * for {@code B}, for {@code i < count}, by the offsets of those rows. Each offset is read once for
   * both columns, so a value costs less than one column at a time would (more columns per pass run
   * out of registers).
   *
   * @throws IndexOutOfBoundsException if a buffer is too small
   */
  static void gather4(ByteBuffer srcA, ByteBuffer srcB, Offsets rows, int from, int count, ByteBuffer dstA,
      ByteBuffer dstB, int at) {
    if (checkGather(rows, from, count) != 2) {
      throw new IllegalArgumentException("offsets of " + (1 << rows.shift) + "-byte values for a 4-byte gather");
    }
    checkSource(srcA, rows);
    checkSource(srcB, rows);
    checkTarget(dstA, 2, at, count);
    checkTarget(dstB, 2, at, count);
    long a = U.getLong(srcA, ADDRESS);
    long b = U.getLong(srcB, ADDRESS);
    long d = (long) at << 2;
    gather4(a, b, rows.bytes, from - rows.base, count, U.getLong(dstA, ADDRESS) + d, U.getLong(dstB, ADDRESS) + d);
    Reference.reachabilityFence(srcA);
    Reference.reachabilityFence(srcB);
    Reference.reachabilityFence(dstA);
    Reference.reachabilityFence(dstB);
  }

  /** Checks that the offsets cover rows {@code [from, from + count)}; returns their shift (2 or 3). */
  private static int checkGather(Offsets rows, int from, int count) {
    Objects.checkFromIndexSize(from - rows.base, count, rows.bytes.length);
    if (rows.shift != 2 && rows.shift != 3) {
      throw new IllegalArgumentException("offsets of " + (1 << rows.shift) + "-byte values: expected 4 or 8");
    }
    return rows.shift;
  }

  private static void checkSource(ByteBuffer src, Offsets rows) {
    Objects.checkFromIndexSize(0, (long) rows.rowsBelow << rows.shift, src.limit());
  }

  private static void checkTarget(ByteBuffer dst, int shift, int at, int count) {
    Objects.checkFromIndexSize((long) at << shift, (long) count << shift, dst.limit());
  }

  private static void gather4(long src, int[] offsets, int from, int count, long dst) {
    for (int i = 0; i < count; i++) {
      U.putInt(dst + ((long) i << 2), U.getInt(src + offsets[from + i]));
    }
  }

  private static void gather8(long src, int[] offsets, int from, int count, long dst) {
    for (int i = 0; i < count; i++) {
      U.putLong(dst + ((long) i << 3), U.getLong(src + offsets[from + i]));
    }
  }

  private static void gather4(long a, long b, int[] offsets, int from, int count, long dstA, long dstB) {
    for (int i = 0; i < count; i++) {
      long o = offsets[from + i];
      long d = (long) i << 2;
      U.putInt(dstA + d, U.getInt(a + o));
      U.putInt(dstB + d, U.getInt(b + o));
    }
  }

  /**
   * {@code dst[at + i] = src[rows[from + i]]} for {@code i < count}, rows of {@code rowBytes} bytes
   * each copied whole (a fixed-shape tensor per row). The caller has checked every row against
   * {@code rowsBelow}; this checks that {@code src} holds {@code rowsBelow} rows and {@code dst} has
   * room for {@code at + count}.
   *
   * @throws IndexOutOfBoundsException if either buffer is too small
   */
  static void gatherRows(ByteBuffer src, int rowBytes, int rowsBelow, int[] rows, int from, int count, ByteBuffer dst,
      int at) {
    Objects.checkFromIndexSize(from, count, rows.length);
    Objects.checkFromIndexSize(0, (long) rowsBelow * rowBytes, src.limit());
    Objects.checkFromIndexSize((long) at * rowBytes, (long) count * rowBytes, dst.limit());
    long s = U.getLong(src, ADDRESS);
    long d = U.getLong(dst, ADDRESS) + (long) at * rowBytes;
    for (int i = 0; i < count; i++) {
      U.copyMemory(s + (long) rows[from + i] * rowBytes, d + (long) i * rowBytes, rowBytes);
    }
    Reference.reachabilityFence(src);
    Reference.reachabilityFence(dst);
  }

  /**
   * {@code dst[at + i] = src[offsets[from + i] .. + rowBytes)} for {@code i < count}, by address:
   * rows of 4 and 8 bytes one load and store each; wider rows with their first (up to four) cache
   * lines and last byte read first, so that the misses of all rows overlap, then one copy each. The
   * caller has checked every offset's row against {@code src} and {@code dst}'s room.
   */
  static void gatherAt(ByteBuffer src, int rowBytes, int[] offsets, int from, int count, ByteBuffer dst, int at) {
    long s = U.getLong(src, ADDRESS);
    long d = U.getLong(dst, ADDRESS) + (long) at * rowBytes;
    if (rowBytes == 8) {
      gather8(s, offsets, from, count, d);
    } else if (rowBytes == 4) {
      gather4(s, offsets, from, count, d);
    } else {
      int span = Math.min(rowBytes, 256);
      long sum = 0;
      for (int i = 0; i < count; i++) {
        long p = s + offsets[from + i];
        sum += U.getByte(p) + U.getByte(p + span - 1);
        if (span > 128) {
          sum += U.getByte(p + 64) + U.getByte(p + 128);
        } else if (span > 64) {
          sum += U.getByte(p + 64);
        }
      }
      touched = sum;
      for (int i = 0; i < count; i++) {
        U.copyMemory(s + offsets[from + i], d + (long) i * rowBytes, rowBytes);
      }
    }
    Reference.reachabilityFence(src);
    Reference.reachabilityFence(dst);
  }

  /**
   * The positions {@code i - from}, for {@code i} in {@code [from, from + count)}, whose row
   * {@code rows[i]} is null (flag byte 0) in {@code flags}, found without a branch per row (the
   * nulls of a shuffled window fall at random). The caller has checked every row against
   * {@code rowsBelow}; this checks that {@code flags} holds that many.
   */
  static int[] nullRows(ByteBuffer flags, int rowsBelow, int[] rows, int from, int count) {
    Objects.checkFromIndexSize(from, count, rows.length);
    Objects.checkFromIndexSize(0, rowsBelow, flags.limit());
    long f = U.getLong(flags, ADDRESS);
    int[] found = new int[count];
    int n = 0;
    for (int i = 0; i < count; i++) {
      found[n] = i;
      n += ((U.getByte(f + rows[from + i]) & 0xFF) - 1) >>> 31; // 1 for a zero byte, else 0
    }
    Reference.reachabilityFence(flags);
    return n == count ? found : Arrays.copyOf(found, n);
  }

  /**
   * The units of rows {@code rows[from .. from + count)} under offsets {@code so} ({@code so[r + 1]
   * - so[r]} summed). The caller has checked every row against {@code rowsBelow}; this checks that
   * {@code so} holds {@code rowsBelow + 1} offsets.
   */
  static long unitsOf(ByteBuffer so, int rowsBelow, int[] rows, int from, int count) {
    Objects.checkFromIndexSize(from, count, rows.length);
    Objects.checkFromIndexSize(0, ((long) rowsBelow + 1) * 8, so.limit());
    long o = U.getLong(so, ADDRESS);
    long units = 0;
    for (int i = 0; i < count; i++) {
      long r = o + ((long) rows[from + i] << 3);
      units += U.getLong(r + 8) - U.getLong(r);
    }
    Reference.reachabilityFence(so);
    return units;
  }

  /**
   * The variable-length values of rows {@code rows[from .. from + count)}: each row's units
   * {@code [so[r], so[r + 1])} of {@code unit} bytes in {@code data} appended to {@code dst} from
   * byte {@code end} on, and each row's start (in units of {@code per} bytes) written to offsets
   * {@code off} from entry {@code c} on; returns the new end. The caller has checked every row
   * against {@code rowsBelow}; this checks the buffers' sizes once, and each row's range against
   * {@code data} and {@code dst} before it copies it.
   *
   * @throws IndexOutOfBoundsException if an offset or a range falls outside its buffer
   */
  static long gatherValues(ByteBuffer so, ByteBuffer data, int unit, int per, int rowsBelow, int[] rows, int from,
      int count, ByteBuffer dst, ByteBuffer off, long c, long end) {
    Objects.checkFromIndexSize(from, count, rows.length);
    Objects.checkFromIndexSize(0, ((long) rowsBelow + 1) * 8, so.limit());
    Objects.checkFromIndexSize(c * 8, (long) count * 8, off.limit());
    Objects.checkIndex(end, (long) dst.limit() + 1);
    long o = U.getLong(so, ADDRESS);
    long v = U.getLong(data, ADDRESS);
    long d = U.getLong(dst, ADDRESS);
    long f = U.getLong(off, ADDRESS) + c * 8;
    long limit = data.limit();
    long units = limit / unit;
    long room = dst.limit();
    for (int i = 0; i < count; i++) {
      long r = (long) rows[from + i] << 3;
      long a = U.getLong(o + r);
      long b = U.getLong(o + r + 8);
      long bytes = (b - a) * unit;
      if (a < 0 || b < a || b > units || end + bytes > room) {
        throw new IndexOutOfBoundsException("row " + rows[from + i] + ": units " + a + " to " + b + " of " + units
            + ", to bytes " + end + " to " + (end + bytes) + " of " + room);
      }
      U.putLong(f + ((long) i << 3), per == 1 ? end : end / per); // a string's offsets are in bytes: no division
      long start = a * unit;
      if (bytes <= 16 && start + 16 <= limit && end + 16 <= room) {
        // a short value: two word moves instead of a call (the bytes past it are overwritten by the next value, or past the end)
        U.putLong(d + end, U.getLong(v + start));
        U.putLong(d + end + 8, U.getLong(v + start + 8));
      } else {
        U.copyMemory(v + start, d + end, bytes);
      }
      end += bytes;
    }
    Reference.reachabilityFence(so);
    Reference.reachabilityFence(data);
    Reference.reachabilityFence(dst);
    Reference.reachabilityFence(off);
    return end;
  }
}
