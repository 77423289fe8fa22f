package dev.sluice.io.remote;

import java.io.EOFException;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.net.URI;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSInputStream;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FilterFileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RawLocalFileSystem;

/**
 * Local files under the test scheme {@code flaky:///abs/path}, whose positioned reads fail with
 * an {@link IOException} while {@link #FAILURES} is above zero (each failure counts it down;
 * {@link Integer#MAX_VALUE} fails every read).
 */
public class FlakyFileSystem extends FilterFileSystem {
  static final String SCHEME = "flaky";
  static final AtomicInteger FAILURES = new AtomicInteger();
  static final AtomicInteger FAILED = new AtomicInteger();
  /** A credential setting whose value the injected failures echo, as some clients' messages do. */
  static final String SECRET_KEY = "fs.flaky.secret.key";

  public FlakyFileSystem() {
    super(new RawLocalFileSystem());
  }

  @Override
  public void initialize(URI name, Configuration conf) throws IOException {
    fs.initialize(URI.create("file:///"), conf);
    setConf(conf);
  }

  @Override
  public URI getUri() {
    return URI.create(SCHEME + ":///");
  }

  private static Path local(Path p) {
    return new Path("file", null, p.toUri().getPath());
  }

  @Override
  public FileStatus getFileStatus(Path f) throws IOException {
    FileStatus s = fs.getFileStatus(local(f));
    s.setPath(f);
    return s;
  }

  @Override
  public FileStatus[] listStatus(Path f) throws IOException {
    FileStatus[] all = fs.listStatus(local(f));
    for (FileStatus s : all) {
      s.setPath(new Path(SCHEME, null, s.getPath().toUri().getPath()));
    }
    return all;
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
