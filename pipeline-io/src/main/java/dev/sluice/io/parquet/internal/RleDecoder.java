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
    int limit = end;
    for (int i = 0; i < k; i++) {
      int byteIndex = bp >>> 3;
      int shift = bp & 7;
      // gather up to 5 bytes
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
