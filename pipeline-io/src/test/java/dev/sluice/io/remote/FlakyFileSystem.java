package dev.sluice.io.remote;

import java.io.EOFException;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSInputStream;
import org.apache.hadoop.fs.Path;

/**
 * Local files under the test scheme {@code flaky:///abs/path}, whose positioned reads fail with
 * an {@link IOException} while {@link #FAILURES} is above zero (each failure counts it down;
 * {@link Integer#MAX_VALUE} fails every read).
 */
public class FlakyFileSystem extends LocalBackedFileSystem {
  static final String SCHEME = "flaky";
  static final AtomicInteger FAILURES = new AtomicInteger();
  static final AtomicInteger FAILED = new AtomicInteger();
  /** A credential setting whose value the injected failures echo, as some clients' messages do. */
  static final String SECRET_KEY = "fs.flaky.secret.key";

  public FlakyFileSystem() {
    super(SCHEME);
  }

  @Override
  public FSDataInputStream open(Path f, int bufferSize) throws IOException {
    return new FSDataInputStream(new Stream(new RandomAccessFile(local(f).toUri().getPath(), "r"),
        getConf().get(SECRET_KEY, "")));
  }

  /** A file whose positioned reads fail while failures are due. */
  static final class Stream extends FSInputStream {
    private final RandomAccessFile file;
    private final String secret;

    Stream(RandomAccessFile file, String secret) {
      this.file = file;
      this.secret = secret;
    }

    @Override
    public int read(long position, byte[] buffer, int offset, int length) throws IOException {
      if (FAILURES.getAndUpdate(n -> n == Integer.MAX_VALUE ? n : Math.max(0, n - 1)) > 0) {
        FAILED.incrementAndGet();
        throw new IOException("connection reset by peer (injected; signed with " + secret + ")");
      }
      synchronized (this) {
        if (position >= file.length()) {
          return -1;
        }
        file.seek(position);
        return file.read(buffer, offset, length);
      }
    }

    @Override
    public synchronized void seek(long pos) throws IOException {
      if (pos > file.length()) {
        throw new EOFException("seek past the end");
      }
      file.seek(pos);
    }

    @Override
    public synchronized long getPos() throws IOException {
      return file.getFilePointer();
    }

    @Override
    public boolean seekToNewSource(long targetPos) {
      return false;
    }

    @Override
    public synchronized int read() throws IOException {
      return file.read();
    }

    @Override
    public void close() throws IOException {
      file.close();
    }
  }
}
