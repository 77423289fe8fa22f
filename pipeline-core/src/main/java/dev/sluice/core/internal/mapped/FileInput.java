package dev.sluice.core.internal.mapped;

import dev.sluice.core.DatasetClosedException;
import dev.sluice.core.DatasetFormatException;
import dev.sluice.core.DatasetIOException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * A file opened for reading, as the sources see it: its size when opened, little-endian
 * read-only views of byte ranges, and copies of byte ranges. {@link MappedFile} serves them from
 * a memory mapping (views share the mapping, no copy); {@link PositionedReadFile} serves them with
 * positioned reads (views are copies); a remote file (a Hadoop {@code FileSystem} URI, in
 * pipeline-io) serves them with positioned reads too: both are a {@link PositionedInput}. A source
 * written against this interface reads the same bytes from any of them.
 *
 * <p>Errors: a range outside the file is a {@link DatasetFormatException} naming the file, the
 * offset and the expected versus found size; a file that shrinks under a read is a
 * {@code DatasetFormatException} "changed while mapped" (mapping) or "truncated" (positioned
 * reads); a read after {@link #close()} is a {@link DatasetClosedException}.
 */
public interface FileInput extends AutoCloseable {
  /** The file, for messages. */
  String resource();

  /** Bytes of the file when it was opened. */
  long size();

  /**
   * A little-endian read-only view of bytes {@code [offset, offset + length)}.
   *
   * @param what what the range holds, for the message when it lies outside the file
   * @throws DatasetFormatException when the range runs past the end of the file
   */
  ByteBuffer region(long offset, long length, String what);

  /**
   * Copies {@code dst.remaining()} bytes at {@code offset} into {@code dst}, advancing its position.
   *
   * @throws DatasetFormatException when the range runs past the end of the file, or the file
   *     shrank under the read
   */
  void readFully(long offset, ByteBuffer dst);

  /** The whole file as one view when it is served from one mapping, else null. */
  default ByteBuffer whole() {
    return null;
  }

  /** Closes the file; idempotent. Views handed out stay valid. */
  @Override
  void close();

  /**
   * Opens {@code path} for reading.
   *
   * @throws DatasetIOException "no such file" or "cannot open"
   */
  static FileChannel openChannel(Path path) {
    String resource = path.toString();
    try {
      return FileChannel.open(path, StandardOpenOption.READ);
    } catch (NoSuchFileException e) {
      throw new DatasetIOException(resource, "no such file", e);
    } catch (IOException e) {
      throw new DatasetIOException(resource, "cannot open: " + e.getMessage(), e);
    }
  }

  /**
   * Checks that {@code [offset, offset + length)} lies inside a file of {@code size} bytes.
   *
   * @throws DatasetFormatException naming the range, what it holds and the file's size
   */
  static void checkRange(String resource, long size, long offset, long length, String what) {
    if (offset < 0 || length < 0 || offset > size || length > size - offset) {
      throw new DatasetFormatException(resource, "byte " + offset, what + " at [" + offset + ", " + (offset + length)
          + ") runs past the end of the file (" + size + " bytes): the file is truncated or damaged");
    }
  }
}
