package dev.sluice.io.parquet.internal;

import java.io.EOFException;
import java.io.IOException;
import dev.sluice.core.DatasetException;
import dev.sluice.core.internal.mapped.FileInput;
import java.nio.ByteBuffer;
import org.apache.parquet.io.SeekableInputStream;

/**
 * The stream side of Sluice's local {@code InputFile}s: position, seeking and parquet-java's read
 * methods, all on top of one {@link #copy} that the file kind implements (from a mapping of the
 * whole file, or from a window mapped per read).
 */
abstract class CopyingInputStream extends SeekableInputStream {
  private final String file;
  protected final long length;
  protected long pos;

  CopyingInputStream(String file, long length) {
    this.file = file;
    this.length = length;
  }

  /**
   * A stream over {@code file} whose every read is one {@link FileInput#readFully} (a copy out of a
   * mapping, or a positioned read); a Sluice error of that read becomes an {@link IOException}
   * carrying it, as parquet-java's callers expect.
   */
  static CopyingInputStream over(FileInput file) {
    return new CopyingInputStream(file.resource(), file.size()) {
      @Override
      protected int copy(ByteBuffer dst) throws IOException {
        int n = (int) Math.min(dst.remaining(), length - pos);
        if (n <= 0) {
          return 0;
        }
        try {
          file.readFully(pos, dst.slice(dst.position(), n));
        } catch (DatasetException e) {
          throw new IOException(e.getMessage(), e);
        }
        dst.position(dst.position() + n);
        pos += n;
        return n;
      }
    };
  }

  /**
   * Copies up to {@code dst.remaining()} bytes at {@link #pos} into {@code dst}, advancing both;
   * returns the bytes copied (0 at the end of the file).
   */
  protected abstract int copy(ByteBuffer dst) throws IOException;

  @Override
  public long getPos() {
    return pos;
  }

  @Override
  public void seek(long newPos) throws IOException {
    if (newPos < 0 || newPos > length) {
      throw new EOFException(file + ": cannot seek to " + newPos + " in a file of " + length + " bytes");
    }
    pos = newPos;
  }

  @Override
  public int read() throws IOException {
    byte[] one = new byte[1];
    return copy(ByteBuffer.wrap(one)) == 1 ? one[0] & 0xFF : -1;
  }

  @Override
  public int read(byte[] b, int off, int len) throws IOException {
    if (len == 0) {
      return 0;
    }
    int n = copy(ByteBuffer.wrap(b, off, len));
    return n == 0 ? -1 : n;
  }

  @Override
  public void readFully(byte[] bytes) throws IOException {
    readFully(bytes, 0, bytes.length);
  }

  @Override
  public void readFully(byte[] bytes, int start, int len) throws IOException {
    readFully(ByteBuffer.wrap(bytes, start, len));
  }

  @Override
  public int read(ByteBuffer buf) throws IOException {
    if (!buf.hasRemaining()) {
      return 0;
    }
    int n = copy(buf);
    return n == 0 ? -1 : n;
  }

  @Override
  public void readFully(ByteBuffer buf) throws IOException {
    int want = buf.remaining();
    if (copy(buf) != want) {
      throw new EOFException(file + ": the file ends at byte " + length + " (truncated?)");
    }
  }

  @Override
  public long skip(long n) {
    long k = Math.max(0, Math.min(n, length - pos));
    pos += k;
    return k;
  }

  @Override
  public int available() {
    return (int) Math.min(Integer.MAX_VALUE, length - pos);
  }
}
