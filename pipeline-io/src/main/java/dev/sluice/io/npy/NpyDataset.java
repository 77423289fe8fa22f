package dev.sluice.io.npy;

import dev.sluice.core.Example;
import dev.sluice.core.HasSchema;
import dev.sluice.core.RandomAccessDataset;
import dev.sluice.core.spi.Fingerprinted;
import java.nio.file.Path;

/**
 * A memory-mapped NumPy source: one {@code .npy} file, a directory of aligned named arrays, or an
 * npy stack ({@link NpyStack}). Rows are read by index; little-endian C-order rows are zero-copy
 * views of the mapping.
 *
 * <p>{@link #close()} closes the files: later reads throw
 * {@link dev.sluice.core.DatasetClosedException} ("already closed: &lt;file&gt;"). Views handed out
 * before stay valid; their mappings are released by the GC once the last view is gone.
 */
public interface NpyDataset extends RandomAccessDataset<Example>, HasSchema, Fingerprinted, AutoCloseable {

  /** The local file or directory this dataset was opened from; null when it was opened from a remote URI. */
  Path path();

  /** The file, directory or URI this dataset was opened from, as given. */
  default String location() {
    return String.valueOf(path());
  }

  /** Closes the underlying files; idempotent. */
  @Override
  void close();
}
