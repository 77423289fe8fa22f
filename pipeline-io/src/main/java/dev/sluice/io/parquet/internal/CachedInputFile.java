package dev.sluice.io.parquet.internal;

import dev.sluice.core.DatasetException;
import dev.sluice.io.internal.cache.CachedFile;
import java.io.IOException;
import java.nio.ByteBuffer;
import org.apache.parquet.io.InputFile;
import org.apache.parquet.io.SeekableInputStream;

/**
 * A remote Parquet file read through the node-local remote cache ({@link CachedFile}): the footer
 * remotely on open, then row groups from a mapping of the downloaded copy. Every read copies.
 */
public final class CachedInputFile implements InputFile {
  private final CachedFile file;

  public CachedInputFile(CachedFile file) {
    this.file = file;
  }

  /** The cached file. */
  public CachedFile file() {
    return file;
  }

  @Override
  public long getLength() {
    return file.size();
  }

  @Override
  public SeekableInputStream newStream() {
    return new CopyingInputStream(file.resource(), file.size()) {
      @Override
      protected int copy(ByteBuffer dst) throws IOException {
        int n = (int) Math.min(dst.remaining(), length - pos);
        if (n <= 0) {
          return 0;
        }
        try {
          file.readFully(pos, dst.slice(dst.position(), n));
        } catch (DatasetException e) {
          throw new IOException(e.getMessage(), e);
        }
        dst.position(dst.position() + n);
        pos += n;
        return n;
      }
    };
  }

  @Override
  public String toString() {
    return file.resource();
  }
}
