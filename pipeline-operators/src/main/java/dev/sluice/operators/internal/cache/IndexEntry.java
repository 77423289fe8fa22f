package dev.sluice.operators.internal.cache;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * One value of the cache's index: a claim on a block (a process is filling it) or the block's
 * publication (where its segment is, how long, its checksum). Stored as {@value #BYTES} bytes,
 * little-endian.
 *
 * <pre>
 *  0  u8  state: 1 claimed, 2 published
 *  8  i64 owner pid (claim) / publisher pid
 * 16  i64 owner start time, epoch milliseconds (tells a reused pid from the owner)
 * 24  i64 time of the claim or publication, epoch milliseconds
 * 32  i64 rows of the block
 * 40  i64 bytes of the segment file
 * 48  i32 the segment's footer checksum
 * 56  i64 nonce: names the segment file, and tells one claim from another
 * </pre>
 *
 * @param state {@link #CLAIMED} or {@link #PUBLISHED}
 */
record IndexEntry(int state, long pid, long started, long time, long rows, long bytes, int checksum, long nonce) {
  static final int BYTES = 64;
  static final int CLAIMED = 1;
  static final int PUBLISHED = 2;

  boolean published() {
    return state == PUBLISHED;
  }

  boolean claimed() {
    return state == CLAIMED;
  }

  byte[] encode() {
    ByteBuffer b = ByteBuffer.allocate(BYTES).order(ByteOrder.LITTLE_ENDIAN);
    b.put(0, (byte) state).putLong(8, pid).putLong(16, started).putLong(24, time).putLong(32, rows)
        .putLong(40, bytes).putInt(48, checksum).putLong(56, nonce);
    return b.array();
  }

  /** The entry in {@code value}, or null for null or a value of another shape. */
  static IndexEntry decode(byte[] value) {
    if (value == null || value.length != BYTES) {
      return null;
    }
    ByteBuffer b = ByteBuffer.wrap(value).order(ByteOrder.LITTLE_ENDIAN);
    return new IndexEntry(b.get(0), b.getLong(8), b.getLong(16), b.getLong(24), b.getLong(32), b.getLong(40),
        b.getInt(48), b.getLong(56));
  }
}
