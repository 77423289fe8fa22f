package dev.sluice.core.internal.mapped;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.FileChannel;

/**
 * Positioned reads from one open file, as {@link FileChannel#read(ByteBuffer, long)} does them: a
 * local channel ({@code channel::read}) or a Hadoop {@code FileSystem} stream. Reads at different
 * positions may run concurrently; none moves a shared position. {@link MappedReads#readFully} is
 * the one caller that turns what a reader returns or throws into Sluice's errors.
 */
@FunctionalInterface
public interface PositionedReader {
  /**
   * Reads up to {@code dst.remaining()} bytes at {@code position} into {@code dst}, advancing its
   * position.
   *
   * @return the bytes read, at least 1 when {@code dst} has room and the file holds a byte at
   *     {@code position}; -1 at or past the end of the file
   * @throws ClosedChannelException when the file was closed
   * @throws IOException when the read fails
   */
  int read(ByteBuffer dst, long position) throws IOException;
}
