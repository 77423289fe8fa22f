package dev.sluice.io.hdf5.internal;

import dev.sluice.core.DatasetFormatException;
import dev.sluice.core.Tensor;
import dev.sluice.core.TensorSpec;
import dev.sluice.core.internal.mapped.MappedChunks;
import dev.sluice.core.internal.mapped.MappedRows;
import dev.sluice.io.internal.ByteSwap;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

/**
 * Reads the rows of one field. Contiguous data is mapped: little-endian rows are views of the
 * mapping and batch columns are filled by bulk copies, big-endian rows are swapped after the copy.
 * Chunked data is decoded chunk by chunk ({@link ChunkDecoder}); compact data and strings are read
 * once, when the file is opened.
 */
final class FieldReader {
  private final Hdf5File file;
  private final Hdf5Field field;
  private final String resource;
  private final TensorSpec spec;
  private final int rowBytes;
  private final MappedRows mapped; // contiguous, else null
  private final MappedChunks chunks; // contiguous with data, else null
  private final ByteBuffer memory; // compact: every row, little-endian; else null
  private final byte[][] utf8; // strings, else null
  private final ChunkDecoder decoder; // chunked, else null

  FieldReader(Hdf5File file, Hdf5Field field, long maxChunkBytes) {
    this.file = file;
    this.field = field;
    this.resource = file.resource();
    this.spec = field.spec();
    this.rowBytes = field.isNumeric() ? field.rowBytes() : -1;
    this.decoder = field.storage() == Hdf5Field.Storage.CHUNKED
        ? new ChunkDecoder(resource, field, nonZeroFill(field), fletcherLast(field)) : null;
    switch (field.storage()) {
      case CONTIGUOUS -> {
        long bytes = field.rows() * rowBytes;
        this.chunks = bytes == 0 ? null
            : new MappedChunks(resource, file.channel(), field.dataOffset(), bytes, rowBytes, maxChunkBytes);
        this.mapped = new MappedRows(resource, chunks, field.rows(), rowBytes);
        this.memory = null;
        this.utf8 = null;
      }
      case COMPACT -> {
        this.mapped = null;
        this.chunks = null;
        this.memory = compact();
        this.utf8 = null;
      }
      case STRINGS -> {
        this.mapped = null;
        this.chunks = null;
        this.memory = null;
        String[] s = field.strings();
        this.utf8 = new byte[s.length][];
        for (int i = 0; i < s.length; i++) {
          utf8[i] = s[i].getBytes(StandardCharsets.UTF_8);
        }
      }
      default -> {
        this.mapped = null;
        this.chunks = null;
        this.memory = null;
        this.utf8 = null;
      }
    }
  }

  private ByteBuffer compact() {
    ByteBuffer raw;
    try {
      raw = field.dataset().getDataBuffer();
    } catch (RuntimeException e) {
      throw new DatasetFormatException(resource, "dataset " + field.hdfPath(), "cannot read its compact data: "
          + Hdf5File.describe(e), e);
    }
    long bytes = field.rows() * rowBytes;
    if (raw.remaining() < bytes) {
      throw new DatasetFormatException(resource, "dataset " + field.hdfPath(), "its compact data holds "
          + raw.remaining() + " bytes but " + field.rows() + " rows of " + rowBytes + " bytes need " + bytes);
    }
    ByteBuffer copy = ByteBuffer.allocate((int) bytes).order(ByteOrder.LITTLE_ENDIAN);
    copy.put(0, raw, raw.position(), (int) bytes);
    ByteSwap.swap(copy, 0, (int) bytes, field.swapWidth());
    return copy;
  }

  Hdf5Field field() {
    return field;
  }

  TensorSpec spec() {
    return spec;
  }

  boolean isString() {
    return utf8 != null;
  }

  /** Row {@code row} (checked in bounds) as a tensor: a view of the mapping where the bytes allow. */
  Tensor row(long row) {
    if (utf8 != null) {
      return Tensor.ofString(field.strings()[(int) row]);
    }
    if (mapped != null) {
      ByteBuffer v = mapped.view(row);
      if (field.bigEndian()) {
        ByteBuffer copy = ByteBuffer.allocate(rowBytes).order(ByteOrder.LITTLE_ENDIAN);
        copy.put(0, v, 0, rowBytes);
        ByteSwap.swap(copy, 0, rowBytes, field.swapWidth());
        v = copy;
      }
      return Tensor.wrap(spec.dtype(), spec.shape(), v);
    }
    if (memory != null) {
      return Tensor.wrap(spec.dtype(), spec.shape(), memory.slice((int) row * rowBytes, rowBytes));
    }
    ByteBuffer b = block(row, 1);
    return Tensor.wrap(spec.dtype(), spec.shape(), b);
  }

