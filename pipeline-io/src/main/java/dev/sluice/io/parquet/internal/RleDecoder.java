package dev.sluice.io.parquet.internal;

import java.nio.ByteBuffer;

/**
 * Parquet's RLE / bit-packed hybrid decoder (definition and repetition levels, dictionary
 * indices), reading straight from a page buffer into an {@code int[]}.
 */
final class RleDecoder {
  private final ByteBuffer in; // absolute reads
  private int pos;
  private final int end;
  private final int bitWidth;
  private final int byteWidth;
  private final int mask;
  // current run
  private int runLeft;
  private boolean packed;
  private int rleValue;
  private int bitPos; // for packed runs: absolute bit position in the buffer

  /** Decodes {@code [from, to)} of {@code in} with the given bit width (0..32). */
  RleDecoder(ByteBuffer in, int from, int to, int bitWidth) {
    if (bitWidth < 0 || bitWidth > 32) {
      throw new IllegalArgumentException("bit width must be in [0, 32] but it was " + bitWidth);
    }
    this.in = in;
    this.pos = from;
    this.end = to;
    this.bitWidth = bitWidth;
    this.byteWidth = (bitWidth + 7) / 8;
    this.mask = bitWidth == 32 ? -1 : (1 << bitWidth) - 1;
  }

  private void nextRun() {
    if (pos >= end) {
      throw new IllegalStateException("RLE/bit-packed data ends early at byte " + pos);
    }
    int header = readVarInt();
    if ((header & 1) == 0) {
      packed = false;
      runLeft = header >>> 1;
      int v = 0;
      for (int i = 0; i < byteWidth; i++) {
        v |= (in.get(pos + i) & 0xFF) << (8 * i);
      }
      pos += byteWidth;
      rleValue = v;
    } else {
      packed = true;
      int groups = header >>> 1;
      runLeft = groups * 8;
      bitPos = pos * 8;
      long bytes = (long) groups * bitWidth;
      pos += (int) Math.min(bytes, end - pos);
    }
    if (runLeft < 0) {
      throw new IllegalStateException("corrupt RLE/bit-packed run header " + Integer.toHexString(header));
    }
  }

  private int readVarInt() {
    int v = 0;
    int shift = 0;
    while (true) {
      if (pos >= end) {
        throw new IllegalStateException("RLE/bit-packed header runs past the end of the data");
      }
      int b = in.get(pos++) & 0xFF;
      v |= (b & 0x7F) << shift;
      if ((b & 0x80) == 0) {
        return v;
      }
      shift += 7;
      if (shift > 28) {
        throw new IllegalStateException("corrupt varint in RLE/bit-packed data");
      }
    }
  }

  /** Reads {@code n} values into {@code out[off..off+n)}. */
  void read(int[] out, int off, int n) {
    if (bitWidth == 0) {
      java.util.Arrays.fill(out, off, off + n, 0);
      return;
    }
    while (n > 0) {
      if (runLeft == 0) {
        nextRun();
        continue;
      }
      int k = Math.min(n, runLeft);
      if (!packed) {
        java.util.Arrays.fill(out, off, off + k, rleValue);
      } else {
        unpack(out, off, k);
      }
      off += k;
      n -= k;
      runLeft -= k;
    }
  }

  private void unpack(int[] out, int off, int k) {
    int bp = bitPos;
    int i = 0;
    // whole groups of 8 values: bitWidth bytes hold them, read as one little-endian word
    if (bitWidth <= 8 && (bp & 7) == 0) {
      int groupsEnd = k & ~7;
      int bw = bitWidth;
      while (i < groupsEnd) {
        int byteIndex = bp >>> 3;
        long word = 0;
        if (byteIndex + 8 <= end) {
          word = in.getLong(byteIndex);
          if (in.order() != java.nio.ByteOrder.LITTLE_ENDIAN) {
            word = Long.reverseBytes(word);
          }
        } else {
          for (int b = 0; b < bw; b++) {
            if (byteIndex + b < end) {
              word |= (long) (in.get(byteIndex + b) & 0xFF) << (8 * b);
            }
          }
        }
        int o = off + i;
        for (int v = 0; v < 8; v++) {
          out[o + v] = (int) (word >>> (v * bw)) & mask;
        }
        bp += 8 * bw;
        i += 8;
      }
    }
    int limit = end;
    for (; i < k; i++) {
      int byteIndex = bp >>> 3;
      int shift = bp & 7;
      long word = 0;
      int need = (shift + bitWidth + 7) >>> 3;
      for (int b = 0; b < need; b++) {
        int idx = byteIndex + b;
        if (idx < limit) {
          word |= (long) (in.get(idx) & 0xFF) << (8 * b);
        }
      }
      out[off + i] = (int) (word >>> shift) & mask;
      bp += bitWidth;
    }
    bitPos = bp;
  }

