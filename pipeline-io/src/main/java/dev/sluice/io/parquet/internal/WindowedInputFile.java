package dev.sluice.io.parquet.internal;

import java.io.EOFException;
import java.io.IOException;
import java.lang.reflect.Field;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import org.apache.parquet.io.InputFile;
import org.apache.parquet.io.SeekableInputStream;

/**
 * A local file read with one copy out of the page cache and bounded memory: a large read (a column
 * chunk, {@value #MAP_FROM} bytes or more) maps just its window, copies it and unmaps it at once;
 * small reads (footer, page headers) are positional {@code read}s.
 *
 * <p>parquet-java's {@code LocalInputFile} reads through {@code RandomAccessFile}, whose native
 * read goes through a temporary C buffer: two copies of every compressed byte (kernel to the
 * temporary buffer, that to the Java array). On the 1,000,000-row benchmark file that read path
 * was about 80 of 200 ns per row with one decode thread, and the second copy is memory traffic the
 * decode threads compete for. A mapping of the whole file (the {@code MAPPED} option) has one copy
 * too, but the touched pages then count in the process's RSS until the GC drops the mapping; here
 * each window is unmapped right after its copy ({@code Unsafe.invokeCleaner}), so RSS does not grow
 * with the file. Nothing that views a mapping escapes. A file truncated under a read fails it with
 * an {@link IOException} ("changed while mapped") instead of a JVM-fatal error.
 */
public final class WindowedInputFile implements InputFile {
  /** Reads of at least this many bytes map their window; smaller ones are positional reads. */
  static final int MAP_FROM = 1 << 20;

  private static final sun.misc.Unsafe UNSAFE = unsafe();

  private final Path path;
  private volatile long length = -1;

  public WindowedInputFile(Path path) {
    this.path = path;
  }

  private static sun.misc.Unsafe unsafe() {
    try {
      Field f = sun.misc.Unsafe.class.getDeclaredField("theUnsafe");
      f.setAccessible(true);
      return (sun.misc.Unsafe) f.get(null);
    } catch (ReflectiveOperationException | RuntimeException e) {
      return null; // no unmapping: large reads fall back to positional reads
    }
  }

  @Override
  public long getLength() throws IOException {
    long n = length;
    if (n < 0) {
      try (FileChannel ch = FileChannel.open(path, StandardOpenOption.READ)) {
        n = ch.size();
      }
      length = n;
    }
    return n;
  }

  @Override
  public SeekableInputStream newStream() throws IOException {
    FileChannel ch;
    try {
      ch = FileChannel.open(path, StandardOpenOption.READ);
    } catch (NoSuchFileException e) {
      throw e;
    }
    return new Stream(ch, getLength());
  }

  @Override
  public String toString() {
    return path.toString();
  }

  private final class Stream extends SeekableInputStream {
    private final FileChannel channel;
    private final long length;
    private long pos;

    Stream(FileChannel channel, long length) {
      this.channel = channel;
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

    /** Copies up to {@code dst.remaining()} bytes at {@link #pos} into {@code dst}; returns the bytes copied. */
    private int copy(ByteBuffer dst) throws IOException {
      int len = (int) Math.min(dst.remaining(), length - pos);
      if (len <= 0) {
        return 0;
      }
      if (len >= MAP_FROM && UNSAFE != null) {
        MappedByteBuffer window = channel.map(FileChannel.MapMode.READ_ONLY, pos, len);
        try {
          dst.put(window);
        } catch (InternalError e) {
          throw new IOException(path + " changed while mapped (truncated by another process?)", e);
        } finally {
          UNSAFE.invokeCleaner(window); // unmapped now: its pages leave the RSS with it
        }
        pos += len;
        return len;
      }
      ByteBuffer target = dst.duplicate();
      target.limit(target.position() + len);
      int done = 0;
      while (done < len) {
        int n = channel.read(target, pos);
        if (n < 0) {
          break; // the file shrank under us; the caller reports the short read
        }
        pos += n;
        done += n;
      }
      dst.position(dst.position() + done);
      return done;
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

    @Override
    public void close() throws IOException {
      channel.close();
    }
  }
}
