package dev.sluice.core.internal.mapped;

import dev.sluice.core.DatasetClosedException;
import dev.sluice.core.DatasetFormatException;
import dev.sluice.core.DatasetIOException;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.FileChannel;
import java.lang.ref.Cleaner;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * The boundary of every read from a file: a truncated file turns into a data error, never a JVM
 * crash, a hung consumer or a short result. Every source runs its mapped reads through
 * {@link #run}, {@link #call} or {@link #runIo}; this class is the only place that catches the
 * {@link InternalError} a fault on a mapping raises and converts it. Positioned reads
 * ({@link dev.sluice.core.IoMode#READ}) all go through {@link #readFully}, the only place that
 * turns a short read into a "truncated" error.
 */
public final class MappedReads {
  /**
   * Mappings above which {@link #map} asks for a collection first. A mapping is released only when
   * its buffer is collected, and Linux allows a process 65,530 mappings ({@code vm.max_map_count});
   * past that, the JVM cannot even map memory for its own code and dies. A process that opens and
   * closes many datasets on a small heap would otherwise get there between two collections.
   */
  static final long COLLECT_ABOVE = 16_384;
  private static final Cleaner MAPPINGS = Cleaner.create();
  private static final AtomicLong LIVE_MAPPINGS = new AtomicLong();
  private static final AtomicLong SINCE_COLLECT = new AtomicLong();

  /**
   * Maps {@code [offset, offset + length)} of {@code channel} read-only, and counts the mapping until
   * its buffer is collected. With {@value #COLLECT_ABOVE} or more mappings not yet collected, asks
   * for a collection every {@code COLLECT_ABOVE / 4} mappings, as the JDK does before it refuses
   * direct memory: garbage mappings then go, and live ones cost a collection per 4,096 new ones.
   */
  public static MappedByteBuffer map(FileChannel channel, long offset, long length) throws IOException {
    long since = SINCE_COLLECT.incrementAndGet();
    long live = LIVE_MAPPINGS.get();
    if (live >= COLLECT_ABOVE && since >= COLLECT_ABOVE / 4 && SINCE_COLLECT.compareAndSet(since, 0)) {
      System.gc();
      if (live >= WAIT_ABOVE) {
        awaitCollection();
      }
    }
    MappedByteBuffer m;
    try {
      m = channel.map(FileChannel.MapMode.READ_ONLY, offset, length);
    } catch (ClosedChannelException e) {
      throw e;
    } catch (IOException e) {
      throw pastTheEnd(channel, offset + length, e);
    }
    LIVE_MAPPINGS.incrementAndGet();
    MAPPINGS.register(m, LIVE_MAPPINGS::decrementAndGet);
    return m;
  }

  /**
   * The failure of a mapping that {@code cause} ended: when the file is now shorter than the mapping
   * needs (a read-only mapping cannot extend it), an error stating both sizes, else {@code cause}.
   */
  private static IOException pastTheEnd(FileChannel channel, long end, IOException cause) {
    long size;
    try {
      size = channel.size();
    } catch (IOException e) {
      cause.addSuppressed(e);
      return cause;
    }
    if (size >= end) {
      return cause;
    }
    return new IOException("the file has " + size + " bytes but the mapping needs " + end
        + ": it was truncated after it was opened", cause);
  }

  /**
   * Past twice {@link #COLLECT_ABOVE} mappings not yet collected when a collection is asked for, the
   * earlier ones may not have been processed yet (the threads that release collected buffers are
   * behind, as on a saturated machine): the mapping that asked waits while the count keeps falling,
   * as the JDK waits for reference processing before it refuses direct memory, and stops once it
   * falls below the bound or has not fallen for {@link #STALL_NANOS} (the mappings are in use). A
   * wait is cheap next to the JVM dying at the kernel's limit.
   */
  static final long WAIT_ABOVE = 2 * COLLECT_ABOVE;
  private static final long STALL_NANOS = TimeUnit.MILLISECONDS.toNanos(250);

  private static void awaitCollection() {
    long lowest = LIVE_MAPPINGS.get();
    long since = System.nanoTime();
    while (lowest >= WAIT_ABOVE && System.nanoTime() - since < STALL_NANOS) {
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
      long now = LIVE_MAPPINGS.get();
      if (now < lowest) {
        lowest = now;
        since = System.nanoTime();
      }
    }
  }

  /** Mappings made by {@link #map} whose buffers have not been collected yet. */
  static long liveMappings() {
    return LIVE_MAPPINGS.get();
  }

  /** Sink of touch loads; its value means nothing. */
  @SuppressWarnings("unused")
  private static int touched;

  @SuppressWarnings("FieldMayBeFinal")
  private static volatile int noRows = 0; // not a constant, so no compiler can elide the allocation

  /** A read from a mapping that yields a value. */
  @FunctionalInterface
  public interface Read<T> {
    /** Reads; may fault on a mapping. */
    T read();
  }

  /** A read from a mapping that yields nothing (a copy into a target). */
  @FunctionalInterface
  public interface Action {
    /** Reads; may fault on a mapping. */
    void run();
  }

  /** A read from a mapping behind an API whose reads throw {@link IOException}. */
  @FunctionalInterface
  public interface IoAction {
    /**
     * Reads; may fault on a mapping.
     *
     * @return what the read returns (bytes copied, say)
     * @throws IOException as the API it serves
     */
    int run() throws IOException;
  }

  private MappedReads() {}

  /**
   * Runs {@code body} and then {@link #endRead()}, both inside the read boundary.
   *
   * @param resource the mapped file, for the message
   * @param position where in it the read was (a row, a record batch), or null
   * @throws DatasetFormatException "changed while mapped" when the mapping faults
   */
  public static void run(String resource, String position, Action body) {
    try {
      body.run();
      endRead();
    } catch (InternalError e) {
      throw changedWhileMapped(resource, position, e);
    }
  }

  /**
   * {@link #run(String, String, Action)} for a read of row {@code row} (position "row N", built only
   * when the read faults).
   *
   * @throws DatasetFormatException "changed while mapped" when the mapping faults
   */
  public static void runAtRow(String resource, long row, Action body) {
    try {
      body.run();
      endRead();
    } catch (InternalError e) {
      throw changedWhileMapped(resource, "row " + row, e);
    }
  }

  /**
   * {@link #run(String, String, Action)} for a gather whose first row is {@code firstRow} (position
   * "rows N..", built only when the read faults).
   *
   * @throws DatasetFormatException "changed while mapped" when the mapping faults
   */
  public static void runAtRows(String resource, long firstRow, Action body) {
    try {
      body.run();
      endRead();
    } catch (InternalError e) {
      throw changedWhileMapped(resource, "rows " + firstRow + "..", e);
    }
  }

  /**
   * Runs {@code body} and then {@link #endRead()}, both inside the read boundary, and returns what
   * {@code body} returned.
   *
   * @param resource the mapped file, for the message
   * @param position where in it the read was, or null
   * @throws DatasetFormatException "changed while mapped" when the mapping faults
   */
  public static <T> T call(String resource, String position, Read<T> body) {
    try {
      T value = body.read();
      endRead();
      return value;
    } catch (InternalError e) {
      throw changedWhileMapped(resource, position, e);
    }
  }

  /**
   * {@link #call(String, String, Read)} for a read inside part {@code index} of a file (position
   * "{@code unit index}", say "record batch 3", built only when the read faults).
   *
   * @throws DatasetFormatException "changed while mapped" when the mapping faults
   */
  public static <T> T callAt(String resource, String unit, long index, Read<T> body) {
    try {
      T value = body.read();
      endRead();
      return value;
    } catch (InternalError e) {
      throw changedWhileMapped(resource, unit + " " + index, e);
    }
  }

  /**
   * {@link #run(String, String, Action)} for a read of row {@code row} of part {@code index} of a
   * file (position "{@code unit index}, row {@code row}", built only when the read faults).
   *
   * @throws DatasetFormatException "changed while mapped" when the mapping faults
   */
  public static void runAt(String resource, String unit, long index, long row, Action body) {
    try {
      body.run();
      endRead();
    } catch (InternalError e) {
      throw changedWhileMapped(resource, unit + " " + index + ", row " + row, e);
    }
  }

  /**
   * {@link #run(String, String, Action)} for an API whose reads throw {@link IOException}
   * (parquet-java's input streams): the fault becomes an {@code IOException} with the same message.
   *
   * @throws IOException "changed while mapped" when the mapping faults, or what {@code body} throws
   */
  public static int runIo(String resource, long position, IoAction body) throws IOException {
    try {
      int n = body.run();
      endRead();
      return n;
    } catch (InternalError e) {
      throw new IOException(changedWhileMapped(resource, "byte " + position, e).getMessage(), e);
    }
  }

  /**
   * Fills {@code dst} (from its position to its limit) with the bytes of {@code channel} at
   * {@code position}, with as many positioned reads as it takes (one, unless the file ends early).
   *
   * @param resource the file, for messages
   * @throws DatasetFormatException "truncated" naming the file, the offset and the expected versus
   *     found bytes, when the file ends before {@code dst} is full
   * @throws DatasetClosedException when the channel was closed
   * @throws DatasetIOException when the read fails
   */
  public static void readFully(String resource, FileChannel channel, long position, ByteBuffer dst) {
    readFully(resource, channel::read, position, dst);
  }

  /**
   * Fills {@code dst} (from its position to its limit) with the bytes {@code reader} reads at
   * {@code position}, with as many positioned reads as it takes: the one place that turns a local
   * or remote positioned read's outcome into Sluice's errors.
   *
   * @param resource the file or URI, for messages
   * @throws DatasetFormatException "truncated" naming the file, the offset and the expected versus
   *     found bytes, when the file ends before {@code dst} is full
   * @throws DatasetClosedException when the file was closed
   * @throws DatasetIOException naming the file and the byte range when the read fails
   */
  public static void readFully(String resource, PositionedReader reader, long position, ByteBuffer dst) {
    int n = dst.remaining();
    long at = position;
    try {
      while (dst.hasRemaining()) {
        int r = reader.read(dst, at);
        if (r < 0) {
          throw truncated(resource, position, n, at);
        }
        at += r;
      }
    } catch (ClosedChannelException e) {
      throw new DatasetClosedException(resource);
    } catch (EOFException e) {
      throw truncated(resource, position, n, at);
    } catch (IOException e) {
      throw new DatasetIOException(resource, "cannot read bytes [" + position + ", " + (position + n) + "): "
          + e.getMessage(), e);
    }
  }

  private static DatasetFormatException truncated(String resource, long position, int n, long at) {
    return new DatasetFormatException(resource, "byte " + at, "truncated: expected " + n + " bytes at byte "
        + position + " but found " + (at - position) + " (the file ends at byte " + at
        + "): the file shrank after it was opened");
  }

  /**
   * The exception for a fault while reading a mapping of {@code resource}: a JVM
   * {@link InternalError} is fatal to Reactor, which rethrows it instead of signalling an error and
   * so can leave a consumer waiting forever (by design: reactor/reactor-core#3036), so it never
   * leaves a source.
   */
  public static DatasetFormatException changedWhileMapped(String resource, String position, Throwable e) {
    return new DatasetFormatException(resource, position,
        resource + " changed while mapped (truncated or rewritten after it was opened: the file shrank under"
            + " its mapping)", e);
  }

  /** Keeps loads whose only purpose is to fault inside the read boundary from being dropped as dead. */
  public static void consume(int value) {
    touched = value;
  }

  /**
   * Ends every read. A SIGBUS from a truncated mapping is raised by HotSpot asynchronously: the
   * faulting copy completes with garbage and the {@link InternalError} is thrown at the thread's
   * next transition back from the VM, which is usually some later allocation in the caller. Native
   * calls do not deliver it (JDK 17 skips unsafe-access errors on the native transition); a
   * multi-dimensional array allocation with a non-constant length is always a VM call, in the
   * interpreter, C1 and C2, so a pending error surfaces here, inside the read boundary that turns
   * it into a {@code DatasetFormatException}. Cost: one VM call per {@code get} or {@code gather}.
   */
  public static void endRead() {
    if (new Object[noRows][0].length != 0) {
      throw new IllegalStateException("unreachable");
    }
  }
}
