package dev.sluice.operators.internal.cache;

import dev.sluice.operators.CacheException;
import java.io.File;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.LongConsumer;
import net.openhft.chronicle.hash.locks.InterProcessLock;
import net.openhft.chronicle.map.ChronicleMap;
import net.openhft.chronicle.map.ExternalMapQueryContext;
import net.openhft.chronicle.map.MapAbsentEntry;
import net.openhft.chronicle.map.MapEntry;
import net.openhft.posix.PosixAPI;
import net.openhft.posix.internal.PosixAPIHolder;

/**
 * The node-shared index of one cache: a Chronicle Map persisted in the cache directory from block
 * id to {@link IndexEntry} (claims and publications), plus two counters under reserved keys.
 *
 * <p>Every operation takes the entry's segment lock with a bounded wait and throws
 * {@link Timeout} when it cannot: Chronicle's locks live in the mapped file, so a process killed
 * while holding one leaves it held. The map is created, or recovered (which resets such locks),
 * only under a file lock of our own ({@code index.lock}), and recovered only when no other process
 * has the map open: every process holding it open keeps a shared lock on {@code users.lock}.
 */
final class CacheIndex implements AutoCloseable {
  /** The reserved key of the bytes of every published segment (the budget's measure). */
  static final long BYTES_KEY = -1;
  /** The reserved key of the number of elements of a stream upstream, once a pass saw its end. */
  static final long END_KEY = -2;

  static final String MAP_FILE = "index.cm";
  static final String LOCK_FILE = "index.lock";
  static final String USERS_FILE = "users.lock";

  static {
    // Chronicle's usage analytics write to the user's home and contact a remote host: never.
    if (System.getProperty("chronicle.analytics.disable") == null) {
      System.setProperty("chronicle.analytics.disable", "true");
    }
    // Chronicle Map calls native POSIX functions for two things only: msync, which a process crash
    // does not need (the shared mapping's pages outlive the process), and fallocate, which create()
    // does itself by writing the index file's holes. Binding the native library costs more than the
    // rest of an open, so Chronicle gets its no-op implementation unless something bound it first.
    if (PosixAPIHolder.POSIX_API == null) {
      PosixAPI.useNoOpPosixApi();
    }
  }

  /** A wait on the index that ran out. */
  static final class Timeout extends Exception {
    private static final long serialVersionUID = 1L;

    Timeout(String message) {
      super(message, null, false, false);
    }
  }

  /** Completes when the background warm-up, once started, has ended; null until it starts. */
  private static volatile CompletableFuture<Void> warming;

  private final Path dir;
  private final ChronicleMap<Long, byte[]> map;
  private final FileChannel users;
  private final FileLock usersLock;
  private final boolean alone;

  private CacheIndex(Path dir, ChronicleMap<Long, byte[]> map, FileChannel users, FileLock usersLock, boolean alone) {
    this.dir = dir;
    this.map = map;
    this.users = users;
    this.usersLock = usersLock;
    this.alone = alone;
  }

