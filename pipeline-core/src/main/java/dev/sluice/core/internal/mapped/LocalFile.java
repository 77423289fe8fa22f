package dev.sluice.core.internal.mapped;

import dev.sluice.core.DatasetIOException;
import dev.sluice.core.UnsupportedFormatException;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;

/** What a mapped {@link FileInput} holds: the file's name, its open channel and its size when opened. */
abstract class LocalFile implements FileInput {
  final String resource;
  final FileChannel channel;
  final long size;

  LocalFile(String resource, FileChannel channel, long size) {
    this.resource = resource;
    this.channel = channel;
    this.size = size;
  }

  /** Makes a {@link FileInput} of an open channel. */
  @FunctionalInterface
  interface Maker<T extends FileInput> {
    /** The input over {@code channel}, of {@code size} bytes. */
    T make(String resource, FileChannel channel, long size);
  }

  /**
   * Opens {@code path} and makes the input over it; closes the file when that fails.
   *
   * @throws DatasetIOException "no such file", "cannot open" or "cannot read"
   */
  static <T extends FileInput> T open(Path path, Maker<T> maker) {
    String resource = path.toString();
    FileChannel ch = FileInput.openChannel(path);
    try {
      return maker.make(resource, ch, ch.size());
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

  /**
   * Checks a range that is read as one view: inside the file, and at most 2 GiB.
   *
   * @throws dev.sluice.core.DatasetFormatException when it runs past the end
   * @throws UnsupportedFormatException when it is larger than 2 GiB
   */
  void checkRegion(long offset, long length, String what) {
    checkRegion(resource, size, offset, length, what);
  }

  /** {@link #checkRegion(long, long, String)} of a file of {@code size} bytes named {@code resource}. */
  static void checkRegion(String resource, long size, long offset, long length, String what) {
    FileInput.checkRange(resource, size, offset, length, what);
    if (length > Integer.MAX_VALUE) {
      throw new UnsupportedFormatException(resource, "byte " + offset, what + " of " + length
          + " bytes is larger than 2 GiB, which Sluice reads in one piece; write smaller record batches");
    }
  }

  @Override
  public void close() {
    close(resource, channel);
  }

  /** Closes {@code channel} of file {@code resource}. */
  static void close(String resource, FileChannel channel) {
    try {
      channel.close();
    } catch (IOException e) {
      throw new DatasetIOException(resource, "cannot close: " + e.getMessage(), e);
    }
  }
}
