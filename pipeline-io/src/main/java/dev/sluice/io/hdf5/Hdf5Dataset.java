package dev.sluice.io.hdf5;

import dev.sluice.core.Dataset;
import dev.sluice.core.Example;
import dev.sluice.core.HasSchema;
import dev.sluice.core.spi.Fingerprinted;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * Datasets of one HDF5 or netCDF-4 file read as one dataset whose fields are those datasets: row
 * {@code i} holds row {@code i} of each. When every chosen dataset is contiguous (or compact, or
 * strings) it is also a {@link dev.sluice.core.RandomAccessDataset} over a mapping of the file;
 * when one is chunked it is a {@link dev.sluice.core.BatchSplitDataset} whose splits are runs of
 * whole chunks along the first dimension.
 *
 * <p>{@link #close()} closes the file: later reads throw
 * {@link dev.sluice.core.DatasetClosedException} ("already closed: &lt;file&gt;"). Views handed out
 * before stay valid; their mappings are released by the GC once the last view is gone.
 */
public interface Hdf5Dataset extends Dataset<Example>, HasSchema, Fingerprinted, AutoCloseable {

  /** The file this dataset was opened from. */
  Path path();

  /** The HDF5 paths of the datasets that are the fields, in field order ({@code /x}, {@code /group/y}). */
  List<String> datasetPaths();

  /**
   * The attributes of the file ({@code "/"}) and of each chosen dataset (by its path), each a map
   * from attribute name to its value: a string, a number, a boolean, or a list of those (an array
   * attribute). Objects without attributes are absent; attributes of types jhdf cannot read, and
   * netCDF-4's bookkeeping attributes ({@code DIMENSION_LIST}, {@code _Netcdf4Dimid}, ...), are
   * left out.
   */
  Map<String, Map<String, Object>> attributes();

  /** Closes the file; idempotent. */
  @Override
  void close();
}