  /**
   * Opens the index of the cache in {@code dir}, creating it sized for {@code entries} entries, or
   * recovering it when this process is its only user.
   *
   * @param waitNanos the bound of the wait for {@code index.lock}
   * @throws Timeout when another process holds {@code index.lock} longer
   * @throws CacheException when the map cannot be created or opened (a JVM without the flags
   *     Chronicle Map needs, no JDK compiler, an unreadable file)
   */
  static CacheIndex open(Path dir, long entries, long waitNanos) throws Timeout {
    awaitWarmUp();
    Path lockFile = dir.resolve(LOCK_FILE);
    Path usersFile = dir.resolve(USERS_FILE);
    Path mapFile = dir.resolve(MAP_FILE);
    long start = System.nanoTime();
    FileChannel users = null;
    try {
      PrivateDirs.createFile(lockFile);
      PrivateDirs.createFile(usersFile);
      try (FileChannel lockChannel = FileChannel.open(lockFile, StandardOpenOption.WRITE)) {
        FileLock creating = lockWithin(lockChannel, false, waitNanos);
        if (creating == null) {
          throw new Timeout(lockFile + " is held by another process for more than "
              + TimeUnit.NANOSECONDS.toMillis(waitNanos) + " ms");
        }
        try {
          users = FileChannel.open(usersFile, StandardOpenOption.WRITE, StandardOpenOption.READ);
          FileLock alone = users.tryLock(0, Long.MAX_VALUE, false);
          boolean exists = Files.exists(mapFile);
          if (exists) {
            PrivateDirs.tighten(mapFile);
          }
          ChronicleMap<Long, byte[]> map;
          try {
            map = build(entries, exists && alone != null, mapFile.toFile());
          } finally {
            if (alone != null) {
              alone.release();
            }
          }
          if (!exists) {
            PrivateDirs.restrict(mapFile);
            allocate(mapFile);
          }
          FileLock shared = users.tryLock(0, Long.MAX_VALUE, true);
          if (shared == null) {
            map.close();
            throw new CacheException(usersFile.toString(), "cannot take a shared lock while holding "
                + LOCK_FILE + "; is another program locking it?", null);
          }
          if (PassCounters.LOG.isDebugEnabled()) {
            PassCounters.LOG.debug("cache index {} {} in {} ms", mapFile, exists ? "opened" : "created",
                TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
          }
          return new CacheIndex(dir, map, users, shared, alone != null);
        } finally {
          creating.release();
        }
      }
    } catch (IOException e) {
      close(users);
      throw new CacheException(dir.toString(), "cannot open the cache's index: " + e, e);
    } catch (Timeout | RuntimeException e) {
      close(users);
      throw e;
    } catch (LinkageError | InternalError e) {
      close(users);
      throw new CacheException(dir.toString(), "the cache's index (Chronicle Map) cannot start in this JVM: " + e
          + "; it needs a full JDK (with jdk.compiler) and the JVM flags " + JvmFlags.CHRONICLE, e);
    }
  }

  private static ChronicleMap<Long, byte[]> build(long entries, boolean recover, File file) throws IOException {
    var builder = ChronicleMap.of(Long.class, byte[].class)
        .name("sluice-cache-index")
        .entries(Math.max(16, entries))
        .constantValueSizeBySample(new byte[IndexEntry.BYTES]);
    return recover ? builder.recoverPersistedTo(file, true) : builder.createPersistedTo(file);
  }

  /**
   * Starts loading and initializing Chronicle Map's classes on a daemon thread, once per JVM, so
   * that a later {@link #open} finds them ready; does nothing when this JVM lacks the flags Chronicle
   * Map needs (the open reports that). An open that comes while it runs waits for it to end, so
   * the two never initialize the same classes at once.
   */
  static void warmUpInBackground() {
    if (warming != null) {
      return;
    }
    synchronized (CacheIndex.class) {
      if (warming != null) {
        return;
      }
      CompletableFuture<Void> done = new CompletableFuture<>();
      Thread t = new Thread(() -> {
        try {
          JvmFlags.check("cache index warm-up");
          warmUp();
        } catch (Throwable ignored) {
          // the open that follows meets the same problem and reports it
        } finally {
          done.complete(null);
        }
      }, "sluice-cache-warm-up");
      t.setDaemon(true);
      warming = done;
      t.start();
    }
  }

  /**
   * Runs what an open runs, on a throwaway index in a private temporary directory: creates it,
   * stores an entry, and recovers it, so that Chronicle's classes for writing and reading a map
   * file's header and for recovery are loaded and initialized.
   */
  private static void warmUp() throws IOException {
    Path tmp = Files.createTempDirectory("sluice-index-warm-up");
    File file = tmp.resolve(MAP_FILE).toFile();
    try {
      try (ChronicleMap<Long, byte[]> m = build(16, false, file)) {
        try (ExternalMapQueryContext<Long, byte[], ?> c = m.queryContext(0L)) {
          c.writeLock().lock();
          MapAbsentEntry<Long, byte[]> absent = c.absentEntry();
          if (absent != null) {
            c.insert(absent, c.wrapValueAsData(new byte[IndexEntry.BYTES]));
          }
        }
      }
      try (ChronicleMap<Long, byte[]> m = build(16, true, file)) {
        m.get(0L);
      }
    } finally {
      Files.deleteIfExists(file.toPath());
      Files.deleteIfExists(tmp);
    }
  }

  private static void awaitWarmUp() {
    CompletableFuture<Void> w = warming;
    if (w != null) {
      w.join();
    }
  }

  /**
   * Gives every page of the new, still private index file its storage, the way fallocate does: a
   * hole in a file on a full tmpfs would otherwise fault (SIGBUS) on its first touch. Each block of
   * zeros (a hole reads as zeros) is written back unchanged; no other process has the file yet.
   */
  private static void allocate(Path file) throws IOException {
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
      ByteBuffer buf = ByteBuffer.allocate(1 << 16);
      long size = ch.size();
      for (long pos = 0; pos < size; pos += buf.capacity()) {
        buf.clear().limit((int) Math.min(buf.capacity(), size - pos));
        int n = 0;
        while (buf.hasRemaining() && n >= 0) {
          n = ch.read(buf, pos + buf.position());
        }
        buf.flip();
        if (allZero(buf)) {
          while (buf.hasRemaining()) {
            ch.write(buf, pos + buf.position());
          }
        }
      }
    }
  }

