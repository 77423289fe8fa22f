package dev.sluice.io.hdf5.internal;

import dev.sluice.core.DatasetFormatException;
import dev.sluice.core.MemoryManager;
import dev.sluice.core.internal.mapped.MappedReads;
import dev.sluice.core.spi.BufferPool;
import dev.sluice.core.spi.PooledBuffer;
import dev.sluice.io.internal.ByteSwap;
import io.jhdf.api.dataset.ChunkedDataset;
import io.jhdf.exceptions.HdfException;
import io.jhdf.filter.PipelineFilterWithData;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.List;
import java.util.zip.DataFormatException;
import java.util.zip.Inflater;

/**
 * Decodes the rows of one chunked field chunk by chunk into a buffer the caller owns (pooled memory
 * on the columnar path). Each chunk is fetched whole from jhdf as stored ({@code getRawChunkBuffer},
 * a view of the file) and, when its filters are among deflate, shuffle and fletcher32 in the order
 * h5py and netCDF4 apply them, decoded here: inflated and unshuffled into pooled scratch memory (or
 * straight into the destination when the chunk lands there whole). Other filters (LZF, LZ4, ...) go
 * through jhdf's own filter pipeline ({@code getDecompressedChunk}). The decoded chunk's rows that
 * the read asks for are then copied into place; chunks that split the other dimensions are placed
 * run by run. Thread-safe: a decode holds no state between calls, so chunks of one field may be
 * decoded on several threads at once.
 */
final class ChunkDecoder {
  /** HDF5's filter ids. */
  private static final int DEFLATE = 1;
  private static final int SHUFFLE = 2;

  private final String resource;
  private final Hdf5Field field;
  private final ChunkedDataset dataset;
  private final boolean checkMissing; // a missing chunk is an error (non-zero fill value)
  private final boolean verifyFletcher; // fletcher32 is the last filter applied
  private final boolean ownFilters; // the filters are decoded here, else by jhdf
  private final boolean shuffle;
  private final int shuffleSize;
  private final boolean deflate;
  private final long[] dims;
  private final int[] chunkDims;
  private final int elementSize;
  private final int chunkBytes;
  private final boolean wholeRows; // a chunk spans every dimension after the first

  ChunkDecoder(String resource, Hdf5Field field, boolean checkMissing, boolean verifyFletcher) {
    this.resource = resource;
    this.field = field;
    this.dataset = (ChunkedDataset) field.dataset();
    this.checkMissing = checkMissing;
    this.verifyFletcher = verifyFletcher;
    this.dims = dataset.getDimensionsAsLong();
    this.chunkDims = dataset.getChunkDimensions();
    this.elementSize = field.dtype().byteSize();
    long cb = elementSize;
    for (int c : chunkDims) {
      cb *= c;
    }
    this.chunkBytes = Math.toIntExact(cb);
    boolean whole = true;
    for (int d = 1; d < dims.length; d++) {
      whole &= chunkDims[d] == dims[d];
    }
    this.wholeRows = whole;
    // the filters in the order they were applied when writing: [shuffle] [deflate] [fletcher32]
    List<PipelineFilterWithData> filters = dataset.getFilters();
    int i = 0;
    boolean sh = false;
    int shSize = elementSize;
    if (i < filters.size() && filters.get(i).getId() == SHUFFLE) {
      sh = true;
      int[] data = filters.get(i).getFilterData();
      shSize = data != null && data.length > 0 && data[0] > 0 ? data[0] : elementSize;
      i++;
    }
    boolean de = false;
    if (i < filters.size() && filters.get(i).getId() == DEFLATE) {
      de = true;
      i++;
    }
    if (i < filters.size() && filters.get(i).getId() == Fletcher32.FILTER_ID) {
      i++;
    }
    this.ownFilters = i == filters.size();
    this.shuffle = sh;
    this.shuffleSize = shSize;
    this.deflate = de;
  }

