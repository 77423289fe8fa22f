package dev.sluice.io.remote;

import java.io.EOFException;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.StandardOpenOption;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FSInputStream;
import org.apache.hadoop.fs.Path;

/**
 * Local files under the test scheme {@code counted:///abs/path}, as a remote file system: every
 * stream counts the bytes it reads; on close it adds them to {@link #BYTES} per path and, when
 * {@code fs.counted.log} names a file, appends one line {@code <path> <bytes>} to it (several
 * processes may share the log). With {@code fs.counted.block.after = N} a stream that has read N
 * bytes creates the file {@code fs.counted.blocked.marker} names and blocks for good: a download
 * that hangs until its process is killed.
 */
public class CountedFileSystem extends LocalBackedFileSystem {
  static final String SCHEME = "counted";
  static final Map<String, AtomicLong> BYTES = new ConcurrentHashMap<>();
  static final Map<String, AtomicLong> FULL_READS = new ConcurrentHashMap<>();
  /** Streams opened, per path. */
  static final Map<String, AtomicLong> OPENS = new ConcurrentHashMap<>();
  /** Reads of these paths wait at their gate. */
  static final Map<String, Gate> GATES = new ConcurrentHashMap<>();

  /** Holds the reads of a path: each read counts {@code arrived} down, then waits for {@code open}. */
  record Gate(java.util.concurrent.CountDownLatch arrived, java.util.concurrent.CountDownLatch open) {
    Gate() {
      this(new java.util.concurrent.CountDownLatch(1), new java.util.concurrent.CountDownLatch(1));
    }

    void pass() throws IOException {
      arrived.countDown();
      try {
        if (!open.await(5, java.util.concurrent.TimeUnit.MINUTES)) {
          throw new IOException("the gate was never opened");
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new java.io.InterruptedIOException("interrupted at the gate");
      }
    }
  }

  public CountedFileSystem() {
    super(SCHEME);
  }

  /** The settings that make {@code counted://} a Hadoop file system. */
  static Map<String, String> settings() {
    return Map.of("fs." + SCHEME + ".impl", CountedFileSystem.class.getName(),
        "fs." + SCHEME + ".impl.disable.cache", "true");
  }

  static URI uri(java.nio.file.Path local) {
    return URI.create(SCHEME + "://" + local.toAbsolutePath().toUri().getPath());
  }

  @Override
  public FileStatus[] globStatus(Path p) throws IOException {
    return new FileStatus[] {getFileStatus(p)};
  }

  @Override
  public FSDataInputStream open(Path f, int bufferSize) throws IOException {
    String path = f.toUri().getPath();
    OPENS.computeIfAbsent(path, k -> new AtomicLong()).incrementAndGet();
    Configuration c = getConf();
    return new FSDataInputStream(new Stream(path, new RandomAccessFile(path, "r"), c.get("fs.counted.log"),
        c.getLong("fs.counted.block.after", Long.MAX_VALUE), c.get("fs.counted.blocked.marker")));
  }

  /** A local file whose reads are counted. */
  static final class Stream extends FSInputStream {
    private final String path;
    private final RandomAccessFile file;
    private final String log;
    private final long blockAfter;
    private final String marker;
    private final AtomicLong read = new AtomicLong();
    private boolean closed;

    Stream(String path, RandomAccessFile file, String log, long blockAfter, String marker) {
      this.path = path;
      this.file = file;
      this.log = log;
      this.blockAfter = blockAfter;
      this.marker = marker;
    }

    @Override
    public int read(long position, byte[] buffer, int offset, int length) throws IOException {
      Gate gate = GATES.get(path);
      if (gate != null) {
        gate.pass();
      }
      if (read.get() >= blockAfter) {
        Files.writeString(java.nio.file.Path.of(marker), "blocked");
        while (true) {
          LockSupport.park(this); // until the process is killed
        }
      }
      int n;
      synchronized (this) {
        if (position >= file.length()) {
          return -1;
        }
        file.seek(position);
        n = file.read(buffer, offset, (int) Math.min(length, Math.max(1, blockAfter - read.get())));
      }
      if (n > 0) {
        read.addAndGet(n);
      }
      return n;
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
      int b = file.read();
      if (b >= 0) {
        read.incrementAndGet();
      }
      return b;
    }

    @Override
    public synchronized void close() throws IOException {
      if (closed) {
        return;
      }
      closed = true;
      long n = read.getAndSet(0);
      long size = file.length();
      file.close();
      BYTES.computeIfAbsent(path, k -> new AtomicLong()).addAndGet(n);
      if (n >= size) {
        FULL_READS.computeIfAbsent(path, k -> new AtomicLong()).incrementAndGet();
      }
      if (log != null) {
        Files.writeString(java.nio.file.Path.of(log), path + " " + n + " " + size + "\n", StandardCharsets.UTF_8,
            StandardOpenOption.CREATE, StandardOpenOption.APPEND);
      }
    }
  }
}
