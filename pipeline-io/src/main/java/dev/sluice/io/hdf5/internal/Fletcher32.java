package dev.sluice.io.hdf5.internal;

import dev.sluice.core.DatasetFormatException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * HDF5's fletcher32 filter check: the stored chunk ends with a little-endian 32-bit Fletcher
 * checksum of the bytes before it, over big-endian 16-bit words (HDF5's
 * {@code H5_checksum_fletcher32}); files from HDF5 before 1.6.3 hold it with the bytes of each half
 * swapped, which HDF5 also accepts.
 */
final class Fletcher32 {
  /** The filter's id in an HDF5 filter pipeline. */
  static final int FILTER_ID = 3;

  private Fletcher32() {}

  /** HDF5's Fletcher-32 of {@code b[from, to)}. */
  static int checksum(ByteBuffer b, int from, int to) {
    long sum1 = 0;
    long sum2 = 0;
    int len = (to - from) / 2;
    int p = from;
    while (len > 0) {
      int t = Math.min(len, 360);
      len -= t;
      for (int k = 0; k < t; k++) {
        sum1 += ((b.get(p) & 0xff) << 8) | (b.get(p + 1) & 0xff);
        p += 2;
        sum2 += sum1;
      }
      sum1 = (sum1 & 0xffff) + (sum1 >>> 16);
      sum2 = (sum2 & 0xffff) + (sum2 >>> 16);
    }
    if (((to - from) & 1) != 0) {
      sum1 += (b.get(p) & 0xff) << 8;
      sum2 += sum1;
      sum1 = (sum1 & 0xffff) + (sum1 >>> 16);
      sum2 = (sum2 & 0xffff) + (sum2 >>> 16);
    }
    sum1 = (sum1 & 0xffff) + (sum1 >>> 16);
    sum2 = (sum2 & 0xffff) + (sum2 >>> 16);
    return (int) ((sum2 << 16) | sum1);
  }

  /**
   * Checks the stored chunk {@code raw} (its position to its limit).
   *
   * @throws DatasetFormatException naming {@code resource} and {@code where} on a mismatch
   */
  static void verify(ByteBuffer raw, String resource, String where) {
    int from = raw.position();
    int to = raw.limit();
    if (to - from < 4) {
      throw new DatasetFormatException(resource, where, "holds " + (to - from) + " bytes, too few for its"
          + " fletcher32 checksum");
    }
    int stored = raw.duplicate().order(ByteOrder.LITTLE_ENDIAN).getInt(to - 4);
    int sum = checksum(raw, from, to - 4);
    int reversed = ((sum & 0x00ff00ff) << 8) | ((sum >>> 8) & 0x00ff00ff);
    if (stored != sum && stored != reversed) {
      throw new DatasetFormatException(resource, where, String.format("fletcher32 checksum mismatch (expected"
          + " %08x, found %08x): the chunk is corrupted", stored, sum));
    }
  }
}
