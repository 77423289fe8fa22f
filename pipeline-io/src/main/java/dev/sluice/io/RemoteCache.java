package dev.sluice.io;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;

/**
 * A node-local directory that holds whole copies of remote files ({@code hdfs://}, {@code s3a://},
 * ...), shared by every process of the node that names it. Passed to the URI {@code open}
 * overloads ({@code Shards.open(URI, RemoteCache)}, {@code Arrow.open(URI, ArrowOptions,
 * RemoteCache)}, {@code Parquet.open(URI, ParquetOptions, RemoteCache)}, {@code Npy.openStack(URI, RemoteCache)},
 * {@code Directory.open(URI, RemoteCache)},
 * {@link Formats#openRemote(java.net.URI, String, java.util.List, RemoteCache)}): the dataset's
 * headers and footers are read remotely when it opens, and the first read of a file's rows
 * downloads the whole file into the directory, after which every read of it is a local, mapped
 * read. When the reader starts on a file, the next {@link #lookahead()} files in the order it will
 * read them start downloading in the background: the order a pipeline announces for its pass
 * ({@link dev.sluice.core.SplitDataset#readNext}, after {@code shuffle()} and {@code shard}), else
 * the dataset's file order.
 *
 * <p>A process holds a copy only while it needs it: once the reader has started on a file that is
 * neither this one nor among the next {@link #lookahead()} files and no read of this one is under
 * way, the process lets go of it (the budget may then evict it, and a later read takes the copy
 * again, downloading it again when it was evicted). One process thus reads a dataset larger than
 * {@link #maxBytes()}: the budget must hold the files read at once and those downloaded ahead.
 * Regions handed out stay readable: mappings are never unmapped explicitly and copies are never
 * changed in place.
 *
 * <p>Guarantees:
 * <ul>
 *   <li><b>One download per file per node.</b> A process downloads a file only while it holds an
 *       exclusive lock on {@code <name>.lock}; the others wait (polling the lock with a backoff up
 *       to 100 ms) and then read the published copy.
 *   <li><b>Atomic publish.</b> A file is downloaded to {@code <name>.part}, forced to disk, checked
 *       (size; the format's own cheap checks: a shard's header and footer checksums, Parquet's and
 *       Arrow's magic bytes and footer length) and renamed to {@code <name>} atomically. A
 *       {@code .part} is never read: a process killed mid-download leaves one, and the next process
 *       that needs the file downloads it again.
 *   <li><b>Budget.</b> Before a download that would take the directory past {@link #maxBytes()},
 *       the least recently used complete files that no process holds are deleted (a process
 *       holds a shared lock on {@code <name>.lock} while it needs the copy, as above); when that is
 *       not enough the read fails with a {@link dev.sluice.core.DatasetIOException} naming the
 *       budget and the need.
 *   <li><b>Never stale.</b> A copy's name holds a hash of the URI, size and modification time of
 *       the remote file: a rewritten remote file is a new copy.
 * </ul>
 *
 * @param directory the cache directory, created when missing
 * @param maxBytes the most bytes of copies (complete and being downloaded) the directory holds, &gt; 0
 * @param lookahead files downloaded ahead of the reader, in [0, 16]; 2 by default
 * @param stallTimeout how long a process waits for another one's download that makes no progress
 *     before failing; 2 minutes by default
 */
public record RemoteCache(Path directory, long maxBytes, int lookahead, Duration stallTimeout) {
  /** Files downloaded ahead of the reader by default. */
  public static final int DEFAULT_LOOKAHEAD = 2;

  /** Checks the arguments. */
  public RemoteCache {
    Objects.requireNonNull(directory, "directory");
    Objects.requireNonNull(stallTimeout, "stallTimeout");
    if (maxBytes <= 0) {
      throw new IllegalArgumentException("maxBytes > 0 required but it was " + maxBytes);
    }
    if (lookahead < 0 || lookahead > 16) {
      throw new IllegalArgumentException("lookahead in [0, 16] required but it was " + lookahead);
    }
    if (stallTimeout.isNegative() || stallTimeout.isZero()) {
      throw new IllegalArgumentException("stallTimeout > 0 required but it was " + stallTimeout);
    }
  }

  /**
   * The cache in {@code directory} holding at most {@code maxBytes} bytes of copies, downloading
   * {@link #DEFAULT_LOOKAHEAD} files ahead.
   */
  public static RemoteCache at(Path directory, long maxBytes) {
    return new RemoteCache(directory, maxBytes, DEFAULT_LOOKAHEAD, Duration.ofMinutes(2));
  }

  /** This cache downloading {@code files} files ahead of the reader (0: only what is read). */
  public RemoteCache withLookahead(int files) {
    return new RemoteCache(directory, maxBytes, files, stallTimeout);
  }

  /** This cache waiting at most {@code timeout} for another process's download that makes no progress. */
  public RemoteCache withStallTimeout(Duration timeout) {
    return new RemoteCache(directory, maxBytes, lookahead, timeout);
  }
}
