package dev.sluice.io.npy.internal;

import dev.sluice.core.DatasetClosedException;
import dev.sluice.core.DatasetIOException;
import dev.sluice.core.Example;
import dev.sluice.core.IoMode;
import dev.sluice.core.Shape;
import dev.sluice.core.Tensor;
import dev.sluice.core.TensorSpec;
import dev.sluice.core.internal.Fingerprints;
import dev.sluice.core.internal.Resources;
import dev.sluice.core.internal.mapped.BlockCache;
import dev.sluice.core.internal.mapped.FileInput;
import dev.sluice.core.internal.mapped.MappedChunks;
import dev.sluice.core.internal.mapped.MappedReads;
import dev.sluice.core.internal.mapped.MappedRows;
import dev.sluice.core.internal.mapped.PositionedReader;
import dev.sluice.core.spi.BatchBuilder;
import dev.sluice.io.internal.ByteSwap;
import dev.sluice.io.internal.cache.CachedFile;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads the rows of one {@code .npy} file from a chunked read-only mapping
 * ({@link IoMode#MMAP}) or with positioned reads ({@link IoMode#READ}: rows are heap copies, and a
 * gather copies each run of adjacent rows out of the file's cached blocks ({@link BlockCache}), or,
 * for a file larger than the cache's budget, reads it with one positioned read into the batch column).
 *
 * <p>Little-endian C-order rows are zero-copy views of the mapping. Big-endian values are copied
 * and byte-swapped (a view of the mapping would show them in the wrong order), and Fortran-order
 * rows, whose values are strided through the whole file, are copied value by value into C order.
 * {@link #copyRows} writes rows into a batch's columns with one bulk copy per contiguous run of
 * indices where the layout allows it.
 */
final class NpyArrayReader implements AutoCloseable {
  private final Path path; // null for a file named by a remote URI
  private final String resource;
  private final NpyHeader header;
  private final AutoCloseable file;
  private final String fingerprint;
  private final MappedChunks mapped; // null when the data region is empty
  private final List<NpyField> fields;
  private final List<TensorSpec> specs;
  private final long rows;
  private final long rowBytes;
  private final boolean singleField; // one field covering the whole item
  private final MappedRows cOrderRows; // the rows of a single-field C-order array, else null
  private volatile boolean closed;

  private NpyArrayReader(Path path, NpyHeader header, FileChannel channel, long maxChunkBytes, IoMode mode) {
    this(path, header, channel, maxChunkBytes, mode, mode == IoMode.READ && header.dataBytes() > 0
        ? BlockCache.over(channel::read, header.dataOffset() + header.dataBytes()) : null);
  }

  private NpyArrayReader(Path path, NpyHeader header, FileChannel channel, long maxChunkBytes, IoMode mode,
      BlockCache cache) {
    this(path, path.toString(), header, cache == null ? channel : closingBoth(cache, channel), null,
        header.dataBytes() == 0 ? null
            : cache != null ? MappedChunks.positioned(path.toString(), cache, header.dataOffset(), header.dataBytes(),
                unitBytes(header), maxChunkBytes)
            : MappedChunks.of(mode, path.toString(), channel, header.dataOffset(), header.dataBytes(),
                unitBytes(header), maxChunkBytes));
  }

  /** Closes {@code cache} (waiting for reads in progress), then {@code file}. */
  private static AutoCloseable closingBoth(BlockCache cache, AutoCloseable file) {
    return () -> {
      try {
        cache.close();
      } finally {
        file.close();
      }
    };
  }

  private NpyArrayReader(Path path, String resource, NpyHeader header, AutoCloseable file, String fingerprint,
      MappedChunks chunks) {
    this.path = path;
    this.resource = resource;
    this.header = header;
    this.file = file;
    this.fingerprint = fingerprint;
    this.fields = header.fields();
    this.rows = header.rows();
    this.rowBytes = header.rowBytes();
    this.mapped = chunks;
    this.singleField = !header.isStructured();
    this.cOrderRows = singleField && !header.isFortranOrder()
        ? new MappedRows(resource, mapped, rows, Math.toIntExact(rowBytes)) : null;
    List<TensorSpec> s = new ArrayList<>();
    Shape rowShape = header.rowShape();
    for (NpyField f : fields) {
      s.add(new TensorSpec(f.name(), f.dtype(), concat(rowShape, f.subShape())));
    }
    this.specs = List.copyOf(s);
  }

  private static long unitBytes(NpyHeader header) {
    return header.isFortranOrder() ? header.itemSize() : header.rowBytes();
  }

  /**
   * Reads the header of an open remote file and reads its rows with positioned reads from it; closes
   * {@code file} if that fails.
   *
   * @param fingerprint what identifies this version of the file (URI, size, modification time)
   */
  static NpyArrayReader open(FileInput file, PositionedReader reader, String fingerprint, String fieldName,
      long maxChunkBytes) {
    String resource = file.resource();
    try {
      NpyHeader h = NpyHeader.read(resource, reader, file.size(), fieldName);
      if (file instanceof CachedFile c) {
        c.opened(); // the header was read remotely; the first row read downloads the file
      }
      if (h.dataBytes() == 0) {
        return new NpyArrayReader(null, resource, h, file, fingerprint, null);
      }
      // a file served from the node-local copy is already a mapping: no blocks on top of it
      BlockCache cache = file instanceof CachedFile ? null : BlockCache.over(reader, file.size());
      return new NpyArrayReader(null, resource, h, cache == null ? file : closingBoth(cache, file), fingerprint,
          MappedChunks.positioned(resource, cache == null ? reader : cache, h.dataOffset(), h.dataBytes(),
              unitBytes(h), maxChunkBytes));
    } catch (IOException e) {
      DatasetIOException failure = new DatasetIOException(resource, "cannot read its header: " + e.getMessage(), e);
      try {
        file.close();
      } catch (RuntimeException suppressed) {
        failure.addSuppressed(suppressed);
      }
      throw failure;
    } catch (RuntimeException e) {
      try {
        file.close();
      } catch (RuntimeException suppressed) {
        e.addSuppressed(suppressed);
      }
      throw e;
    }
  }

  /** Opens {@code path}, reads and checks its header; closes the channel if that fails. */
  static NpyArrayReader open(Path path, String fieldName, long maxChunkBytes) {
    return open(path, fieldName, maxChunkBytes, IoMode.MMAP);
  }

  /** Opens {@code path} to be read in {@code mode}; closes the channel if that fails. */
  static NpyArrayReader open(Path path, String fieldName, long maxChunkBytes, IoMode mode) {
    String resource = path.toString();
    FileChannel ch = FileInput.openChannel(path);
    try {
      NpyHeader h = NpyHeader.read(resource, ch, fieldName);
      return new NpyArrayReader(path, h, ch, maxChunkBytes, mode);
    } catch (IOException e) {
      closeQuietly(ch);
      throw new DatasetIOException(resource, "cannot read: " + e, e);
    } catch (RuntimeException e) {
      closeQuietly(ch);
      throw e;
    }
  }

  /** Reads only the header of {@code path} (no mapping), closing the file again. */
  static NpyHeader readHeader(Path path, String fieldName) {
    String resource = path.toString();
    try (FileChannel ch = FileChannel.open(path, StandardOpenOption.READ)) {
      return NpyHeader.read(resource, ch, fieldName);
    } catch (NoSuchFileException e) {
      throw new DatasetIOException(resource, "no such file", e);
    } catch (IOException e) {
      throw new DatasetIOException(resource, "cannot read: " + e, e);
    }
  }

  private static void closeQuietly(FileChannel ch) {
    try {
      ch.close();
    } catch (IOException ignored) {
      // the open already failed; that error is the one to report
    }
  }

  static Shape concat(Shape a, Shape b) {
    long[] da = a.dims();
    long[] db = b.dims();
    long[] d = new long[da.length + db.length];
    System.arraycopy(da, 0, d, 0, da.length);
    System.arraycopy(db, 0, d, da.length, db.length);
    return Shape.of(d);
  }

  /** The local file, or null for a file named by a remote URI. */
  Path path() {
    return path;
  }

  /** What identifies this version of the file (name, size, modification time), for checkpoints. */
  String fingerprint() {
    return fingerprint != null ? fingerprint : Fingerprints.file(path);
  }

  String resource() {
    return resource;
  }

  NpyHeader header() {
    return header;
  }

  List<TensorSpec> specs() {
    return specs;
  }

  long rows() {
    return rows;
  }

  void checkOpen() {
    if (closed) {
      throw new DatasetClosedException(resource);
    }
  }

  /** Puts the fields of row {@code row} into {@code out}: views of the mapping where possible. */
  void putRow(long row, Example.Builder out) {
    checkOpen();
    for (int f = 0; f < fields.size(); f++) {
      NpyField field = fields.get(f);
      TensorSpec spec = specs.get(f);
      int fb = Math.toIntExact(spec.rowBytes());
      if (fb == 0) {
        out.put(field.name(), Tensor.wrap(spec.dtype(), spec.shape(), ByteBuffer.allocate(0)));
        continue;
      }
      if (header.isFortranOrder()) {
        ByteBuffer copy = ByteBuffer.allocate(fb).order(ByteOrder.LITTLE_ENDIAN);
        copyFortranRow(row, copy, 0, field);
        ByteSwap.swap(copy, 0, fb, field.swapWidth());
        out.put(field.name(), Tensor.wrap(spec.dtype(), spec.shape(), copy));
        continue;
      }
      long start = row * rowBytes + field.offset();
      if (!mapped.isMapped()) {
        ByteBuffer copy = ByteBuffer.allocate(fb).order(ByteOrder.LITTLE_ENDIAN);
        mapped.copyTo(start, fb, copy, 0);
        ByteSwap.swap(copy, 0, fb, field.bigEndian() ? field.swapWidth() : 1);
        out.put(field.name(), Tensor.wrap(spec.dtype(), spec.shape(), copy));
        continue;
      }
      ByteBuffer chunk = mapped.chunk(mapped.chunkIndex(start));
      int pos = mapped.positionInChunk(start);
      // touch the first and last byte here, so a file truncated under us fails at this boundary;
      // the loads feed a field so that no compiler can drop them as dead
      MappedReads.consume(chunk.get(pos) + chunk.get(pos + fb - 1));
      if (field.bigEndian()) {
        ByteBuffer copy = ByteBuffer.allocate(fb).order(ByteOrder.LITTLE_ENDIAN);
        copy.put(0, chunk, pos, fb);
        ByteSwap.swap(copy, 0, fb, field.swapWidth());
        out.put(field.name(), Tensor.wrap(spec.dtype(), spec.shape(), copy));
      } else {
        out.put(field.name(), Tensor.wrap(spec.dtype(), spec.shape(), chunk.slice(pos, fb)));
      }
    }
  }

  /**
   * Copies rows {@code indices[from..from+count) - base} into rows {@code startRow..} of the target
   * columns {@code fieldBase..}, without committing them.
   *
   * @param oneRun the caller found {@code indices[from..from+count)} consecutive ({@link MappedRows#isOneRun}),
   *     once for all the arrays of a dataset
   */
  void copyRows(long[] indices, int from, int count, long base, BatchBuilder target, int fieldBase, int startRow,
      boolean oneRun) {
    checkOpen();
    for (int f = 0; f < fields.size(); f++) {
      NpyField field = fields.get(f);
      int fb = Math.toIntExact(specs.get(f).rowBytes());
      if (fb == 0) {
        continue;
      }
      ByteBuffer dst = target.fixedColumn(fieldBase + f);
      if (header.isFortranOrder()) {
        for (int i = 0; i < count; i++) {
          copyFortranRow(checked(indices[from + i] - base, 1), dst, (startRow + i) * fb, field);
        }
      } else if (singleField) {
        cOrderRows.copy(indices, from, count, base, dst, startRow, oneRun);
      } else {
        for (int i = 0; i < count; i++) {
          long start = checked(indices[from + i] - base, 1) * rowBytes + field.offset();
          mapped.copyTo(start, fb, dst, (startRow + i) * fb);
        }
      }
      if (field.bigEndian()) {
        ByteSwap.swap(dst, startRow * fb, count * fb, field.swapWidth());
      }
    }
  }

  /** {@code first}, after checking that rows {@code [first, first+run)} exist. */
  private long checked(long first, int run) {
    return MappedRows.checkRows(first, run, rows, resource);
  }

  /** Row {@code row} of a Fortran-order array, value by value, into C order at {@code dst[at..]}. */
  private void copyFortranRow(long row, ByteBuffer dst, int at, NpyField field) {
    long[] shape = header.shape();
    int w = header.itemSize();
    int rank = shape.length;
    long[] idx = new long[rank]; // odometer over dims 1..rank-1, last fastest (C order)
    long items = header.itemsPerRow();
    for (long k = 0; k < items; k++) {
      // Fortran linear index: row + n0 * (j1 + n1 * (j2 + ...))
      long lin = 0;
      for (int d = rank - 1; d >= 1; d--) {
        lin = lin * shape[d] + idx[d];
      }
      long off = (row + shape[0] * lin) * w + field.offset();
      mapped.copyTo(off, w, dst, at + (int) (k * w));
      for (int d = rank - 1; d >= 1; d--) {
        if (++idx[d] < shape[d]) {
          break;
        }
        idx[d] = 0;
      }
    }
  }


  boolean isClosed() {
    return closed;
  }

  /**
   * Closes every reader (nulls skipped), even when one fails; rethrows the first failure with the
   * others suppressed.
   */
  static void closeAll(Iterable<NpyArrayReader> readers) {
    Resources.closeAll(readers);
  }

  /** Closes the file; mappings stay until the GC drops their last view. Idempotent. */
  @Override
  public void close() {
    closed = true;
    try {
      file.close();
    } catch (RuntimeException e) {
      throw e;
    } catch (Exception e) {
      throw new DatasetIOException(resource, "cannot close: " + e, e);
    }
  }
}
