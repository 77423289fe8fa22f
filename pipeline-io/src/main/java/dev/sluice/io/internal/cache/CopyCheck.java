package dev.sluice.io.internal.cache;

import dev.sluice.core.DatasetFormatException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;

/**
 * The format's own cheap check of a downloaded copy, run on the {@code .part} before it is
 * published and on a published copy when a process first maps it: a copy that fails it is never
 * served.
 */
@FunctionalInterface
public interface CopyCheck {
  /** No check beyond the size. */
  CopyCheck NONE = (resource, copy, size) -> { };

  /**
   * Checks the copy.
   *
   * @param resource the remote URI, for messages
   * @param copy the copy, open for reading
   * @param size its size in bytes (the remote file's)
   * @throws DatasetFormatException when the copy is not a whole file of the format
   */
  void check(String resource, FileChannel copy, long size) throws IOException;

  /**
   * Files that start and end with {@code magic}, with a little-endian int32 footer length just before
   * the trailing magic that must fit in the file (Parquet's {@code PAR1}, Arrow's {@code ARROW1}).
   *
   * @param headBytes bytes taken by the leading magic and its padding
   */
  static CopyCheck magicAndFooter(String format, String magic, int headBytes) {
    byte[] m = magic.getBytes(StandardCharsets.US_ASCII);
    return (resource, copy, size) -> {
      if (size < headBytes + 4L + m.length) {
        throw new DatasetFormatException(resource, null, "not a whole " + format + " file: " + size
            + " bytes is shorter than its magic bytes and footer length");
      }
      ByteBuffer head = read(copy, 0, m.length);
      ByteBuffer tail = read(copy, size - m.length - 4, m.length + 4).order(ByteOrder.LITTLE_ENDIAN);
      for (int i = 0; i < m.length; i++) {
        if (head.get(i) != m[i]) {
          throw new DatasetFormatException(resource, "byte 0", "not a whole " + format + " file: expected the magic "
              + magic + " at its start");
        }
        if (tail.get(4 + i) != m[i]) {
          throw new DatasetFormatException(resource, "byte " + (size - m.length), "not a whole " + format
              + " file: expected the magic " + magic + " at its end (truncated?)");
        }
      }
      long footer = tail.getInt(0) & 0xFFFFFFFFL;
      if (footer > size - headBytes - 4 - m.length) {
        throw new DatasetFormatException(resource, "byte " + (size - m.length - 4), "footer length " + footer
            + " does not fit in a " + size + "-byte " + format + " file");
      }
    };
  }

  /** {@code then} for a copy that starts with {@code magic}; no check beyond the size for another. */
  static CopyCheck whenStartsWith(String magic, CopyCheck then) {
    byte[] m = magic.getBytes(StandardCharsets.US_ASCII);
    return (resource, copy, size) -> {
      if (size >= m.length && java.util.Arrays.equals(read(copy, 0, m.length).array(), m)) {
        then.check(resource, copy, size);
      }
    };
  }

  private static ByteBuffer read(FileChannel ch, long at, int n) throws IOException {
    ByteBuffer b = ByteBuffer.allocate(n);
    while (b.hasRemaining()) {
      if (ch.read(b, at + b.position()) < 0) {
        throw new java.io.EOFException("end of file at byte " + (at + b.position()));
      }
    }
    return b.flip();
  }
}