  private static boolean allZero(ByteBuffer b) {
    int i = b.position();
    int end = b.limit();
    for (; i + 8 <= end; i += 8) {
      if (b.getLong(i) != 0) {
        return false;
      }
    }
    for (; i < end; i++) {
      if (b.get(i) != 0) {
        return false;
      }
    }
    return true;
  }

  private static void close(FileChannel c) {
    if (c != null) {
      try {
        c.close();
      } catch (IOException ignored) {
        // the open already failed; that is the error to report
      }
    }
  }

  /** A lock on the whole file, or null when another process holds it for more than {@code waitNanos}. */
  static FileLock lockWithin(FileChannel channel, boolean shared, long waitNanos) throws IOException {
    long deadline = System.nanoTime() + waitNanos;
    long pause = 100_000;
    while (true) {
      FileLock l = channel.tryLock(0, Long.MAX_VALUE, shared);
      if (l != null) {
        return l;
      }
      if (System.nanoTime() - deadline >= 0) {
        return null;
      }
      LockSupport.parkNanos(pause);
      pause = Math.min(pause * 2, 20_000_000);
    }
  }

  /** The directory of the cache. */
  Path dir() {
    return dir;
  }

  /** The map itself, for tests that take its locks the way a killed process leaves them. */
  ChronicleMap<Long, byte[]> mapForTests() {
    return map;
  }

  /** True when no other process used the index when this one opened it (it was recovered, or created). */
  boolean recovered() {
    return alone;
  }

  /** The entry of {@code key}, or null. */
  IndexEntry get(long key, long waitNanos) throws Timeout {
    try (ExternalMapQueryContext<Long, byte[], ?> c = map.queryContext(key)) {
      lock(c.readLock(), key, waitNanos);
      MapEntry<Long, byte[]> e = c.entry();
      return e == null ? null : IndexEntry.decode(e.value().get().clone());
    }
  }

  /** Stores {@code value} under {@code key} when the key has no entry; true when it did. */
  boolean putIfAbsent(long key, IndexEntry value, long waitNanos) throws Timeout {
    try (ExternalMapQueryContext<Long, byte[], ?> c = map.queryContext(key)) {
      lock(c.writeLock(), key, waitNanos);
      MapAbsentEntry<Long, byte[]> absent = c.absentEntry();
      if (absent == null) {
        return false;
      }
      c.insert(absent, c.wrapValueAsData(value.encode()));
      return true;
    }
  }

