package dev.sluice.core.internal.mapped;

import dev.sluice.core.DatasetClosedException;
import dev.sluice.core.DatasetIOException;
import dev.sluice.core.IoMode;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.FileChannel;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * A region of one file read in chunks, as Lucene's {@code MMapDirectory}: each chunk holds a whole
 * number of units (rows of a fixed-length column, single values of a Fortran-order array), so a
 * unit never crosses a chunk.
 *
 * <p>{@link IoMode#MMAP}: chunks are mapped read-only on first use and released by
 * the GC once the last view is gone; they are never unmapped explicitly (a stale view would crash
 * the JVM). {@link IoMode#READ} ({@link #positioned}): nothing is mapped;
 * {@link #copyTo} copies out of the file's cached blocks when the reader is a {@link BlockCache}
 * that holds the file, else reads straight into the caller's buffer with one positioned read per call, and
 * {@link #chunk} reads a chunk onto the heap on first use and keeps it (meant for the small blocks
 * read a few bytes at a time: validity, offsets).
 */
public final class MappedChunks {
  private final String resource;
  private final FileChannel channel; // null for a region read with positioned reads or already mapped
  private final PositionedReader reader; // null for a mapped region
  private final BlockCache cache; // the reader when it is a block cache, else null
  private final long dataOffset;
  private final long length;
  private final long chunkBytes;
  private final AtomicReferenceArray<ByteBuffer> chunks;
  private final boolean positioned;

  /**
   * Maps nothing yet: chunks are mapped on first use.
   *
   * @param resource the file, for messages
   * @param channel the open file; closing it makes later first uses of a chunk throw
   *     {@link DatasetClosedException}
   * @param dataOffset where the region starts in the file
   * @param length bytes of the region
   * @param unitBytes bytes that must never cross a chunk, &gt; 0
   * @param maxChunkBytes the largest chunk to map, at most {@link Integer#MAX_VALUE}
   */
  public MappedChunks(String resource, FileChannel channel, long dataOffset, long length, long unitBytes, long maxChunkBytes) {
    this(resource, channel, null, dataOffset, length, unitBytes, maxChunkBytes);
  }

  /**
   * A region read with positioned reads instead of a mapping ({@link IoMode#READ}):
   * its chunks are at most 1 MiB (and at most {@code maxChunkBytes}), each a whole number of units.
   *
   * @param resource the file, for messages
   * @param channel the open file; closing it makes later reads throw {@link DatasetClosedException}
   * @param dataOffset where the region starts in the file
   * @param length bytes of the region
   * @param unitBytes bytes that must never cross a chunk, &gt; 0
   * @param maxChunkBytes the largest chunk, at most {@link Integer#MAX_VALUE}
   */
  public static MappedChunks positioned(String resource, FileChannel channel, long dataOffset, long length,
      long unitBytes, long maxChunkBytes) {
    return positioned(resource, (PositionedReader) channel::read, dataOffset, length, unitBytes, maxChunkBytes);
  }

  /**
   * A region read with positioned reads from any {@link PositionedReader} (a local channel, a
   * Hadoop {@code FileSystem} stream): its chunks are at most 1 MiB (and at most
   * {@code maxChunkBytes}), each a whole number of units.
   *
   * @param resource the file or URI, for messages
   * @param reader the open file; once it is closed, reads throw {@link DatasetClosedException}
   * @param dataOffset where the region starts in the file
   * @param length bytes of the region
   * @param unitBytes bytes that must never cross a chunk, &gt; 0
   * @param maxChunkBytes the largest chunk, at most {@link Integer#MAX_VALUE}
   */
  public static MappedChunks positioned(String resource, PositionedReader reader, long dataOffset, long length,
      long unitBytes, long maxChunkBytes) {
    return new MappedChunks(resource, null, reader, dataOffset, length, unitBytes,
        Math.min(maxChunkBytes, 1 << 20));
  }

  /**
   * A region in the given mode.
   *
   * @see #MappedChunks(String, FileChannel, long, long, long, long)
   * @see #positioned
   */
  public static MappedChunks of(IoMode mode, String resource, FileChannel channel, long dataOffset,
      long length, long unitBytes, long maxChunkBytes) {
    return mode == IoMode.READ
        ? positioned(resource, channel, dataOffset, length, unitBytes, maxChunkBytes)
        : new MappedChunks(resource, channel, dataOffset, length, unitBytes, maxChunkBytes);
  }

  private MappedChunks(String resource, FileChannel channel, PositionedReader reader, long dataOffset, long length,
      long unitBytes, long maxChunkBytes) {
    this.positioned = reader != null;
    this.resource = resource;
    this.channel = channel;
    this.reader = reader;
    this.cache = reader instanceof BlockCache c ? c : null;
    this.dataOffset = dataOffset;
    this.length = length;
    long units = Math.max(1, maxChunkBytes / unitBytes);
    this.chunkBytes = units * unitBytes;
    if (chunkBytes > Integer.MAX_VALUE) {
      throw new IllegalArgumentException(resource + ": a unit of " + unitBytes + " bytes cannot be mapped"
          + " (at most " + Integer.MAX_VALUE + " bytes per mapping)");
    }
    long n = length == 0 ? 0 : (length + chunkBytes - 1) / chunkBytes;
    this.chunks = new AtomicReferenceArray<>(Math.toIntExact(n));
  }

  /**
   * A region that is already mapped (a view of a larger mapping): one chunk, {@code mapped} itself,
   * so that row gathers work on any mapped range without mapping it again.
   *
   * @param resource the file, for messages
   * @param mapped the region's bytes (position 0); it is used as it is, not copied
   */
  public static MappedChunks ofRegion(String resource, ByteBuffer mapped) {
    return new MappedChunks(resource, mapped);
  }

  private MappedChunks(String resource, ByteBuffer mapped) {
    this.positioned = false;
    this.resource = resource;
    this.channel = null;
    this.reader = null;
    this.cache = null;
    this.dataOffset = 0;
    this.length = mapped.remaining();
    this.chunkBytes = Math.max(1, length);
    this.chunks = new AtomicReferenceArray<>(length == 0 ? 0 : 1);
    if (length > 0) {
      chunks.set(0, mapped.slice().order(ByteOrder.LITTLE_ENDIAN));
    }
  }

  /** True when the chunks are mappings (or one mapped region), false for positioned reads. */
  public boolean isMapped() {
    return !positioned;
  }

  /** Bytes of the region. */
  public long length() {
    return length;
  }

  /** Bytes of every chunk but the last. */
  public long chunkBytes() {
    return chunkBytes;
  }

  /** Number of chunks. */
  public int chunkCount() {
    return chunks.length();
  }

  /** The chunk holding data byte {@code offset}. */
  public int chunkIndex(long offset) {
    return (int) (offset / chunkBytes);
  }

  /** The position of data byte {@code offset} inside its chunk. */
  public int positionInChunk(long offset) {
    return (int) (offset % chunkBytes);
  }

  /**
   * Chunk {@code k} (little-endian order set; absolute access only), mapped on first use (with
   * positioned reads: read onto the heap on first use and kept).
   */
  public ByteBuffer chunk(int k) {
    ByteBuffer b = chunks.get(k);
    if (b != null) {
      return b;
    }
    long start = (long) k * chunkBytes;
    long size = Math.min(chunkBytes, length - start);
    if (positioned) {
      ByteBuffer copy = ByteBuffer.allocate((int) size);
      MappedReads.readFully(resource, reader, dataOffset + start, copy);
      copy.clear().order(ByteOrder.LITTLE_ENDIAN);
      return chunks.compareAndSet(k, null, copy) ? copy : chunks.get(k);
    }
    try {
      MappedByteBuffer m = MappedReads.map(channel, dataOffset + start, size);
      m.order(ByteOrder.LITTLE_ENDIAN);
      if (!chunks.compareAndSet(k, null, m)) {
        return chunks.get(k);
      }
      return m;
    } catch (ClosedChannelException e) {
      throw new DatasetClosedException(resource);
    } catch (IOException e) {
      throw new DatasetIOException(resource, "cannot map bytes [" + (dataOffset + start) + ", "
          + (dataOffset + start + size) + "): " + e.getMessage(), e);
    }
  }

  /**
   * With positioned reads through a {@link BlockCache}: touches the cached rows a gather is about to
   * copy ({@link BlockCache#touch}); otherwise does nothing and returns 0.
   */
  int touchCached(long[] rows, int[] positions, int from, int to, int rowBytes, int lines) {
    return cache == null ? 0 : cache.touch(dataOffset, rows, positions, from, to, rowBytes, lines);
  }

  /** True when the region is read with positioned reads through a {@link BlockCache}. */
  boolean hasCache() {
    return cache != null;
  }

  /**
   * {@link BlockCache#copyRows} of region rows {@code indices[from..from+count) - base}, which must
   * exist; false when the cache cannot serve them (the caller reads them from the file).
   */
  boolean copyCachedRows(long[] indices, int from, int count, long base, int rowBytes, ByteBuffer dst, int dstRow) {
    int lines = (Math.min(rowBytes, 256) + 63) >>> 6;
    try {
      return cache.copyRows(dataOffset, indices, from, count, base, rowBytes, dst, dstRow, lines);
    } catch (ClosedChannelException e) {
      throw new DatasetClosedException(resource);
    } catch (IOException e) {
      throw new DatasetIOException(resource, "cannot read rows " + (indices[from] - base) + "..: " + e.getMessage(), e);
    }
  }

  private boolean cached(long position, int n, ByteBuffer dst, int at) {
    try {
      return cache.copy(position, n, dst, at);
    } catch (ClosedChannelException e) {
      throw new DatasetClosedException(resource);
    } catch (IOException e) {
      throw new DatasetIOException(resource, "cannot read bytes [" + position + ", " + (position + n) + "): "
          + e.getMessage(), e);
    }
  }

  /**
   * Copies region bytes {@code [start, start + length)} to {@code dst} at {@code at} (its position
   * and limit unchanged): chunk by chunk from the mappings, or with one positioned read straight into
   * {@code dst}.
   *
   * @throws dev.sluice.core.DatasetFormatException with positioned reads, when the file shrank under
   *     the read (names the file, the offset and expected versus found bytes)
   */
  public void copyTo(long start, long length, ByteBuffer dst, int at) {
    if (positioned) {
      int n = Math.toIntExact(length);
      if (cache != null && cached(dataOffset + start, n, dst, at)) {
        return;
      }
      MappedReads.readFully(resource, reader, dataOffset + start, dst.slice(at, n));
      return;
    }
    long done = 0;
    while (done < length) {
      long p = start + done;
      ByteBuffer chunk = chunk(chunkIndex(p));
      int pos = positionInChunk(p);
      int take = (int) Math.min(length - done, chunk.limit() - pos);
      dst.put(at + (int) done, chunk, pos, take);
      done += take;
    }
  }
}
