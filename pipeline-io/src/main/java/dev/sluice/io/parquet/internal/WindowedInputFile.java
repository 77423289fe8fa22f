package dev.sluice.io.parquet.internal;

import dev.sluice.core.internal.UnsafeAccess;
import dev.sluice.core.internal.mapped.MappedReads;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
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
 * temporary buffer, that to the Java array), and the second copy is memory traffic the decode
 * threads compete for (docs/benchmarks.md has the measured cost). A mapping of the whole file (the {@code MAPPED} option) has one copy
 * too, but the touched pages then count in the process's RSS until the GC drops the mapping; here
 * each window is unmapped right after its copy ({@code Unsafe.invokeCleaner}), so RSS does not grow
 * with the file. Nothing that views a mapping escapes. A file truncated under a read fails it with
 * an {@link IOException} ("changed while mapped") instead of a JVM-fatal error.
 */
public final class WindowedInputFile implements InputFile {
  /** Reads of at least this many bytes map their window; smaller ones are positional reads. */
  static final int MAP_FROM = 1 << 20;

  private final Path path;
  private volatile long length = -1;

  public WindowedInputFile(Path path) {
    this.path = path;
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
    return new Stream(FileChannel.open(path, StandardOpenOption.READ), getLength());
  }

  @Override
  public String toString() {
    return path.toString();
  }

  private final class Stream extends CopyingInputStream {
    private final FileChannel channel;

    Stream(FileChannel channel, long length) {
      super(path.toString(), length);
      this.channel = channel;
    }

    @Override
    protected int copy(ByteBuffer dst) throws IOException {
      int len = (int) Math.min(dst.remaining(), length - pos);
      if (len <= 0) {
        return 0;
      }
      if (len >= MAP_FROM && UnsafeAccess.canUnmap()) {
        MappedByteBuffer window = channel.map(FileChannel.MapMode.READ_ONLY, pos, len);
        try {
          MappedReads.runIo(path.toString(), pos, () -> {
            dst.put(window);
            return len;
          });
        } finally {
          UnsafeAccess.unmap(window); // unmapped now: its pages leave the RSS with it
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
    public void close() throws IOException {
      channel.close();
    }
  }
}
