package dev.sluice.core;

import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * The row gathers of a batch column, {@code dst[at + i] = src[rows[from + i]]} for fixed-width
 * rows, variable-length values with their offsets, and the null rows among them: by address
 * ({@link RawGather}) when the buffers allow it, else with {@code ByteBuffer} absolute accesses.
 * Static and final, so each call site compiles to the kernel it uses.
 */
final class RowGathers {
  private RowGathers() {}

  /**
   * The positions {@code i - from}, for {@code i} in {@code [from, from + count)}, whose row
   * {@code rows[i]} is null in {@code flags}.
   */
  static int[] nullRows(ByteBuffer flags, int rowsBelow, int[] rows, int from, int count) {
    if (RawGather.serves(flags)) {
      return RawGather.nullRows(flags, rowsBelow, rows, from, count);
    }
    int[] found = new int[16];
    int n = 0;
    for (int i = 0; i < count; i++) {
      if (flags.get(rows[from + i]) == 0) {
        if (n == found.length) {
          found = Arrays.copyOf(found, 2 * n);
        }
        found[n++] = i;
      }
    }
    return Arrays.copyOf(found, n);
  }

  /** The items (bytes, or fixed-width list items) of rows {@code rows[from ..from + count)} under offsets {@code so}. */
  static long unitsOf(ByteBuffer so, int rowsBelow, int[] rows, int from, int count) {
    if (RawGather.serves(so)) {
      return RawGather.unitsOf(so, rowsBelow, rows, from, count);
    }
    long units = 0;
    for (int i = 0; i < count; i++) {
      int r = rows[from + i] << 3;
      units += so.getLong(r + 8) - so.getLong(r);
    }
    return units;
  }

  /**
   * The values of rows {@code rows[from .. from + count)} (offsets {@code so} in units of
   * {@code unit} bytes) appended to {@code dst} from byte {@code end} on, and their offsets (in units
   * of {@code per} bytes) written to {@code off} from entry {@code c} on; returns the new end.
   */
  static long gatherValues(ByteBuffer so, ByteBuffer data, int unit, int per, int[] rows, int from,
      int count, ByteBuffer dst, ByteBuffer off, long c, long end) {
    for (int i = 0; i < count; i++) {
      int r = rows[from + i];
      long a = so.getLong(r << 3);
      int bytes = (int) ((so.getLong((r << 3) + 8) - a) * unit);
      off.putLong((int) ((c + i) << 3), end / per);
      dst.put((int) end, data, (int) (a * unit), bytes);
      end += bytes;
    }
    return end;
  }

  /** {@code dst[at + i] = src[rows[from + i]]} for 4-byte values (a small method the JIT compiles on its own). */
  static void gather4(ByteBuffer src, int[] rows, int from, int count, ByteBuffer dst, int at) {
    warm(src, count);
    for (int i = 0; i < count; i++) {
      dst.putInt((at + i) << 2, src.getInt(rows[from + i] << 2));
    }
  }

  /** {@code dst[at + i] = src[rows[from + i]]} for 8-byte values. */
  static void gather8(ByteBuffer src, int[] rows, int from, int count, ByteBuffer dst, int at) {
    warm(src, count);
    for (int i = 0; i < count; i++) {
      dst.putLong((at + i) << 3, src.getLong(rows[from + i] << 3));
    }
  }

  /** {@code dst[at + i] = src[rows[from + i]]} for rows of {@code rowBytes} bytes. */
  static void gatherRows(ByteBuffer src, int rowBytes, int rowsBelow, int[] rows, int from, int count,
      ByteBuffer dst, int at) {
    if (RawGather.serves(src, dst)) {
      RawGather.gatherRows(src, rowBytes, rowsBelow, rows, from, count, dst, at);
      return;
    }
    for (int i = 0; i < count; i++) {
      dst.put((at + i) * rowBytes, src, rows[from + i] * rowBytes, rowBytes);
    }
  }

  /** Where {@link #warm} leaves what it read, so that the reads are not optimized away. */
  private static volatile long warmed;

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
      sum += src.getLong(i);
    }
    warmed = sum;
  }

  /** Gathers of at least this many rows warm their source first. */
  private static final int WARM_FROM = 2048;
}
