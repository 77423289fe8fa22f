package dev.sluice.io.parquet.internal;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import org.apache.parquet.io.InputFile;
import org.apache.parquet.io.SeekableInputStream;

/**
 * A local file read through a memory mapping (chunks of 1 GiB): parquet-java's reads of column
 * chunks become one copy out of the page cache instead of a {@code read} system call plus a copy
 * through a temporary native buffer. Nothing that views the mapping escapes (every read copies),
 * so the mapping is left to the GC (DESIGN §6). A file truncated while mapped fails the read with
 * an {@link IOException} ("changed while mapped") instead of a JVM-fatal error.
 */
public final class MappedInputFile implements InputFile {
  private static final int CHUNK = 1 << 30;

  private final Path path;
  private volatile MappedByteBuffer[] chunks;
  private volatile long length = -1;

  public MappedInputFile(Path path) {
    this.path = path;
  }

  private MappedByteBuffer[] chunks() throws IOException {
    MappedByteBuffer[] c = chunks;
    if (c == null) {
      synchronized (this) {
        if (chunks == null) {
          try (FileChannel ch = FileChannel.open(path, StandardOpenOption.READ)) {
            long size = ch.size();
            int n = (int) ((size + CHUNK - 1) / CHUNK);
            MappedByteBuffer[] m = new MappedByteBuffer[n];
            for (int i = 0; i < n; i++) {
              long from = (long) i * CHUNK;
              m[i] = ch.map(FileChannel.MapMode.READ_ONLY, from, Math.min(CHUNK, size - from));
            }
            length = size;
            chunks = m;
          }
        }
        c = chunks;
      }
    }
    return c;
  }

  @Override
  public long getLength() throws IOException {
    chunks();
    return length;
  }

  @Override
  public SeekableInputStream newStream() throws IOException {
    return new Stream(chunks(), length);
  }

  @Override
  public String toString() {
    return path.toString();
  }

  private final class Stream extends SeekableInputStream {
    private final MappedByteBuffer[] chunks;
    private final long length;
    private long pos;

    Stream(MappedByteBuffer[] chunks, long length) {
      this.chunks = chunks;
      this.length = length;
    }

    @Override
    public long getPos() {
      return pos;
    }

    @Override
    public void seek(long newPos) throws IOException {
      if (newPos < 0 || newPos > length) {
        throw new EOFException(path + ": cannot seek to " + newPos + " in a file of " + length + " bytes");
      }
      pos = newPos;
    }

    /** Copies up to {@code len} bytes at {@link #pos} into {@code dst}; returns the bytes copied. */
    private int copy(ByteBuffer dst, int len) throws IOException {
      int done = 0;
      try {
        while (done < len && pos < length) {
          int ci = (int) (pos / CHUNK);
          int off = (int) (pos % CHUNK);
          MappedByteBuffer c = chunks[ci];
          int n = Math.min(len - done, c.limit() - off);
          dst.put(dst.position(), c, off, n);
          dst.position(dst.position() + n);
          pos += n;
          done += n;
        }
      } catch (InternalError e) {
        throw new IOException(path + " changed while mapped (truncated by another process?)", e);
      }
      return done;
    }

    @Override
    public int read() throws IOException {
      if (pos >= length) {
        return -1;
      }
      byte[] one = new byte[1];
      copy(ByteBuffer.wrap(one), 1);
      return one[0] & 0xFF;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
      if (len == 0) {
        return 0;
      }
      if (pos >= length) {
        return -1;
      }
      return copy(ByteBuffer.wrap(b, off, len), len);
    }

    @Override
    public void readFully(byte[] bytes) throws IOException {
      readFully(bytes, 0, bytes.length);
    }

    @Override
    public void readFully(byte[] bytes, int start, int len) throws IOException {
      if (copy(ByteBuffer.wrap(bytes, start, len), len) != len) {
        throw new EOFException(path + ": the file ends at byte " + length + " (truncated?)");
      }
    }

    @Override
    public int read(ByteBuffer buf) throws IOException {
      if (!buf.hasRemaining()) {
        return 0;
      }
      if (pos >= length) {
        return -1;
      }
      return copy(buf, buf.remaining());
    }

    @Override
    public void readFully(ByteBuffer buf) throws IOException {
      int want = buf.remaining();
      if (copy(buf, want) != want) {
        throw new EOFException(path + ": the file ends at byte " + length + " (truncated?)");
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
}
