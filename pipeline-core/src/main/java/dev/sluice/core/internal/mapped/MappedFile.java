package dev.sluice.core.internal.mapped;

import dev.sluice.core.DatasetClosedException;
import dev.sluice.core.DatasetIOException;
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
public final class MappedFile extends LocalFile {
  private final MappedChunks chunks;
  private final ConcurrentHashMap<Long, ByteBuffer> straddling = new ConcurrentHashMap<>();

  private MappedFile(String resource, FileChannel channel, long size, long maxChunkBytes) {
    super(resource, channel, size);
    this.chunks = new MappedChunks(resource, channel, 0, size, 1, maxChunkBytes);
  }

  /**
   * Opens {@code path}; nothing is mapped until a range is asked for.
   *
   * @param maxChunkBytes the largest single mapping, in [1, {@link Integer#MAX_VALUE}]
   * @throws DatasetIOException when the file cannot be opened
   */
  public static MappedFile open(Path path, long maxChunkBytes) {
    return LocalFile.open(path, (resource, ch, size) -> new MappedFile(resource, ch, size, maxChunkBytes));
  }

  @Override
  public ByteBuffer region(long offset, long length, String what) {
    checkRegion(offset, length, what);
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
        b = MappedReads.map(channel, offset, length);
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
}