  /**
   * Decodes rows {@code [first, first+count)} (in bounds) into {@code dst} from byte
   * {@code dstOffset} on, {@code count × rowBytes} bytes, little-endian. Rows of chunks that were
   * never written are zeros (an error when the dataset's fill value is not zero).
   *
   * @throws DatasetFormatException naming the file, the dataset and the chunk when a chunk cannot be
   *     decoded or fails its checksum
   */
  void decode(long first, int count, ByteBuffer dst, int dstOffset) {
    if (count == 0) {
      return;
    }
    int rowBytes = field.rowBytes();
    BufferPool pool = MemoryManager.shared().pool(ChunkedHdf5Dataset.STAGE);
    long end = first + count;
    int[] at = new int[dims.length];
    for (long r = first / chunkDims[0] * chunkDims[0]; r < end; r += chunkDims[0]) {
      at[0] = Math.toIntExact(r);
      decodeRow(at, 1, first, count, dst, dstOffset, pool);
    }
    ByteSwap.swap(dst, dstOffset, count * rowBytes, field.swapWidth());
  }

  private void decodeRow(int[] at, int d, long first, int count, ByteBuffer dst, int dstOffset, BufferPool pool) {
    if (d == dims.length) {
      chunk(at.clone(), first, count, dst, dstOffset, pool);
      return;
    }
    for (long i = 0; i < dims[d]; i += chunkDims[d]) {
      at[d] = Math.toIntExact(i);
      decodeRow(at, d + 1, first, count, dst, dstOffset, pool);
    }
  }

  /** "dataset /x, chunk at [4096, 0] (rows 4096..8191)": the chunk and the rows it holds. */
  private String where(int[] at) {
    long last = Math.min(dims[0], (long) at[0] + chunkDims[0]) - 1;
    return "dataset " + field.hdfPath() + ", chunk at " + Arrays.toString(at) + " (rows " + at[0] + ".." + last + ")";
  }

  /** Decodes the chunk at {@code at} and places its part of rows {@code [first, first+count)} in {@code dst}. */
  private void chunk(int[] at, long first, int count, ByteBuffer dst, int dstOffset, BufferPool pool) {
    int rowBytes = field.rowBytes();
    long lo = Math.max(first, at[0]);
    long hi = Math.min(Math.min(first + count, (long) at[0] + chunkDims[0]), dims[0]);
    // the chunk lands whole in dst: its rows are whole rows, all of them inside the dataset and asked for
    boolean direct = wholeRows && lo == at[0] && hi == (long) at[0] + chunkDims[0];
    int directAt = dstOffset + (int) ((lo - first) * rowBytes);
    MappedReads.call(resource, where(at), () -> {
      ByteBuffer raw = raw(at);
      if (raw == null) {
        zero(at, lo, hi, first, dst, dstOffset);
        return null;
      }
      if (verifyFletcher) {
        Fletcher32.verify(raw, resource, where(at));
      }
      if (!ownFilters) {
        byte[] decoded;
        try {
          decoded = dataset.getDecompressedChunk(at);
        } catch (RuntimeException e) {
          throw new DatasetFormatException(resource, where(at), "cannot decode: " + Hdf5File.describe(e), e);
        }
        checkSize(at, decoded.length);
        place(at, ByteBuffer.wrap(decoded), lo, hi, first, dst, dstOffset);
        return null;
      }
      if (verifyFletcher) { // the stored bytes end with the checksum
        raw = raw.slice(raw.position(), raw.remaining() - 4);
      }
      PooledBuffer a = null;
      PooledBuffer b = null;
      try {
        ByteBuffer stage = raw;
        if (deflate) {
          ByteBuffer out;
          if (!shuffle && direct) {
            out = dst.slice(directAt, chunkBytes);
          } else {
            a = pool.allocate(chunkBytes);
            out = a.buffer();
          }
          inflate(at, raw, out);
          stage = out;
        } else if (stage.remaining() != chunkBytes) {
          checkSize(at, stage.remaining());
        }
        if (shuffle) {
          ByteBuffer out;
          if (direct) {
            out = dst.slice(directAt, chunkBytes);
          } else {
            b = pool.allocate(chunkBytes);
            out = b.buffer();
          }
          unshuffle(stage, out, shuffleSize);
          stage = out;
        }
        if (!direct || (!deflate && !shuffle)) {
          place(at, stage, lo, hi, first, dst, dstOffset);
        }
      } finally {
        if (a != null) {
          a.close();
        }
        if (b != null) {
          b.close();
        }
      }
      return null;
    });
  }

