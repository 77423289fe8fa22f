package dev.sluice.core.internal.mapped;

import dev.sluice.core.DatasetFormatException;
import dev.sluice.core.UnsupportedFormatException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * A {@link FileInput} served by positioned reads: a subclass supplies only the file's name and
 * size and {@link #read(ByteBuffer, long)} (one positioned read), and this class does the rest
 * the same way for a local file and a remote one: range checks, {@link #readFully} through
 * {@link MappedReads#readFully(String, PositionedReader, long, ByteBuffer)} (the one place that
 * turns a short read into "truncated"), and views as heap copies.
 */
public abstract class PositionedInput implements FileInput, PositionedReader {
  private final String resource;
  private final long size;

  /**
   * An input over a file of {@code size} bytes.
   *
   * @param resource the file or URI, for messages
   * @param size bytes of the file when it was opened
   */
  protected PositionedInput(String resource, long size) {
    this.resource = resource;
    this.size = size;
  }

  @Override
  public final String resource() {
    return resource;
  }

  @Override
  public final long size() {
    return size;
  }

  /**
   * A heap copy of bytes {@code [offset, offset + length)}, little-endian and read-only.
   *
   * @throws DatasetFormatException when the range runs past the end of the file, or the file
   *     shrank under the read
   * @throws UnsupportedFormatException when the range is larger than 2 GiB
   */
  @Override
  public final ByteBuffer region(long offset, long length, String what) {
    LocalFile.checkRegion(resource, size, offset, length, what);
    ByteBuffer copy = ByteBuffer.allocate((int) length);
    readFully(offset, copy);
    return copy.flip().asReadOnlyBuffer().order(ByteOrder.LITTLE_ENDIAN);
  }

  @Override
  public final void readFully(long offset, ByteBuffer dst) {
    int n = dst.remaining();
    FileInput.checkRange(resource, size, offset, n, "a read of " + n + " bytes");
    MappedReads.readFully(resource, this, offset, dst);
  }

  /** One positioned read, as {@link PositionedReader#read} describes it. */
  @Override
  public abstract int read(ByteBuffer dst, long position) throws IOException;
}