  /** The UTF-8 bytes of string row {@code row}. */
  ByteBuffer stringBytes(long row) {
    return ByteBuffer.wrap(utf8[(int) row]);
  }

  /**
   * Copies rows {@code indices[from..from+count)} (checked in bounds) of a fixed-length field of a
   * random-access file into {@code dst} from row {@code startRow}.
   */
  void copy(long[] indices, int from, int count, ByteBuffer dst, int startRow, boolean oneRun) {
    if (rowBytes == 0) {
      return;
    }
    if (mapped != null) {
      mapped.copy(indices, from, count, 0, dst, startRow, oneRun);
      ByteSwap.swap(dst, startRow * rowBytes, count * rowBytes, field.swapWidth());
    } else {
      for (int i = 0; i < count; i++) {
        dst.put((startRow + i) * rowBytes, memory, (int) indices[from + i] * rowBytes, rowBytes);
      }
    }
  }

  /**
   * Decodes rows {@code [first, first+count)} (checked in bounds) of a fixed-length field into
   * {@code dst} from byte {@code dstOffset}, little-endian: chunks straight into it, other data copied.
   */
  void decodeInto(long first, int count, ByteBuffer dst, int dstOffset) {
    file.checkOpen();
    if (decoder != null) {
      decoder.decode(first, count, dst, dstOffset);
    } else {
      ByteBuffer rows = block(first, count);
      dst.put(dstOffset, rows, 0, rows.remaining());
    }
  }

  /**
   * Rows {@code [first, first+count)} of a fixed-length field as little-endian bytes, {@code count
   * × rowBytes} of them, in a new heap buffer.
   */
  ByteBuffer block(long first, int count) {
    file.checkOpen();
    long bytes = (long) count * rowBytes;
    if (bytes > Integer.MAX_VALUE) {
      throw new IllegalArgumentException(count + " rows of " + rowBytes + " bytes do not fit one buffer");
    }
    if (bytes == 0) {
      return ByteBuffer.allocate(0).order(ByteOrder.LITTLE_ENDIAN);
    }
    ByteBuffer out;
    switch (field.storage()) {
      case CONTIGUOUS -> {
        mapped.checked(first, count);
        out = ByteBuffer.allocate((int) bytes).order(ByteOrder.LITTLE_ENDIAN);
        MappedRows.copyRange(chunks, first * rowBytes, bytes, out, 0);
      }
      case COMPACT -> {
        out = ByteBuffer.allocate((int) bytes).order(ByteOrder.LITTLE_ENDIAN);
        out.put(0, memory, (int) (first * rowBytes), (int) bytes);
        return out;
      }
      case CHUNKED -> {
        out = ByteBuffer.allocate((int) bytes).order(ByteOrder.LITTLE_ENDIAN);
        decoder.decode(first, count, out, 0);
        return out;
      }
      default -> throw new IllegalStateException("a string field has no fixed-length rows");
    }
    ByteSwap.swap(out, 0, (int) bytes, field.swapWidth());
    return out;
  }

  /** True when fletcher32 is the last filter applied, so that each stored chunk ends with its checksum. */
  private static boolean fletcherLast(Hdf5Field field) {
    var filters = field.dataset().getFilters();
    return !filters.isEmpty() && filters.get(filters.size() - 1).getId() == Fletcher32.FILTER_ID;
  }

  /**
   * True when a chunk that was never written would read as something other than zeros: such chunks
   * would be delivered as zeros, so for these datasets every chunk a read needs is checked to exist.
   */
  private static boolean nonZeroFill(Hdf5Field field) {
    Object fill;
    try {
      fill = field.dataset().getFillValue();
    } catch (RuntimeException e) {
      return true;
    }
    if (fill == null) {
      return false;
    }
    if (fill instanceof Number n) {
      double d = n.doubleValue();
      return d != 0 || Double.isNaN(d);
    }
    return true;
  }
}