  /** Replaces {@code expected} by {@code value} under {@code key}; true when the key held {@code expected}. */
  boolean replace(long key, IndexEntry expected, IndexEntry value, long waitNanos) throws Timeout {
    try (ExternalMapQueryContext<Long, byte[], ?> c = map.queryContext(key)) {
      lock(c.writeLock(), key, waitNanos);
      MapEntry<Long, byte[]> e = c.entry();
      if (e == null || !expected.equals(IndexEntry.decode(e.value().get().clone()))) {
        return false;
      }
      c.replaceValue(e, c.wrapValueAsData(value.encode()));
      return true;
    }
  }

  /** Removes {@code key} when it holds {@code expected}; true when it did. */
  boolean remove(long key, IndexEntry expected, long waitNanos) throws Timeout {
    try (ExternalMapQueryContext<Long, byte[], ?> c = map.queryContext(key)) {
      lock(c.writeLock(), key, waitNanos);
      MapEntry<Long, byte[]> e = c.entry();
      if (e == null || !expected.equals(IndexEntry.decode(e.value().get().clone()))) {
        return false;
      }
      c.remove(e);
      return true;
    }
  }

  /**
   * Adds {@code delta} to the counter under {@code key} unless the sum would exceed {@code max};
   * the new value, or -1 when it would have exceeded {@code max} (nothing changed).
   */
  long add(long key, long delta, long max, long waitNanos) throws Timeout {
    try (ExternalMapQueryContext<Long, byte[], ?> c = map.queryContext(key)) {
      lock(c.writeLock(), key, waitNanos);
      MapEntry<Long, byte[]> e = c.entry();
      long now = e == null ? 0 : IndexEntry.decode(e.value().get().clone()).bytes();
      long next = now + delta;
      if (delta > 0 && (next < now || next > max)) {
        return -1;
      }
      byte[] value = counter(Math.max(0, next)).encode();
      if (e == null) {
        c.insert(c.absentEntry(), c.wrapValueAsData(value));
      } else {
        c.replaceValue(e, c.wrapValueAsData(value));
      }
      return Math.max(0, next);
    }
  }

  /** The counter under {@code key}, 0 when absent. */
  long counter(long key, long waitNanos) throws Timeout {
    IndexEntry e = get(key, waitNanos);
    return e == null ? 0 : e.bytes();
  }

  /** Sets the counter under {@code key} to {@code value} when it has none; the value it holds after. */
  long setCounterIfAbsent(long key, long value, long waitNanos) throws Timeout {
    putIfAbsent(key, counter(value), waitNanos);
    return counter(key, waitNanos);
  }

  private static IndexEntry counter(long value) {
    return new IndexEntry(0, 0, 0, 0, 0, value, 0, 0);
  }

  /** Calls {@code each} with every block id that has an entry (reserved keys left out), after listing them. */
  void forEachKey(LongConsumer each) {
    List<Long> keys = new ArrayList<>();
    for (Long k : map.keySet()) {
      if (k >= 0) {
        keys.add(k);
      }
    }
    for (long k : keys) {
      each.accept(k);
    }
  }

  private static void lock(InterProcessLock lock, long key, long waitNanos)
      throws Timeout {
    boolean locked;
    try {
      locked = lock.tryLock(Math.max(0, waitNanos), TimeUnit.NANOSECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      locked = false;
    }
    if (!locked) {
      throw new Timeout("the lock of the index entry of block " + key + " was not released within "
          + TimeUnit.NANOSECONDS.toMillis(waitNanos) + " ms");
    }
  }

  /** Closes the map and releases this process's use of it. Idempotent. */
  @Override
  public void close() {
    try {
      map.close();
    } finally {
      try {
        if (usersLock.isValid()) {
          usersLock.release();
        }
      } catch (IOException ignored) {
        // closing the channel releases it as well
      }
      close(users);
    }
  }
}
