package dev.sluice.io.internal.cache;

import dev.sluice.core.DatasetClosedException;
import dev.sluice.core.DatasetException;
import dev.sluice.core.DatasetIOException;
import dev.sluice.core.internal.mapped.MappedFile;
import dev.sluice.io.RemoteCache;
import dev.sluice.io.internal.RemoteFiles;
import dev.sluice.io.internal.RemoteInput;
import java.io.IOException;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileTime;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Stream;

/**
 * The node-local copies of remote files in one directory, as {@link RemoteCache} describes them;
 * one instance per directory per process.
 *
 * <p>Files of the directory: {@code <name>} a complete copy, {@code <name>.part} a download,
 * {@code <name>.lock} the file's lock (exclusive while downloading, shared while a process reads
 * the copy), {@code cache.lock} held exclusively while a process accounts the budget, evicts and
 * reserves a download. Within the process, every lock file has one channel (closing any channel
 * of a file releases the process's locks on it), opened and closed under this object's monitor.
 */
public final class FileCache {
  private static final Map<Path, FileCache> CACHES = new ConcurrentHashMap<>();
  private static final ExecutorService PREFETCH = Executors.newFixedThreadPool(2, r -> {
    Thread t = new Thread(r, "sluice-remote-cache-prefetch");
    t.setDaemon(true);
    return t;
  });
  private static final int COPY_BUFFER = 8 << 20;
  private static final int CHUNK = 1 << 30;
  private static final long MAX_BACKOFF_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
  private static final String GLOBAL_LOCK = "cache.lock";

  private final Path dir;
  private volatile RemoteCache spec;
  private final FileChannel global;
  private final Map<String, Entry> entries = new HashMap<>();
  /** This process's look-ahead downloads under way, by copy name. */
  private final Map<String, java.util.concurrent.Future<?>> lookahead = new ConcurrentHashMap<>();
  private volatile Listener listener = new Listener() { };

  /** What the cache tells of its work, in the order it happens; the default ignores it. */
  public interface Listener {
    /**
     * A reader has started reading the file {@code resource} (the first read since this process
     * took its copy).
     */
    default void reached(String resource) { }

    /** The file {@code resource} has been downloaded and its copy published. */
    default void downloaded(String resource) { }

    /**
     * A read of the file {@code resource} found the budget full and waits for this process's
     * look-ahead downloads under way to end, so that their copies may be evicted.
     */
    default void waitingForLookahead(String resource) { }
  }

  /** What this process holds of one copy: its lock file's channel and, while read, the shared lock and mapping. */
  private static final class Entry {
    final FileChannel lockChannel;
    int refs;
    FileLock lock;
    MappedFile mapped;

    Entry(FileChannel lockChannel) {
      this.lockChannel = lockChannel;
    }
  }

  private FileCache(Path dir, RemoteCache spec) throws IOException {
    this.dir = dir;
    this.spec = spec;
    this.global = FileChannel.open(dir.resolve(GLOBAL_LOCK), StandardOpenOption.CREATE, StandardOpenOption.WRITE, StandardOpenOption.READ);
  }

  /**
   * The cache of {@code spec.directory()} in this process (its budget, lookahead and timeout are
   * the last ones given).
   *
   * @throws DatasetIOException naming the directory when it cannot be created
   */
  public static FileCache of(RemoteCache spec) {
    Path d = spec.directory().toAbsolutePath().normalize();
    FileCache c = CACHES.computeIfAbsent(d, k -> {
      try {
        Files.createDirectories(k);
        return new FileCache(k, spec);
      } catch (IOException e) {
        throw new DatasetIOException(k.toString(), "cannot create the remote cache directory: " + e.getMessage(), e);
      }
    });
    c.spec = spec;
    return c;
  }

  RemoteCache spec() {
    return spec;
  }

  /** Tells {@code l} of this cache's work in this process from now on (replacing the last one given). */
  public void listen(Listener l) {
    listener = l;
  }

  void reached(CachedFile file) {
    listener.reached(file.resource());
  }

  /** The directory. */
  public Path directory() {
    return dir;
  }

  /**
   * Opens the remote files {@code uris} (status and a handle for positioned reads, as
   * {@link RemoteFiles#open} does) as one group, read in this order until the reader announces
   * another ({@link CachedFile#readNext}): the first data read of a file starts the files after it
   * in that order downloading and lets go of the group's copies not in use (see
   * {@link CachedFile}). Closes what it opened when one fails.
   *
   * @param checks the format's check of each file's copy, one per URI
   */
  public List<CachedFile> open(List<URI> uris, List<CopyCheck> checks) {
    List<CachedFile> files = new ArrayList<>(uris.size());
    try {
      for (int k = 0; k < uris.size(); k++) {
        RemoteInput in = RemoteFiles.open(uris.get(k));
        files.add(new CachedFile(this, in, copyName(uris.get(k), in), checks.get(k)));
      }
    } catch (RuntimeException e) {
      for (CachedFile f : files) {
        try {
          f.close();
        } catch (RuntimeException suppressed) {
          e.addSuppressed(suppressed);
        }
      }
      throw e;
    }
    List<CachedFile> group = List.copyOf(files);
    ReadOrder order = new ReadOrder(group);
    for (CachedFile f : group) {
      f.join(order);
    }
    return group;
  }

