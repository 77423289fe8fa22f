package dev.sluice.io.parquet.internal;

import dev.sluice.io.internal.cache.CachedFile;
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
    return CopyingInputStream.over(file);
  }

  /** A stream for metadata reads (page indexes while planning): never the cause of a download ({@link CachedFile#metadata()}). */
  SeekableInputStream newMetadataStream() {
    return CopyingInputStream.over(file.metadata());
  }

  @Override
  public String toString() {
    return file.resource();
  }
}
