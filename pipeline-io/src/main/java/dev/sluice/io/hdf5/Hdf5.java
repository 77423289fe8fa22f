package dev.sluice.io.hdf5;

import dev.sluice.core.internal.OptionalLibrary;
import dev.sluice.io.hdf5.internal.ChunkedHdf5Dataset;
import dev.sluice.io.hdf5.internal.Hdf5File;
import dev.sluice.io.hdf5.internal.MappedHdf5Dataset;
import java.nio.file.Path;
import java.util.List;

/**
 * HDF5 and netCDF-4 sources, read with jhdf (pure Java).
 *
 * <pre>{@code
 * try (Hdf5Dataset data = Hdf5.open(Path.of("features.h5"), "/x", "/y", "/edge")) {
 *   Example e = ((RandomAccessDataset<Example>) data).get(17);   // fields x, y, edge
 * }
 * }</pre>
 *
 * <p>The chosen datasets (every top-level dataset by default; netCDF-4 dimensions that are not
 * variables are skipped) must share their first dimension: row {@code i} of the result holds row
 * {@code i} of each, as a field named after the dataset. Integers of 1 to 8 bytes (signed and
 * unsigned), floats of 2, 4 and 8 bytes in either byte order (big-endian values are delivered
 * little-endian), h5py's booleans, and one-dimensional fixed- and variable-length string datasets
 * are read. Contiguous data is mapped; chunked data is decoded one whole chunk at a time (shuffle,
 * deflate and fletcher32 by Sluice, LZF and LZ4 by jhdf) after each chunk's fletcher32 checksum,
 * where it has one, is verified. Virtual datasets, external storage, compound, array,
 * enum and variable-length sequence types and unknown filters are refused with one
 * {@link dev.sluice.core.UnsupportedFormatException} naming the file, the dataset and the feature.
 */
public final class Hdf5 {
  /** Default largest mapping: 1 GiB, rounded down to a whole number of rows. */
  public static final long DEFAULT_MAX_CHUNK_BYTES = 1L << 30;

  private Hdf5() {}

  /**
   * Opens {@code file} with the datasets {@code datasetPaths} as fields ({@code "/x"} or
   * {@code "x"}, {@code "/group/y"}); every top-level dataset when none are named.
   *
   * @throws dev.sluice.core.DatasetFormatException naming the file (and dataset) for a file that is
   *     not readable HDF5, a missing dataset, datasets of unequal first dimension or with equal names
   * @throws dev.sluice.core.DatasetIOException when the file is missing or unreadable
   * @throws dev.sluice.core.MissingDependencyException when jhdf ({@code io.jhdf:jhdf}) is not on
   *     the class path
   */
  public static Hdf5Dataset open(Path file, String... datasetPaths) {
    return open(file, List.of(datasetPaths), DEFAULT_MAX_CHUNK_BYTES);
  }

  /**
   * {@link #open(Path, String...)} with the largest single mapping given: contiguous data is mapped
   * in chunks of at most {@code maxChunkBytes}, each a whole number of rows (tests use tiny values).
   *
   * @param datasetPaths the datasets to read, every top-level one when empty
   * @param maxChunkBytes in [1, {@link Integer#MAX_VALUE}]
   */
  public static Hdf5Dataset open(Path file, List<String> datasetPaths, long maxChunkBytes) {
    if (maxChunkBytes < 1 || maxChunkBytes > Integer.MAX_VALUE) {
      throw new IllegalArgumentException("maxChunkBytes in [1, " + Integer.MAX_VALUE + "] required but it was " + maxChunkBytes);
    }
    OptionalLibrary.JHDF.require(file.toString());
    Hdf5File f = Hdf5File.open(file, datasetPaths);
    try {
      return f.isRandomAccess() ? new MappedHdf5Dataset(f, maxChunkBytes) : new ChunkedHdf5Dataset(f, maxChunkBytes);
    } catch (RuntimeException e) {
      try {
        f.close();
      } catch (RuntimeException suppressed) {
        e.addSuppressed(suppressed);
      }
      throw e;
    }
  }
}
