package dev.sluice.core;

import java.lang.ref.Reference;
import java.lang.reflect.Field;
import java.nio.Buffer;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.Objects;

/**
 * The window shuffle's gathers ({@code dst[at + i] = src[rows[from + i]]}) between direct buffers,
 * by address. A {@code ByteBuffer}'s absolute {@code getInt} checks its index, its memory session
 * and its byte order on every call. Here each buffer's bounds are checked once per call, against
 * the row bound the caller has already checked every row against, and what is left per value is
 * one load and one store.
 *
 * <p>Address access uses {@code sun.misc.Unsafe}, as Arrow's and Netty's allocators do. JDK 24 and
 * later print a warning on its first use unless started with
 * {@code --sun-misc-unsafe-memory-access=allow}. So it is {@linkplain #ENABLED enabled} only where
 * the JVM allows it without a warning: that flag given (the {@code sluice} command gives it on JDK
 * 24+), or no mode given on JDK 17 to 23. Elsewhere {@link ColumnBuilder} keeps its {@code ByteBuffer} loops, with the same
 * results.
 */
final class RawGather {
  private RawGather() {}

  private static final sun.misc.Unsafe U;
  private static final long ADDRESS;

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
   * {@code dst[at + i] = src[rows[from + i]]} for {@code i < count}, values of {@code width} (4 or 8)
   * bytes. The caller has checked every row against {@code rowsBelow}; this checks that {@code src}
   * holds {@code rowsBelow} values and {@code dst} has room for {@code at + count}.
   *
   * @throws IndexOutOfBoundsException if either buffer is too small
   */
  static void gather(ByteBuffer src, int width, int rowsBelow, int[] rows, int from, int count, ByteBuffer dst, int at) {
    Objects.checkFromIndexSize(from, count, rows.length);
    Objects.checkFromIndexSize(0, (long) rowsBelow * width, src.limit());
    Objects.checkFromIndexSize((long) at * width, (long) count * width, dst.limit());
    long s = U.getLong(src, ADDRESS);
    long d = U.getLong(dst, ADDRESS) + (long) at * width;
    if (width == 4) {
      gather4(s, rows, from, count, d);
    } else if (width == 8) {
      gather8(s, rows, from, count, d);
    } else {
      throw new IllegalArgumentException("width " + width + ": expected 4 or 8");
    }
    Reference.reachabilityFence(src); // their memory stays until the last copy
    Reference.reachabilityFence(dst);
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

  private static void gather4(long src, int[] rows, int from, int count, long dst) {
    for (int i = 0; i < count; i++) {
      U.putInt(dst + ((long) i << 2), U.getInt(src + ((long) rows[from + i] << 2)));
    }
  }

  private static void gather8(long src, int[] rows, int from, int count, long dst) {
    for (int i = 0; i < count; i++) {
      U.putLong(dst + ((long) i << 3), U.getLong(src + ((long) rows[from + i] << 3)));
    }
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
      U.putLong(f + ((long) i << 3), end / per);
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