  /** {@link #open(List, List)} of one file. */
  public CachedFile open(URI uri, CopyCheck check) {
    return open(List.of(uri), List.of(check)).get(0);
  }

  /** The copy's name: a hash of the URI, size and modification time, then the file's own name. */
  static String copyName(URI uri, RemoteInput in) {
    try {
      MessageDigest d = MessageDigest.getInstance("SHA-256");
      byte[] h = d.digest((uri + "\n" + in.fingerprint()).getBytes(StandardCharsets.UTF_8));
      String base = RemoteFiles.name(uri).replaceAll("[^A-Za-z0-9._-]", "_");
      return HexFormat.of().formatHex(h, 0, 8) + "-" + (base.length() > 100 ? base.substring(0, 100) : base);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  /** The copy {@code name} as published: complete files only, never a {@code .part}. */
  Path copy(String name) {
    return dir.resolve(name);
  }

  boolean holdsComplete(String name) {
    return Files.isRegularFile(copy(name));
  }

  private synchronized Entry entry(String name) {
    Entry e = entries.get(name);
    if (e == null) {
      try {
        e = new Entry(FileChannel.open(dir.resolve(name + ".lock"), StandardOpenOption.CREATE, StandardOpenOption.WRITE, StandardOpenOption.READ));
      } catch (IOException x) {
        throw new DatasetIOException(dir.resolve(name + ".lock").toString(), "cannot open: " + x.getMessage(), x);
      }
      entries.put(name, e);
    }
    e.refs++;
    return e;
  }

  /** Lets go of one hold of {@code name}: the last one releases the shared lock and the mapping. */
  synchronized void release(String name) {
    Entry e = entries.get(name);
    if (e == null || --e.refs > 0) {
      return;
    }
    entries.remove(name);
    e.mapped = null;
    try {
      e.lockChannel.close(); // releases the lock
    } catch (IOException ignored) {
      // the lock goes with the channel either way
    }
  }

  /**
   * The mapped local copy of {@code file}, downloaded first when no complete and valid copy is
   * published; holds a shared lock on it until {@link #release(String)}.
   */
  MappedFile acquire(CachedFile file) {
    return acquire(file, false);
  }

  /** As {@link #acquire(CachedFile)}; a look-ahead download gives up when the budget is full instead of waiting. */
  private MappedFile acquire(CachedFile file, boolean ahead) {
    Entry e = entry(file.name());
    try {
      synchronized (e) {
        if (e.mapped == null) {
          e.mapped = mapLocal(file, e, ahead);
        }
        return e.mapped;
      }
    } catch (RuntimeException | Error x) {
      release(file.name());
      throw x;
    }
  }

  private MappedFile mapLocal(CachedFile file, Entry e, boolean ahead) {
    String resource = file.resource();
    Path copy = copy(file.name());
    while (true) {
      if (e.lock == null) {
        e.lock = lock(e, true, file);
      }
      if (valid(file, copy)) {
        try {
          Files.setLastModifiedTime(copy, FileTime.from(java.time.Instant.now()));
          MappedFile m = MappedFile.open(copy, CHUNK);
          m.detach();
          return m;
        } catch (IOException | DatasetException x) {
          if (Files.isRegularFile(copy)) {
            throw new DatasetIOException(copy.toString(), "cannot read the cached copy of " + resource + ": "
                + x.getMessage(), x);
          }
        }
      }
      releaseLock(e);
      FileLock exclusive = lock(e, false, file);
      try {
        if (!valid(file, copy)) {
          Files.deleteIfExists(copy);
          download(file, ahead);
        }
      } catch (IOException x) {
        throw new DatasetIOException(resource, "cannot download into " + copy + ": " + x.getMessage(), x);
      } finally {
        try {
          exclusive.release();
        } catch (IOException ignored) {
          // the channel stays open; the lock is gone or goes with it
        }
      }
    }
  }

  private static void releaseLock(Entry e) {
    if (e.lock != null) {
      try {
        e.lock.release();
      } catch (IOException ignored) {
        // released with the channel at the latest
      }
      e.lock = null;
    }
  }

  /** A published copy of the remote file's size that passes the format's check. */
  private static boolean valid(CachedFile file, Path copy) {
    try (FileChannel ch = FileChannel.open(copy, StandardOpenOption.READ)) {
      if (ch.size() != file.size()) {
        return false;
      }
      file.check().check(file.resource(), ch, ch.size());
      return true;
    } catch (NoSuchFileException x) {
      return false;
    } catch (IOException | DatasetException x) {
      return false;
    }
  }

  /**
   * Locks the file's lock, polling with a backoff from 1 to 100 ms while another process holds it;
   * fails when the other process's download makes no progress for the stall timeout.
   */
  private FileLock lock(Entry e, boolean shared, CachedFile file) {
    long wait = 1_000_000L;
    Path part = dir.resolve(file.name() + ".part");
    long stamp = stamp(part);
    long progress = System.nanoTime();
    while (true) {
      try {
        FileLock l = e.lockChannel.tryLock(0, Long.MAX_VALUE, shared);
        if (l != null) {
          return l;
        }
      } catch (IOException x) {
        throw new DatasetIOException(dir.resolve(file.name() + ".lock").toString(), "cannot lock: " + x.getMessage(), x);
      }
      LockSupport.parkNanos(wait);
      if (file.isClosed()) {
        throw new DatasetClosedException(file.resource());
      }
      if (Thread.interrupted()) {
        Thread.currentThread().interrupt();
        throw new DatasetIOException(file.resource(), "interrupted while waiting for another process's download of it",
            null);
      }
      wait = Math.min(wait * 2, MAX_BACKOFF_NANOS);
      long now = System.nanoTime();
      long s = stamp(part);
      if (s != stamp) {
        stamp = s;
        progress = now;
      } else if (now - progress > spec.stallTimeout().toNanos()) {
        throw new DatasetIOException(file.resource(), "another process has held its download into " + dir
            + " for " + spec.stallTimeout().toSeconds() + " s without progress", null);
      }
    }
  }

  private static long stamp(Path part) {
    try {
      return Files.getLastModifiedTime(part).toMillis() * 31 + Files.size(part);
    } catch (IOException x) {
      return -1;
    }
  }

  /** Downloads the file to {@code <name>.part}, forces, checks and renames it; the caller holds the exclusive lock. */
  private void download(CachedFile file, boolean ahead) throws IOException {
    String name = file.name();
    Path part = dir.resolve(name + ".part");
    long size = file.size();
    reserve(file, ahead);
    try (FileChannel out = FileChannel.open(part, StandardOpenOption.WRITE, StandardOpenOption.READ)) {
      RemoteInput in = file.remote();
      ByteBuffer buf = ByteBuffer.allocate((int) Math.min(COPY_BUFFER, Math.max(1, size)));
      for (long at = 0; at < size; ) {
        if (file.isClosed()) {
          throw new DatasetClosedException(file.resource());
        }
        buf.clear().limit((int) Math.min(buf.capacity(), size - at));
        in.readFully(at, buf);
        buf.flip();
        while (buf.hasRemaining()) {
          at += out.write(buf, at);
        }
      }
      out.force(true);
      if (out.size() != size) {
        throw new DatasetIOException(file.resource(), "the download holds " + out.size() + " bytes but the remote file has "
            + size, null);
      }
      file.check().check(file.resource(), out, size);
    } catch (IOException | RuntimeException | Error x) {
      try {
        Files.deleteIfExists(part);
      } catch (IOException suppressed) {
        x.addSuppressed(suppressed);
      }
      throw x;
    }
    Files.move(part, copy(name), StandardCopyOption.ATOMIC_MOVE);
    listener.downloaded(file.resource());
  }

  /**
   * Reserves the budget for downloading {@code file} ({@link #tryReserve}). When it does not fit, a
   * reader's download (not a look-ahead one) waits for this process's look-ahead downloads of other
   * files under way, whose copies the budget may evict once they end, and tries again: a download
   * ahead of the reader never makes the reader's own read fail.
   *
   * @throws DatasetIOException naming the file, the budget and the bytes in use when it does not fit
   */
  private void reserve(CachedFile file, boolean ahead) throws IOException {
    long size = file.size();
    while (true) {
      long used = tryReserve(file.name(), size);
      if (used < 0) {
        return;
      }
      if (ahead || !awaitLookahead(file)) {
        throw new DatasetIOException(file.resource(), "the remote cache " + dir + " has a budget of "
            + spec.maxBytes() + " bytes; this file needs " + size + " bytes but the files in use hold " + used
            + ": raise the budget (--remote-cache-max-bytes) or read fewer files at once", null);
      }
    }
  }

  /**
   * Waits for this process's look-ahead downloads of files other than {@code file} under way (each
   * at most the stall timeout); false when there were none.
   */
  private boolean awaitLookahead(CachedFile file) {
    List<java.util.concurrent.Future<?>> running = new ArrayList<>();
    lookahead.forEach((name, f) -> {
      if (!name.equals(file.name()) && !f.isDone()) {
        running.add(f);
      }
    });
    if (running.isEmpty()) {
      return false;
    }
    listener.waitingForLookahead(file.resource());
    for (java.util.concurrent.Future<?> f : running) {
      try {
        f.get(spec.stallTimeout().toNanos(), TimeUnit.NANOSECONDS);
      } catch (java.util.concurrent.ExecutionException | java.util.concurrent.CancellationException ignored) {
        // a look-ahead download's failure is the business of the read that needs its file
      } catch (java.util.concurrent.TimeoutException x) {
        throw new DatasetIOException(file.resource(), "a look-ahead download into " + dir + " has held the budget for "
            + spec.stallTimeout().toSeconds() + " s without ending", x);
      } catch (InterruptedException x) {
        Thread.currentThread().interrupt();
        throw new DatasetIOException(file.resource(), "interrupted while waiting for room in the remote cache " + dir, x);
      }
    }
    return true;
  }

  /**
   * Under {@code cache.lock}: evicts least recently used copies no process holds until
   * {@code size} more bytes fit in the budget, then creates {@code <name>.part} at its full size
   * (sparse), so that the other processes count it. Returns -1 when reserved, else the bytes the
   * copies that could not be evicted hold.
   */
  private synchronized long tryReserve(String name, long size) throws IOException {
    FileLock g = null;
    long wait = 1_000_000L;
    while (g == null) {
      try {
        g = global.tryLock();
      } catch (OverlappingFileLockException x) {
        g = null;
      }
      if (g == null) {
        LockSupport.parkNanos(wait);
        wait = Math.min(wait * 2, MAX_BACKOFF_NANOS);
      }
    }
    try {
      Path part = dir.resolve(name + ".part");
      Files.deleteIfExists(part);
      long budget = spec.maxBytes();
      record Held(Path path, long bytes, FileTime lastUse) { }
      List<Held> copies = new ArrayList<>();
      long used = 0;
      try (Stream<Path> all = Files.list(dir)) {
        for (Path p : (Iterable<Path>) all::iterator) {
          String n = p.getFileName().toString();
          if (n.endsWith(".lock") || !Files.isRegularFile(p)) {
            continue;
          }
          long bytes;
          FileTime lastUse;
          try {
            bytes = Files.size(p);
            lastUse = Files.getLastModifiedTime(p);
          } catch (NoSuchFileException x) {
            continue;
          }
          used += bytes;
          copies.add(new Held(p, bytes, lastUse));
        }
      }
      copies.sort(Comparator.comparing(Held::lastUse));
      for (Held h : copies) {
        if (used + size <= budget) {
          break;
        }
        if (evict(h.path())) {
          used -= h.bytes();
        }
      }
      if (used + size > budget) {
        return used;
      }
      try (FileChannel out = FileChannel.open(part, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
        if (size > 0) {
          out.write(ByteBuffer.wrap(new byte[1]), size - 1);
        }
      }
      return -1;
    } finally {
      g.release();
    }
  }

  /**
   * Deletes a copy (or a dead process's {@code .part}) when no process holds its lock; called under
   * this object's monitor, so no channel of this process is opened on the lock file meanwhile.
   */
  private boolean evict(Path file) {
    String n = file.getFileName().toString();
    String name = n.endsWith(".part") ? n.substring(0, n.length() - ".part".length()) : n;
    if (entries.containsKey(name)) {
      return false;
    }
    try (FileChannel ch = FileChannel.open(dir.resolve(name + ".lock"), StandardOpenOption.CREATE, StandardOpenOption.READ,
        StandardOpenOption.WRITE)) {
      FileLock l;
      try {
        l = ch.tryLock();
      } catch (OverlappingFileLockException x) {
        return false;
      }
      if (l == null) {
        return false;
      }
      return Files.deleteIfExists(file);
    } catch (IOException x) {
      return false;
    }
  }

  /** Downloads {@code file} in the background unless it is complete; failures are left to the reader. */
  void prefetch(CachedFile file) {
    if (holdsComplete(file.name())) {
      return;
    }
    file.startBackground(() -> {
      java.util.concurrent.Future<?> f = PREFETCH.submit(() -> {
        if (file.isClosed()) {
          return;
        }
        try {
          acquire(file, true);
          release(file.name());
        } catch (RuntimeException | Error ignored) {
          // the reader downloads it again and reports the failure when it needs the file
        }
      });
      lookahead.put(file.name(), f);
      lookahead.values().removeIf(java.util.concurrent.Future::isDone);
      return f;
    });
  }
}
