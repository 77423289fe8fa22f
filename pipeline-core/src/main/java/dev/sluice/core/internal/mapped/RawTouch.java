package dev.sluice.core.internal.mapped;

import dev.sluice.core.internal.UnsafeAccess;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.lang.ref.Reference;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * The loads of {@link MappedRows}' touch pass: a few bytes of each of a row's first cache lines,
 * independent of each other so that the CPU keeps many misses in flight.
 *
 * <p>A direct buffer is read by address through {@code sun.misc.Unsafe} where the JVM allows that
 * without a warning (up to JDK 23 by default; from JDK 24 when started with
 * {@code --sun-misc-unsafe-memory-access=allow}, as the {@code sluice} command is). Elsewhere the loads
 * go through a byte-buffer view handle. Neither is a virtual call on the buffer: a
 * {@code ByteBuffer.get} in this loop is inlined only when its receiver type was profiled before the
 * optimizing compile, which depends on the compiler's queue at start-up, and when it is not, every
 * load becomes a call and the pass stops overlapping misses.
 */
final class RawTouch {
  private RawTouch() {}

  private static final VarHandle SHORT = MethodHandles.byteBufferViewVarHandle(short[].class, ByteOrder.nativeOrder());
  private static final sun.misc.Unsafe U;
  private static final long ADDRESS;

  static {
    U = UnsafeAccess.UNSAFE;
    ADDRESS = UnsafeAccess.BUFFER_ADDRESS;
  }

  /** Whether {@code chunk} is read by address. */
  static boolean raw(ByteBuffer chunk) {
    return U != null && chunk.isDirect();
  }

  /**
   * The sum of one byte of each of the first {@code lines} (1 to 4) cache lines at {@code pos} of a
   * buffer {@link #raw} serves; straight-line code. Lines that would not lie inside the buffer are
   * not touched at all (the copy that follows reports the bad row).
   */
  static int byAddress(ByteBuffer chunk, int pos, int lines) {
    if ((pos | (chunk.limit() - 1 - pos - ((lines - 1) << 6))) < 0) {
      return 0;
    }
    long a = U.getLong(chunk, ADDRESS) + pos;
    int sum = 0;
    switch (lines) {
      case 4:
        sum += U.getByte(a + 192);
        // fall through
      case 3:
        sum += U.getByte(a + 128);
        // fall through
      case 2:
        sum += U.getByte(a + 64);
        // fall through
      default:
        sum += U.getByte(a);
    }
    Reference.reachabilityFence(chunk);
    return sum;
  }

  /**
   * The sum of two bytes in each of the first {@code lines} (1 to 4) cache lines at {@code pos}, for
   * any buffer. A load that would end past the buffer is moved back to its last two bytes, and a
   * buffer of fewer than two bytes is not touched: the loads only warm the cache.
   */
  static int byHandle(ByteBuffer chunk, int pos, int lines) {
    int last = chunk.limit() - 2;
    if (last < 0) {
      return 0;
    }
    int sum = 0;
    switch (lines) {
      case 4:
        sum += (short) SHORT.get(chunk, Math.min(pos + 192, last));
        // fall through
      case 3:
        sum += (short) SHORT.get(chunk, Math.min(pos + 128, last));
        // fall through
      case 2:
        sum += (short) SHORT.get(chunk, Math.min(pos + 64, last));
        // fall through
      default:
        sum += (short) SHORT.get(chunk, Math.min(pos, last));
    }
    return sum;
  }
}
