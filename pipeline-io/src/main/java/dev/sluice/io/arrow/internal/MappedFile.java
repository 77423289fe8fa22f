package dev.sluice.io.arrow.internal;

import dev.sluice.core.DatasetClosedException;
import dev.sluice.core.DatasetFormatException;
import dev.sluice.core.DatasetIOException;
import dev.sluice.core.UnsupportedFormatException;
import dev.sluice.core.internal.mapped.MappedChunks;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.FileChannel;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A file mapped read-only in chunks of at most {@code maxChunkBytes}, handing out views of byte
 * ranges: a range inside a chunk is a slice of it; a range across a chunk boundary (a record batch
 * body that straddles one) gets a mapping of its own. Nothing is unmapped explicitly: the
 * collector releases a mapping when its last view is gone.
 */
final class MappedFile implements AutoCloseable {
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

  /** Opens {@code path}; nothing is mapped until a range is asked for. */
  static MappedFile open(Path path, long maxChunkBytes) {
    String resource = path.toString();
    FileChannel ch;
    try {
      ch = FileChannel.open(path, StandardOpenOption.READ);
    } catch (NoSuchFileException e) {
      throw new DatasetIOException(resource, "no such file", e);
    } catch (IOException e) {
      throw new DatasetIOException(resource, "cannot open: " + e.getMessage(), e);
    }
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

  String resource() {
    return resource;
  }

  long size() {
    return size;
  }

  /**
   * A little-endian read-only view of bytes {@code [offset, offset + length)}.
   *
   * @param what what the range holds, for the message when it lies outside the file
   */
  ByteBuffer region(long offset, long length, String what) {
    if (offset < 0 || length < 0 || offset > size || length > size - offset) {
      throw new DatasetFormatException(resource, "byte " + offset, what + " at [" + offset + ", " + (offset + length)
          + ") runs past the end of the file (" + size + " bytes): the file is truncated or damaged");
    }
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

  /** The whole file as one view when it is mapped in one chunk, else null. */
  ByteBuffer whole() {
    return size > 0 && size <= Integer.MAX_VALUE && chunks.chunkCount() == 1
        ? chunks.chunk(0).duplicate().order(ByteOrder.LITTLE_ENDIAN) : null;
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
