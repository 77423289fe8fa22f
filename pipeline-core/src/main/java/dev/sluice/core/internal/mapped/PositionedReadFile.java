package dev.sluice.core.internal.mapped;

import dev.sluice.core.DatasetIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;

/**
 * A {@link FileInput} served by positioned reads ({@link FileChannel#read(ByteBuffer, long)}):
 * no mapping, so no page of the file counts in the process's memory beyond what is copied out,
 * and a file that shrinks under a read is reported as "truncated" by the read itself. A view is a
 * copy of its range on the heap. Safe for concurrent use: positioned reads do not move a shared
 * position.
 */
public final class PositionedReadFile extends LocalFile {
  private PositionedReadFile(String resource, FileChannel channel, long size) {
    super(resource, channel, size);
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
  public ByteBuffer region(long offset, long length, String what) {
    checkRegion(offset, length, what);
    ByteBuffer copy = ByteBuffer.allocate((int) length);
    readFully(offset, copy);
    return copy.flip().asReadOnlyBuffer().order(ByteOrder.LITTLE_ENDIAN);
  }

  @Override
  public void readFully(long offset, ByteBuffer dst) {
    int n = dst.remaining();
    FileInput.checkRange(resource, size, offset, n, "a read of " + n + " bytes");
    MappedReads.readFully(resource, channel, offset, dst);
  }
}
