package dev.sluice.io.parquet.internal;

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
 * so the mapping is left to the GC (docs/architecture.md, lifetimes). A file truncated while mapped fails the read with
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
        c = chunks;
        if (c == null) {
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
            c = m;
          }
        }
      }
    }
    return c;
  }

  /**
   * Drops this file's reference to its mapping (streams already open keep theirs); the next read
   * maps the file again.
   */
  synchronized void release() {
    chunks = null;
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

  private final class Stream extends CopyingInputStream {
    private final MappedByteBuffer[] chunks;

    Stream(MappedByteBuffer[] chunks, long length) {
      super(path.toString(), length);
      this.chunks = chunks;
    }

    @Override
    protected int copy(ByteBuffer dst) throws IOException {
      int len = dst.remaining();
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
  }
}