  /**
   * Moves past the next {@code n} values without decoding them: the part of an RLE run in one step,
   * bit-packed values by moving the bit position.
   */
  void skip(int n) {
    if (bitWidth == 0) {
      return;
    }
    while (n > 0) {
      if (runLeft == 0) {
        nextRun();
        continue;
      }
      int k = Math.min(n, runLeft);
      if (packed) {
        bitPos = (int) Math.min(bitPos + (long) k * bitWidth, 8L * end);
      }
      runLeft -= k;
      n -= k;
    }
  }

  /** True when the next {@code n} values are one RLE run of {@code value} (nothing is consumed from the caller's view). */
  boolean startsWithRunOf(int n, int value) {
    if (n == 0) {
      return true;
    }
    if (bitWidth == 0) {
      return value == 0;
    }
    nextRun();
    return !packed && runLeft >= n && rleValue == value;
  }

  /**
   * True when the next {@code n} repetition levels are whole lists of exactly {@code len}
   * elements: 0 followed by {@code len - 1} ones, again and again. Consumes the values.
   */
  boolean isPlainRows(int n, int len) {
    int j = 0;
    int left = n;
    while (left > 0) {
      if (runLeft == 0) {
        nextRun();
        continue;
      }
      int k = Math.min(left, runLeft);
      if (!packed) {
        if (rleValue == 1) {
          if (j == 0 || j + k > len) {
            return false;
          }
          j = (j + k) % len;
        } else if (rleValue == 0) {
          if (j != 0 || (k > 1 && len != 1)) {
            return false;
          }
          j = len == 1 ? 0 : 1;
        } else {
          return false;
        }
      } else {
        int i = 0;
        // bit width 1, byte-aligned: a whole byte of 8 levels is 0xFE at a row start, 0xFF inside a row
        if (bitWidth == 1) {
          while (i + 8 <= k && (bitPos & 7) == 0 && j + 8 <= len) {
            int b = in.get(bitPos >>> 3) & 0xFF;
            if (b != (j == 0 ? 0xFE : 0xFF)) {
              return false;
            }
            bitPos += 8;
            i += 8;
            j = j + 8 == len ? 0 : j + 8;
          }
        }
        for (; i < k; i++) {
          int v = packedOne();
          if (v != (j == 0 ? 0 : 1)) {
            return false;
          }
          j = j + 1 == len ? 0 : j + 1;
        }
      }
      runLeft -= k;
      left -= k;
    }
    return j == 0;
  }

  private int packedOne() {
    int byteIndex = bitPos >>> 3;
    int shift = bitPos & 7;
    long word = 0;
    int need = (shift + bitWidth + 7) >>> 3;
    for (int b = 0; b < need; b++) {
      int idx = byteIndex + b;
      if (idx < end) {
        word |= (long) (in.get(idx) & 0xFF) << (8 * b);
      }
    }
    bitPos += bitWidth;
    return (int) (word >>> shift) & mask;
  }

  /** One value. */
  int next() {
    if (bitWidth == 0) {
      return 0;
    }
    while (runLeft == 0) {
      nextRun();
    }
    runLeft--;
    if (!packed) {
      return rleValue;
    }
    int byteIndex = bitPos >>> 3;
    int shift = bitPos & 7;
    long word = 0;
    int need = (shift + bitWidth + 7) >>> 3;
    for (int b = 0; b < need; b++) {
      int idx = byteIndex + b;
      if (idx < end) {
        word |= (long) (in.get(idx) & 0xFF) << (8 * b);
      }
    }
    bitPos += bitWidth;
    return (int) (word >>> shift) & mask;
  }
}