  /** The chunk at {@code at} as stored, or null when it was never written (and that reads as zeros). */
  private ByteBuffer raw(int[] at) {
    try {
      return dataset.getRawChunkBuffer(at).order(ByteOrder.LITTLE_ENDIAN);
    } catch (HdfException e) {
      String m = String.valueOf(e.getMessage());
      if (m.startsWith("No chunk with offset")) {
        if (checkMissing) {
          throw new DatasetFormatException(resource, where(at), "was never written and the dataset's fill value is"
              + " not zero, which Sluice does not fill in (" + Hdf5File.describe(e) + ")", e);
        }
        return null;
      }
      throw new DatasetFormatException(resource, where(at), "cannot read: " + Hdf5File.describe(e), e);
    } catch (RuntimeException e) {
      throw new DatasetFormatException(resource, where(at), "cannot read: " + Hdf5File.describe(e), e);
    }
  }

  private void checkSize(int[] at, int decoded) {
    if (decoded != chunkBytes) {
      throw new DatasetFormatException(resource, where(at), "decoded " + decoded + " bytes but a chunk of "
          + Arrays.toString(chunkDims) + " values of " + elementSize + " bytes holds " + chunkBytes);
    }
  }

  /** Inflates the zlib stream {@code raw} into {@code out}, which it must fill exactly. */
  private void inflate(int[] at, ByteBuffer raw, ByteBuffer out) {
    Inflater inflater = new Inflater();
    try {
      inflater.setInput(raw.duplicate());
      ByteBuffer o = out.slice(0, chunkBytes);
      while (o.hasRemaining() && !inflater.finished()) {
        int n = inflater.inflate(o);
        if (n == 0 && (inflater.needsInput() || inflater.needsDictionary())) {
          break;
        }
      }
      if (o.hasRemaining() || !inflater.finished()) {
        throw new DatasetFormatException(resource, where(at), "its deflate stream "
            + (o.hasRemaining() ? "ends after " + o.position() + " of " + chunkBytes + " bytes"
                : "holds more than the chunk's " + chunkBytes + " bytes") + ": the chunk is corrupted");
      }
    } catch (DataFormatException e) {
      throw new DatasetFormatException(resource, where(at), "cannot inflate (" + e.getMessage()
          + "): the chunk is corrupted", e);
    } finally {
      inflater.end();
    }
  }

  /** Undoes HDF5's shuffle filter: byte {@code j} of every element was stored together. */
  static void unshuffle(ByteBuffer in, ByteBuffer out, int size) {
    int base = in.position();
    int bytes = in.remaining();
    int n = bytes / size;
    if (size == 4) {
      ByteBuffer src = in.duplicate().order(ByteOrder.LITTLE_ENDIAN);
      ByteBuffer o = out.duplicate().order(ByteOrder.LITTLE_ENDIAN);
      int i = 0;
      for (; i + 8 <= n; i += 8) { // 8 elements: one long from each byte plane
        long b0 = src.getLong(base + i);
        long b1 = src.getLong(base + n + i);
        long b2 = src.getLong(base + 2 * n + i);
        long b3 = src.getLong(base + 3 * n + i);
        for (int k = 0; k < 8; k++) {
          int sh = 8 * k;
          o.putInt((i + k) * 4, (int) ((b0 >>> sh) & 0xff | ((b1 >>> sh) & 0xff) << 8 | ((b2 >>> sh) & 0xff) << 16
              | ((b3 >>> sh) & 0xff) << 24));
        }
      }
      for (; i < n; i++) {
        o.putInt(i * 4, (in.get(base + i) & 0xff) | (in.get(base + n + i) & 0xff) << 8
            | (in.get(base + 2 * n + i) & 0xff) << 16 | in.get(base + 3 * n + i) << 24);
      }
    } else if (size == 8) {
      ByteBuffer src = in.duplicate().order(ByteOrder.LITTLE_ENDIAN);
      ByteBuffer o = out.duplicate().order(ByteOrder.LITTLE_ENDIAN);
      long[] planes = new long[8];
      int i = 0;
      for (; i + 8 <= n; i += 8) { // 8 elements: one long from each byte plane
        for (int j = 0; j < 8; j++) {
          planes[j] = src.getLong(base + j * n + i);
        }
        for (int k = 0; k < 8; k++) {
          int sh = 8 * k;
          long v = 0;
          for (int j = 7; j >= 0; j--) {
            v = v << 8 | ((planes[j] >>> sh) & 0xff);
          }
          o.putLong((i + k) * 8, v);
        }
      }
      for (; i < n; i++) {
        long v = 0;
        for (int j = 7; j >= 0; j--) {
          v = v << 8 | (in.get(base + j * n + i) & 0xff);
        }
        o.putLong(i * 8, v);
      }
    } else {
      for (int j = 0; j < size; j++) {
        int from = base + j * n;
        for (int i = 0; i < n; i++) {
          out.put(i * size + j, in.get(from + i));
        }
      }
    }
    for (int k = n * size; k < bytes; k++) { // bytes after the last whole element are stored as they are
      out.put(k, in.get(base + k));
    }
  }

