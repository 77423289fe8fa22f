package dev.sluice.operators.internal.cache;

import java.nio.file.Path;

/**
 * The index of one open cache store: opened (or created, or recovered, its orphans then removed)
 * on first use, at most once, and closed once for good when the store is released.
 */
final class StoreIndex {
  private final Path dir;
  private final long entries;
  private final long openWaitNanos;
  private CacheIndex index;
  private boolean closed;

  StoreIndex(Path dir, long entries, long openWaitNanos) {
    this.dir = dir;
    this.entries = entries;
    this.openWaitNanos = openWaitNanos;
  }

  /**
   * The index, opened on first use.
   *
   * @throws CacheIndex.Timeout when another process holds its creation lock too long, or this index was closed
   */
  synchronized CacheIndex get() throws CacheIndex.Timeout {
    if (index == null) {
      if (closed) {
        throw new CacheIndex.Timeout(dir + " was closed in this process");
      }
      CacheIndex opened = CacheIndex.open(dir, entries, openWaitNanos);
      if (opened.recovered()) {
        CacheFiles.removeOrphans(dir, opened);
      }
      index = opened;
    }
    return index;
  }

  /** Whether {@link #get} has opened the index. */
  synchronized boolean opened() {
    return index != null;
  }

  /** Whether {@link #close} was called. */
  synchronized boolean closed() {
    return closed;
  }

  /** Closes the index if open; {@link #get} then fails. */
  synchronized void close() {
    closed = true;
    if (index != null) {
      index.close();
    }
  }
}
