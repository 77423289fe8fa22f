package dev.sluice.io.internal.hadoop;

import dev.sluice.core.DatasetIOException;
import dev.sluice.core.internal.mapped.MappedReads;
import dev.sluice.core.internal.mapped.PositionedInput;
import dev.sluice.io.internal.RemoteFiles;
import dev.sluice.io.internal.RemoteInput;
import java.io.EOFException;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.util.concurrent.locks.LockSupport;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.StreamCapabilities;

/**
 * A file on a Hadoop {@code FileSystem} ({@code hdfs://}, {@code s3a://}, ...) read with positioned
 * reads ({@code FSDataInputStream.read(position, ...)}): the remote counterpart of
 * {@link dev.sluice.core.internal.mapped.PositionedReadFile}, on the same {@link PositionedInput} base. Views are heap copies; nothing is
 * mapped. Safe for concurrent use (Hadoop's positioned reads do not move the stream's position).
 *
 * <p>Errors: a read that fails with an {@link IOException} is retried up to {@link #ATTEMPTS}
 * times in all, waiting 10, 40, 160 ms between attempts; a read that still fails is a
 * {@link DatasetIOException} naming the URI and the byte range (through
 * {@link MappedReads#readFully}). A missing file, an end of file and a closed file are not
 * retried: the file ending early is a {@code DatasetFormatException} "truncated".
 */
public final class HadoopFile extends PositionedInput implements RemoteInput {
  /** Attempts of one read, the first included. */
  public static final int ATTEMPTS = 4;
  private static final long FIRST_BACKOFF_NANOS = 10_000_000L;

  private final FSDataInputStream in;
  private final long modificationTime;
  private final boolean byteBufferReads;
  private volatile boolean closed;

  private HadoopFile(String resource, FSDataInputStream in, FileStatus status) {
    super(resource, status.getLen());
    this.in = in;
    this.modificationTime = status.getModificationTime();
    this.byteBufferReads = in.hasCapability(StreamCapabilities.PREADBYTEBUFFER);
  }

  /**
   * Opens the file at {@code path} of {@code fs}.
   *
   * @param resource the URI as the user named it, for messages
   * @throws DatasetIOException "no such file", or "cannot open" naming the URI
   */
  public static HadoopFile open(FileSystem fs, Path path, String resource) {
    FileStatus status;
    try {
      status = fs.getFileStatus(path);
    } catch (FileNotFoundException e) {
      throw new DatasetIOException(resource, "no such file", e);
    } catch (IOException e) {
      throw new DatasetIOException(resource, "cannot open: " + RemoteFiles.scrub(e.getMessage()), e);
    }
    if (status.isDirectory()) {
      throw new DatasetIOException(resource, "is a directory, not a file", null);
    }
    FSDataInputStream in = null;
    IOException last = null;
    for (int attempt = 1; attempt <= ATTEMPTS && in == null; attempt++) {
      try {
        in = fs.open(path);
      } catch (FileNotFoundException e) {
        throw new DatasetIOException(resource, "no such file", e);
      } catch (IOException e) {
        last = e;
        backoff(attempt);
      }
    }
    if (in == null) {
      throw new DatasetIOException(resource, "cannot open after " + ATTEMPTS + " attempts: " + RemoteFiles.scrub(last.getMessage()), last);
    }
    return new HadoopFile(resource, in, status);
  }

  /** The file's modification time on its filesystem when it was opened (ms since the epoch). */
  public long modificationTime() {
    return modificationTime;
  }

  @Override
  public String fingerprint() {
    return "file " + resource() + " " + size() + " " + modificationTime + "\n";
  }

  /**
   * One positioned read, retried as the class describes.
   *
   * @throws ClosedChannelException after {@link #close()}
   * @throws IOException the last attempt's failure
   */
  @Override
  public int read(ByteBuffer dst, long position) throws IOException {
    for (int attempt = 1; ; attempt++) {
      if (closed) {
        throw new ClosedChannelException();
      }
      try {
        return readOnce(dst, position);
      } catch (EOFException | FileNotFoundException | InterruptedIOException e) {
        throw e;
      } catch (IOException e) {
        if (closed) {
          throw new ClosedChannelException();
        }
        if (attempt >= ATTEMPTS) {
          throw new IOException("failed " + ATTEMPTS + " attempts, the last: " + RemoteFiles.scrub(e.getMessage()), e);
        }
        backoff(attempt);
      }
    }
  }

  private int readOnce(ByteBuffer dst, long position) throws IOException {
    if (!dst.hasRemaining()) {
      return 0;
    }
    if (position >= size()) {
      return -1;
    }
    if (dst.hasArray()) {
      int r = in.read(position, dst.array(), dst.arrayOffset() + dst.position(), dst.remaining());
      if (r > 0) {
        dst.position(dst.position() + r);
      }
      return r;
    }
    if (byteBufferReads) {
      return in.read(position, dst);
    }
    byte[] buf = new byte[Math.min(dst.remaining(), 1 << 20)];
    int r = in.read(position, buf, 0, buf.length);
    if (r > 0) {
      dst.put(buf, 0, r);
    }
    return r;
  }

  private static void backoff(int attempt) {
    LockSupport.parkNanos(FIRST_BACKOFF_NANOS << (2 * (attempt - 1)));
  }

  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    try {
      in.close();
    } catch (IOException e) {
      throw new DatasetIOException(resource(), "cannot close: " + RemoteFiles.scrub(e.getMessage()), e);
    }
  }
}
