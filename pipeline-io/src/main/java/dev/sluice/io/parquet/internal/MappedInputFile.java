package dev.sluice.io.parquet.internal;

import dev.sluice.core.DatasetException;
import dev.sluice.core.internal.mapped.MappedFile;
import java.io.IOException;
import java.nio.file.Path;
import org.apache.parquet.io.InputFile;
import org.apache.parquet.io.SeekableInputStream;

/**
 * A local file read through a memory mapping (chunks of 1 GiB, a {@link MappedFile} mapped whole
 * and detached from its file descriptor): parquet-java's reads of column chunks become one copy
 * out of the page cache instead of a {@code read} system call plus a copy through a temporary
 * native buffer. Nothing that views the mapping escapes (every read copies), so the mapping is
 * left to the GC (docs/architecture.md, lifetimes). A file truncated while mapped fails the read
 * with an {@link IOException} ("changed while mapped") instead of a JVM-fatal error.
 */
public final class MappedInputFile implements InputFile {
  private static final int CHUNK = 1 << 30;

  private final Path path;
  private volatile MappedFile mapped;

  public MappedInputFile(Path path) {
    this.path = path;
  }

  private MappedFile mapped() throws IOException {
    MappedFile m = mapped;
    if (m == null) {
      synchronized (this) {
        m = mapped;
        if (m == null) {
          try {
            m = MappedFile.open(path, CHUNK);
            m.detach();
          } catch (DatasetException e) {
            if (e.getCause() instanceof IOException io) {
              throw io; // NoSuchFileException and the like, as parquet-java's callers expect
            }
            throw new IOException(e.getMessage(), e);
          }
          mapped = m;
        }
      }
    }
    return m;
  }

  /**
   * Drops this file's reference to its mapping (streams already open keep theirs); the next read
   * maps the file again.
   */
  synchronized void release() {
    mapped = null;
  }

  @Override
  public long getLength() throws IOException {
    return mapped().size();
  }

  @Override
  public SeekableInputStream newStream() throws IOException {
    MappedFile m = mapped();
    return CopyingInputStream.over(m);
  }

  @Override
  public String toString() {
    return path.toString();
  }
}
