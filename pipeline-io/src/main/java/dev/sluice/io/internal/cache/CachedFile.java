package dev.sluice.io.internal.cache;

import dev.sluice.core.DatasetClosedException;
import dev.sluice.core.internal.mapped.FileInput;
import dev.sluice.core.internal.mapped.MappedFile;
import dev.sluice.io.internal.RemoteInput;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A remote file read through a {@link FileCache}: until {@link #opened()} (the format's opener
 * reading headers and footers) reads go to the remote file and the copy is neither taken nor held;
 * from then on the first read downloads the whole file into the cache (or waits for
 * the process that does) and every read is served from a mapping of the local copy, while the
 * process holds the copy.
 *
 * <p>That first read also starts the next files of the group <em>in the reader's order</em>
 * downloading in the background ({@link #readNext}; the files' own order until the reader
 * announces one), and lets go of the group's other copies that no read is using and that are not
 * among those next files: their shared locks are released, so the budget may evict them, and a
 * later read of such a file takes its copy again (downloading it again when it was evicted). Their
 * mappings are never unmapped explicitly: regions handed out before stay readable (the collector
 * unmaps a mapping once its last view is gone).
 */
public final class CachedFile implements RemoteInput {
  private final FileCache cache;
  private final RemoteInput remote;
  private final String name;
  private final CopyCheck check;
  private final String fingerprint;
  private ReadOrder order = new ReadOrder(List.of());
  private final AtomicInteger reading = new AtomicInteger();
  private volatile boolean dataPhase;
  private volatile MappedFile local;
  private volatile boolean closed;
  private java.util.concurrent.Future<?> background; // this file's look-ahead download, or null
  private boolean holdsEntry;

  CachedFile(FileCache cache, RemoteInput remote, String name, CopyCheck check) {
    this.cache = cache;
    this.remote = remote;
    this.name = name;
    this.check = check;
    this.fingerprint = remote.fingerprint();
  }

  void join(ReadOrder group) {
    this.order = group;
  }

  /**
   * The reader of these files' group reads them next in this order (a file may appear several
   * times); replaces what was announced before. Files of other groups are ignored. The look-ahead
   * and the letting go of copies follow this order from the next first read of a file on.
   */
  public static void readNext(List<CachedFile> upcoming) {
    if (upcoming.isEmpty()) {
      return;
    }
    ReadOrder group = upcoming.get(0).order;
    List<CachedFile> mine = new ArrayList<>(upcoming.size());
    for (CachedFile f : upcoming) {
      if (f.order == group) {
        mine.add(f);
      }
    }
    group.next(mine);
  }

  RemoteInput remote() {
    return remote;
  }

  String name() {
    return name;
  }

  CopyCheck check() {
    return check;
  }

  /** The format has read what it reads on open: the next read of this file downloads it. */
  public void opened() {
    dataPhase = true;
  }

  /**
   * This file for reads of metadata (an index the format reads while planning, not rows): served
   * from the local copy while this process holds it, else from the remote file, and never the
   * cause of a download, so that planning a pass does not download the files out of the reader's
   * order. Closing it does nothing; it reads until this file is closed.
   */
  public FileInput metadata() {
    return new FileInput() {
      private FileInput in() {
        if (closed) {
          throw new DatasetClosedException(remote.resource());
        }
        MappedFile m = local;
        return m != null ? m : remote;
      }

      @Override
      public String resource() {
        return remote.resource();
      }

      @Override
      public long size() {
        return remote.size();
      }

      @Override
      public ByteBuffer region(long offset, long length, String what) {
        return in().region(offset, length, what);
      }

      @Override
      public void readFully(long offset, ByteBuffer dst) {
        in().readFully(offset, dst);
      }

      @Override
      public void close() {
        // the file's owner closes it
      }
    };
  }

  /** True once reads are served from the local copy. */
  public boolean isLocal() {
    return local != null;
  }

  private FileInput source() {
    if (closed) {
      throw new DatasetClosedException(remote.resource());
    }
    MappedFile m = local;
    if (m != null) {
      return m;
    }
    if (!dataPhase) {
      return remote;
    }
    return local();
  }

  private MappedFile local() {
    MappedFile m = local;
    if (m != null) {
      return m;
    }
    List<CachedFile> next = order.reached(this, cache.spec().lookahead());
    if (!cache.holdsComplete(name) || next.stream().anyMatch(f -> !cache.holdsComplete(f.name))) {
      // a download is coming: let go of the copies not needed soon, so that the budget may evict
      // them; when this file and the next ones are all published, hold on (a reader that jumps
      // between files, as a global shuffle does, would otherwise take its copies again and again)
      for (CachedFile f : order.files()) {
        if (f != this && !next.contains(f)) {
          f.letGo();
        }
      }
    }
    synchronized (this) {
      if (local != null) {
        return local;
      }
      if (closed) {
        throw new DatasetClosedException(remote.resource());
      }
      m = cache.acquire(this);
      holdsEntry = true;
      local = m;
    }
    cache.reached(this);
    for (CachedFile f : next) {
      cache.prefetch(f);
    }
    return m;
  }

  /**
   * Lets go of the copy unless a read is using it: releases the hold (the shared lock) and drops
   * the mapping from this file, so the next read takes the copy again. Regions handed out before
   * keep the mapping alive; nothing is unmapped here.
   */
  synchronized void letGo() {
    if (!holdsEntry || reading.get() > 0) {
      return;
    }
    holdsEntry = false;
    local = null;
    cache.release(name);
  }

  /** Runs a read with this file counted as in use, so that {@link #letGo()} leaves it alone meanwhile. */
  private <R> R using(java.util.function.Function<FileInput, R> read) {
    reading.incrementAndGet();
    try {
      return read.apply(source());
    } finally {
      reading.decrementAndGet();
    }
  }

  @Override
  public String resource() {
    return remote.resource();
  }

  @Override
  public long size() {
    return remote.size();
  }

  @Override
  public String fingerprint() {
    return fingerprint;
  }

  @Override
  public ByteBuffer region(long offset, long length, String what) {
    FileInput.checkRange(resource(), size(), offset, length, what);
    return using(in -> in.region(offset, length, what));
  }

  @Override
  public void readFully(long offset, ByteBuffer dst) {
    using(in -> {
      in.readFully(offset, dst);
      return null;
    });
  }

  @Override
  public ByteBuffer whole() {
    return dataPhase ? using(FileInput::whole) : null;
  }

  @Override
  public int read(ByteBuffer dst, long position) throws IOException {
    if (closed) {
      throw new ClosedChannelException();
    }
    reading.incrementAndGet();
    try {
      return read(source(), dst, position);
    } finally {
      reading.decrementAndGet();
    }
  }

  private int read(FileInput in, ByteBuffer dst, long position) throws IOException {
    if (in == remote) {
      return remote.read(dst, position);
    }
    if (!dst.hasRemaining()) {
      return 0;
    }
    long n = Math.min(dst.remaining(), size() - position);
    if (n <= 0) {
      return -1;
    }
    ByteBuffer part = dst.duplicate();
    part.limit(part.position() + (int) n);
    in.readFully(position, part);
    dst.position(dst.position() + (int) n);
    return (int) n;
  }

  /** True once this file is closed: a look-ahead download of it stops at its next chunk. */
  boolean isClosed() {
    return closed;
  }

  /**
   * Records the look-ahead download of this file; {@link #close()} waits for it. Returns false when
   * this file is closed or a look-ahead download of it was already started.
   */
  synchronized boolean startBackground(java.util.function.Supplier<java.util.concurrent.Future<?>> start) {
    if (closed || background != null && !background.isDone()) {
      return false;
    }
    background = start.get();
    return true;
  }

  /**
   * Closes the remote file and lets go of the copy. A look-ahead download of this file stops at its
   * next read of the closed remote file (its {@code .part} deleted) and, unless it makes no progress
   * for the cache's stall timeout, is finished when this returns: nothing writes into the cache
   * directory for a closed file.
   */
  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    java.util.concurrent.Future<?> running = background;
    background = null;
    try {
      remote.close();
    } finally {
      try {
        if (running != null) {
          running.get(cache.spec().stallTimeout().toNanos(), java.util.concurrent.TimeUnit.NANOSECONDS);
        }
      } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException ignored) {
        // a look-ahead download's failure is left to the reader, and there is none any more
      } catch (InterruptedException x) {
        Thread.currentThread().interrupt();
      } finally {
        if (holdsEntry) {
          holdsEntry = false;
          cache.release(name);
        }
      }
    }
  }
}
