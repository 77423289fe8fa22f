package dev.sluice.io.hdf5.internal;

import dev.sluice.core.DType;
import dev.sluice.core.TensorSpec;
import io.jhdf.dataset.DatasetBase;

/**
 * One HDF5 dataset read as one field: its dtype and row shape, its byte order and where its data
 * lies.
 *
 * @param hdfPath the dataset's path in the file ({@code /group/x})
 * @param spec the field (named after the dataset), its shape that of one row
 * @param rows the dataset's first dimension
 * @param bigEndian true when the file stores the values big-endian (delivered little-endian)
 * @param storage where the data lies
 * @param dataOffset byte offset of a contiguous dataset's data in the file, else -1
 * @param chunkRows rows per chunk along the first dimension of a chunked dataset, else 0
 * @param strings the values of a string dataset (read whole when the file is opened), else null
 * @param dataset jhdf's dataset, for chunked and compact data
 */
record Hdf5Field(String hdfPath, TensorSpec spec, long rows, boolean bigEndian, Storage storage, long dataOffset,
    int chunkRows, String[] strings, DatasetBase dataset) {

  /** Where a field's values come from. */
  enum Storage {
    /** One region of the file, mapped. */
    CONTIGUOUS,
    /** Chunks (possibly filtered), decoded by jhdf. */
    CHUNKED,
    /** Stored inside the object header, read by jhdf. */
    COMPACT,
    /** A string dataset held in memory. */
    STRINGS
  }

  /** Bytes of one row of a fixed-length field. */
  int rowBytes() {
    return Math.toIntExact(spec.rowBytes());
  }

  /** Width of the units to byte-swap, 1 when none. */
  int swapWidth() {
    return bigEndian ? spec.dtype().byteSize() : 1;
  }

  boolean isNumeric() {
    return storage != Storage.STRINGS;
  }

  DType dtype() {
    return spec.dtype();
  }
}
