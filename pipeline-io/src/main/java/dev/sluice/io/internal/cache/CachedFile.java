package dev.sluice.io.internal.cache;

import dev.sluice.core.DatasetClosedException;
import dev.sluice.core.internal.mapped.FileInput;
import dev.sluice.core.internal.mapped.MappedFile;
import dev.sluice.io.internal.RemoteInput;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.util.List;

/**
 * A remote file read through a {@link FileCache}: until {@link #opened()} (the format's opener
 * reading headers and footers) reads go to the remote file and the copy is neither taken nor held;
 * from then on the first read downloads the whole file into the cache (or waits for
 * the process that does) and every read is served from a mapping of the local copy. That first
 * read also starts the next files of the group downloading in the background.
 */
public final class CachedFile implements RemoteInput {
  private final FileCache cache;
  private final RemoteInput remote;
  private final String name;
  private final CopyCheck check;
  private final String fingerprint;
  private List<CachedFile> group = List.of();
  private int index;
  private volatile boolean dataPhase;
  private volatile MappedFile local;
  private volatile boolean closed;
  private boolean holdsEntry;

  CachedFile(FileCache cache, RemoteInput remote, String name, CopyCheck check) {
    this.cache = cache;
    this.remote = remote;
    this.name = name;
    this.check = check;
    this.fingerprint = remote.fingerprint();
  }

  void join(List<CachedFile> files, int at) {
    this.group = files;
    this.index = at;
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

  private synchronized MappedFile local() {
    if (local == null) {
      if (closed) {
        throw new DatasetClosedException(remote.resource());
      }
      MappedFile m = cache.acquire(this);
      holdsEntry = true;
      local = m;
      for (int k = index + 1; k <= index + cache.spec().lookahead() && k < group.size(); k++) {
        cache.prefetch(group.get(k));
      }
    }
    return local;
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
    return source().region(offset, length, what);
  }

  @Override
  public void readFully(long offset, ByteBuffer dst) {
    source().readFully(offset, dst);
  }

  @Override
  public ByteBuffer whole() {
    return dataPhase ? source().whole() : null;
  }

  @Override
  public int read(ByteBuffer dst, long position) throws IOException {
    if (closed) {
      throw new ClosedChannelException();
    }
    FileInput in = source();
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

  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    try {
      remote.close();
    } finally {
      if (holdsEntry) {
        holdsEntry = false;
        cache.release(name);
      }
    }
  }
}
