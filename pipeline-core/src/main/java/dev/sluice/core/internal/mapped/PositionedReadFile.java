package dev.sluice.core.internal.mapped;

import dev.sluice.core.DatasetIOException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;

/**
 * A {@link FileInput} served by positioned reads ({@link FileChannel#read(ByteBuffer, long)}):
 * no mapping, so no page of the file counts in the process's memory beyond what is copied out,
 * and a file that shrinks under a read is reported as "truncated" by the read itself. A view is a
 * copy of its range on the heap. Safe for concurrent use: positioned reads do not move a shared
 * position.
 */
public final class PositionedReadFile extends PositionedInput {
  private final FileChannel channel;

  private PositionedReadFile(String resource, FileChannel channel, long size) {
    super(resource, size);
    this.channel = channel;
  }

  /**
   * Opens {@code path}.
   *
   * @throws DatasetIOException when the file cannot be opened
   */
  public static PositionedReadFile open(Path path) {
    return LocalFile.open(path, PositionedReadFile::new);
  }

  @Override
  public int read(ByteBuffer dst, long position) throws IOException {
    return channel.read(dst, position);
  }

  @Override
  public void close() {
    LocalFile.close(resource(), channel);
  }
}
