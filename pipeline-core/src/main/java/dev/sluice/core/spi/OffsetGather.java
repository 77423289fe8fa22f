package dev.sluice.core.spi;

import dev.sluice.core.Example;
import java.nio.ByteBuffer;
import java.util.Objects;

/**
 * Copies rows found by byte offset in one source buffer to consecutive rows of a destination
 * buffer: {@code dst[at + i] = src[offsets[from + i] .. offsets[from + i] + rowBytes)} for
 * {@code i < count}. This is the entry point for source authors (a format reader in another module)
 * into core's gather kernels, the same ones {@link BatchBuilder} copies columns with: by address
 * where the JVM allows it and both buffers are direct, elsewhere through byte-buffer view handles
 * and bulk copies, with the same bytes either way. No {@code ByteBuffer} accessor is called per
 * value.
 *
 * <p>The bytes are copied as they are, whatever the buffers' byte orders. The offsets need no
 * alignment. Every offset is checked against {@code src} once before any byte is copied, so a bad
 * offset is an {@link IndexOutOfBoundsException} and never a read outside the buffer.
 *
 * <p>Example: the 8-byte values of rows 7, 2 and 5 of a column that starts at byte 4096 of a mapped
 * file, into rows 0 to 2 of a batch's column:
 * <pre>{@code
 * int[] at = {4096 + 7 * 8, 4096 + 2 * 8, 4096 + 5 * 8};
 * OffsetGather.copy(file, 8, at, 0, 3, builder.fixedColumn(f), 0);
 * }</pre>
 */
public final class OffsetGather {
  private OffsetGather() {}

  /**
   * Copies {@code count} rows of {@code rowBytes} bytes, row {@code i} from byte
   * {@code offsets[from + i]} of {@code src}, to rows {@code [at, at + count)} of {@code dst}
   * (byte {@code (at + i) * rowBytes} on). Positions and limits of the buffers are not changed;
   * offsets and rows are absolute, from index 0.
   *
   * @param src the buffer the rows are read from
   * @param rowBytes the bytes of one row, at least 0
   * @param offsets byte offsets of the rows in {@code src}
   * @param from the first entry of {@code offsets} used
   * @param count the number of rows copied, at least 0
   * @param dst the buffer the rows are written to
   * @param at the first row of {@code dst} written
   * @throws IllegalArgumentException if {@code rowBytes} is negative
   * @throws IndexOutOfBoundsException if {@code [from, from + count)} is not within {@code offsets},
   *     an offset's row does not lie within {@code src}'s limit, or {@code dst} has no room for rows
   *     {@code [at, at + count)}
   */
  public static void copy(ByteBuffer src, int rowBytes, int[] offsets, int from, int count, ByteBuffer dst, int at) {
    Objects.requireNonNull(src, "src");
    Objects.requireNonNull(dst, "dst");
    if (rowBytes < 0) {
      throw new IllegalArgumentException("rowBytes >= 0 required but it was " + rowBytes);
    }
    Objects.checkFromIndexSize(from, count, offsets.length);
    Objects.checkFromIndexSize((long) at * rowBytes, (long) count * rowBytes, dst.limit());
    if (count == 0 || rowBytes == 0) {
      return;
    }
    int min = Integer.MAX_VALUE;
    int max = Integer.MIN_VALUE;
    for (int i = from; i < from + count; i++) {
      min = Math.min(min, offsets[i]);
      max = Math.max(max, offsets[i]);
    }
    if (min < 0 || (long) max + rowBytes > src.limit()) {
      throw new IndexOutOfBoundsException("row offsets " + min + " to " + max + " of " + rowBytes + "-byte rows"
          + " out of bounds for a buffer of " + src.limit() + " bytes");
    }
    RowGathers.atOffsets(src, rowBytes, offsets, from, count, dst, at);
  }
}