  /** Copies the part of the decoded chunk {@code chunk} (at {@code at}) holding rows {@code [lo, hi)} into {@code dst}. */
  private void place(int[] at, ByteBuffer chunk, long lo, long hi, long first, ByteBuffer dst, int dstOffset) {
    int rowBytes = field.rowBytes();
    int src0 = chunk.position();
    if (wholeRows) {
      int n = (int) ((hi - lo) * rowBytes);
      dst.put(dstOffset + (int) ((lo - first) * rowBytes), chunk, src0 + (int) ((lo - at[0]) * rowBytes), n);
      return;
    }
    forEachRun(at, lo, hi, (srcElem, dstElem, elems) -> dst.put(dstOffset + (int) ((lo - first) * rowBytes)
        + dstElem * elementSize, chunk, src0 + srcElem * elementSize, elems * elementSize));
  }

  /** Zeros the part of rows {@code [lo, hi)} the missing chunk at {@code at} would hold. */
  private void zero(int[] at, long lo, long hi, long first, ByteBuffer dst, int dstOffset) {
    int rowBytes = field.rowBytes();
    int base = dstOffset + (int) ((lo - first) * rowBytes);
    forEachRun(at, lo, hi, (srcElem, dstElem, elems) -> {
      int from = base + dstElem * elementSize;
      for (int k = 0; k < elems * elementSize; k++) {
        dst.put(from + k, (byte) 0);
      }
    });
  }

  /** A run of values contiguous in both the chunk and the rows. */
  @FunctionalInterface
  private interface Run {
    /** Values {@code [srcElem, srcElem+elems)} of the chunk go to values {@code [dstElem, ...)} from row {@code lo}. */
    void copy(int srcElem, int dstElem, int elems);
  }

  /**
   * The runs of the chunk at {@code at} within rows {@code [lo, hi)}: one per index of every
   * dimension but the last, each as long as the chunk's part of the last dimension.
   */
  private void forEachRun(int[] at, long lo, long hi, Run run) {
    int rank = dims.length;
    int[] ext = new int[rank];
    int[] cs = new int[rank]; // start inside the chunk
    int[] ds = new int[rank]; // start inside the rows [lo, hi)
    ext[0] = (int) (hi - lo);
    cs[0] = (int) (lo - at[0]);
    for (int d = 1; d < rank; d++) {
      ext[d] = (int) Math.min(chunkDims[d], dims[d] - at[d]);
      ds[d] = at[d];
    }
    long[] cStride = new long[rank];
    long[] dStride = new long[rank];
    cStride[rank - 1] = 1;
    dStride[rank - 1] = 1;
    for (int d = rank - 2; d >= 0; d--) {
      cStride[d] = cStride[d + 1] * chunkDims[d + 1];
      dStride[d] = dStride[d + 1] * dims[d + 1];
    }
    int len = ext[rank - 1];
    int[] idx = new int[rank];
    while (true) {
      long s = cs[rank - 1] * cStride[rank - 1];
      long t = (long) ds[rank - 1];
      for (int d = 0; d < rank - 1; d++) {
        s += (cs[d] + idx[d]) * cStride[d];
        t += (ds[d] + idx[d]) * dStride[d];
      }
      run.copy((int) s, (int) t, len);
      int d = rank - 2;
      while (d >= 0) {
        if (++idx[d] < ext[d]) {
          break;
        }
        idx[d] = 0;
        d--;
      }
      if (d < 0) {
        return;
      }
    }
  }
}
