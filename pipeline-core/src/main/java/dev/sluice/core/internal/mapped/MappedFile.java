package dev.sluice.core.internal.mapped;

import dev.sluice.core.DatasetClosedException;
import dev.sluice.core.DatasetIOException;
import dev.sluice.core.UnsupportedFormatException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A {@link FileInput} mapped read-only in chunks of at most {@code maxChunkBytes}: a range inside a
 * chunk is a slice of it; a range across a chunk boundary gets a mapping of its own. Nothing is
 * unmapped explicitly: the collector releases a mapping when its last view is gone. Copies run
 * inside the read boundary ({@link MappedReads}).
 */
public final class MappedFile implements FileInput {
  private final String resource;
  private final FileChannel channel;
  private final long size;
  private final MappedChunks chunks;
  private final ConcurrentHashMap<Long, ByteBuffer> straddling = new ConcurrentHashMap<>();

  private MappedFile(String resource, FileChannel channel, long size, long maxChunkBytes) {
    this.resource = resource;
    this.channel = channel;
    this.size = size;
    this.chunks = new MappedChunks(resource, channel, 0, size, 1, maxChunkBytes);
  }

  /**
   * Opens {@code path}; nothing is mapped until a range is asked for.
   *
   * @param maxChunkBytes the largest single mapping, in [1, {@link Integer#MAX_VALUE}]
   * @throws DatasetIOException when the file cannot be opened
   */
  public static MappedFile open(Path path, long maxChunkBytes) {
    String resource = path.toString();
    FileChannel ch = FileInput.openChannel(path);
    try {
      return new MappedFile(resource, ch, ch.size(), maxChunkBytes);
    } catch (IOException | RuntimeException e) {
      try {
        ch.close();
      } catch (IOException suppressed) {
        e.addSuppressed(suppressed);
      }
      if (e instanceof RuntimeException r) {
        throw r;
      }
      throw new DatasetIOException(resource, "cannot read: " + e.getMessage(), e);
    }
  }

  @Override
  public String resource() {
    return resource;
  }

  @Override
  public long size() {
    return size;
  }

  @Override
  public ByteBuffer region(long offset, long length, String what) {
    FileInput.checkRange(resource, size, offset, length, what);
    if (length > Integer.MAX_VALUE) {
      throw new UnsupportedFormatException(resource, "byte " + offset, what + " of " + length
          + " bytes is larger than 2 GiB, which Sluice reads in one piece; write smaller record batches");
    }
    if (length == 0) {
      return ByteBuffer.allocate(0).order(ByteOrder.LITTLE_ENDIAN);
    }
    int k = chunks.chunkIndex(offset);
    if (chunks.chunkIndex(offset + length - 1) == k) {
      ByteBuffer c = chunks.chunk(k);
      return c.slice(chunks.positionInChunk(offset), (int) length).order(ByteOrder.LITTLE_ENDIAN);
    }
    ByteBuffer b = straddling.get(offset);
    if (b == null || b.capacity() < length) {
      try {
        b = channel.map(FileChannel.MapMode.READ_ONLY, offset, length);
      } catch (ClosedChannelException e) {
        throw new DatasetClosedException(resource);
      } catch (IOException e) {
        throw new DatasetIOException(resource, "cannot map bytes [" + offset + ", " + (offset + length) + "): "
            + e.getMessage(), e);
      }
      straddling.put(offset, b);
    }
    return b.slice(0, (int) length).order(ByteOrder.LITTLE_ENDIAN);
  }

  @Override
  public void readFully(long offset, ByteBuffer dst) {
    int n = dst.remaining();
    FileInput.checkRange(resource, size, offset, n, "a read of " + n + " bytes");
    MappedReads.run(resource, null, () -> MappedRows.copyRange(chunks, offset, n, dst, dst.position()));
    dst.position(dst.position() + n);
  }

  @Override
  public ByteBuffer whole() {
    return size > 0 && size <= Integer.MAX_VALUE && chunks.chunkCount() == 1
        ? chunks.chunk(0).duplicate().order(ByteOrder.LITTLE_ENDIAN) : null;
  }

  /**
   * Maps every chunk now and closes the file: reads go on from the mappings (released by the GC
   * once this and its views are gone) and the process holds no file descriptor for it.
   */
  public void detach() {
    MappedReads.run(resource, null, () -> {
      for (int k = 0; k < chunks.chunkCount(); k++) {
        chunks.chunk(k);
      }
    });
    close();
  }

  /** Closes the file: ranges not mapped yet can no longer be (views handed out stay valid). */
  @Override
  public void close() {
    try {
      channel.close();
    } catch (IOException e) {
      throw new DatasetIOException(resource, "cannot close: " + e.getMessage(), e);
    }
  }
}
