package dev.sluice.io.hdf5;


import dev.sluice.core.DatasetIOException;
import dev.sluice.core.internal.OptionalLibrary;
import dev.sluice.io.hdf5.internal.ChunkedHdf5Dataset;
import dev.sluice.io.hdf5.internal.Hdf5File;
import dev.sluice.io.hdf5.internal.MappedHdf5Dataset;
import dev.sluice.io.internal.RemoteFiles;
import dev.sluice.io.internal.RemoteInput;
import java.io.IOException;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
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
    return of(Hdf5File.open(file, datasetPaths), maxChunkBytes);
  }

  /**
   * Opens the HDF5 file named by {@code uri} with the datasets {@code datasetPaths} as fields
   * (every top-level one when empty). A {@code file:} URI (or one without a scheme) is
   * {@link #open(Path, List, long)}. HDF5 is not read in place from other schemes
   * ({@code hdfs://}, {@code s3a://}, ...): jhdf needs a local file, so the whole remote file is
   * first copied, through Hadoop's {@code FileSystem}, to a temporary file in
   * {@code java.io.tmpdir} (as much local disk as the file's size), which
   * {@link Hdf5Dataset#close()} deletes. Messages name the URI; the fingerprint is the remote
   * file's (URI, size, modification time).
   *
   * @throws dev.sluice.core.DatasetIOException naming the URI when it is missing or cannot be read
   *     or copied
   * @throws dev.sluice.core.MissingDependencyException when jhdf, or Hadoop for a remote URI, is
   *     not on the class path
   */
  public static Hdf5Dataset open(URI uri, List<String> datasetPaths) {
    if (!RemoteFiles.isRemote(uri)) {
      return open(RemoteFiles.localPath(uri), datasetPaths, DEFAULT_MAX_CHUNK_BYTES);
    }
    OptionalLibrary.JHDF.require(uri.toString());
    Path copy;
    try {
      copy = Files.createTempFile("sluice-hdf5-", ".h5");
    } catch (IOException e) {
      throw new DatasetIOException(uri.toString(), "cannot create a local temporary copy: " + e, e);
    }
    Hdf5File f;
    try {
      String fingerprint;
      try (RemoteInput in = RemoteFiles.open(uri);
          FileChannel out = FileChannel.open(copy, StandardOpenOption.WRITE)) {
        ByteBuffer piece = ByteBuffer.allocate(1 << 20);
        for (long at = 0; at < in.size(); ) {
          piece.clear().limit((int) Math.min(piece.capacity(), in.size() - at));
          in.readFully(at, piece);
          piece.flip();
          while (piece.hasRemaining()) {
            at += out.write(piece);
          }
        }
        fingerprint = in.fingerprint();
      } catch (IOException e) {
        throw new DatasetIOException(uri.toString(), "cannot copy to the local temporary file " + copy + ": " + e, e);
      }
      f = Hdf5File.open(copy, uri.toString(), datasetPaths);
      f.deleteOnClose(copy, fingerprint);
    } catch (RuntimeException e) {
      try {
        Files.deleteIfExists(copy);
      } catch (IOException suppressed) {
        e.addSuppressed(suppressed);
      }
      throw e;
    }
    return of(f, DEFAULT_MAX_CHUNK_BYTES);
  }

  private static Hdf5Dataset of(Hdf5File f, long maxChunkBytes) {
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
