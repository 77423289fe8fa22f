package dev.sluice.io.npy.internal;

import dev.sluice.core.DType;
import dev.sluice.core.Example;
import dev.sluice.core.Shape;
import dev.sluice.core.Tensor;
import dev.sluice.core.TensorSpec;
import dev.sluice.core.UnsupportedFormatException;
import dev.sluice.core.internal.mapped.MappedReads;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import dev.sluice.core.DatasetIOException;
import dev.sluice.io.internal.RemoteFiles;
import dev.sluice.io.internal.RemoteInput;
import dev.sluice.io.internal.ByteSwap;
import dev.sluice.io.internal.cache.CachedFile;
import dev.sluice.io.internal.cache.CopyCheck;
import java.io.IOException;
import java.nio.file.Path;

/** Whole {@code .npy} arrays as one value each: what a directory of one {@code .npy} per sample holds. */
public final class NpyArrays {
  private NpyArrays() {}

  /**
   * The dtype and shape of the array in {@code file}, from its header alone.
   *
   * @throws UnsupportedFormatException for a structured dtype (several fields per item)
   */
  public static TensorSpec spec(Path file, String name) {
    return spec(NpyArrayReader.readHeader(file, name), name);
  }

  /** {@link #spec(Path, String)} of the open remote file {@code in} (left open). */
  public static TensorSpec spec(RemoteInput in, String name) {
    try {
      return spec(NpyHeader.read(in.resource(), in, in.size(), name), name);
    } catch (IOException e) {
      throw new DatasetIOException(in.resource(), "cannot read its header: " + RemoteFiles.scrub(e.getMessage()), e);
    }
  }

  private static TensorSpec spec(NpyHeader h, String name) {
    checkPlain(h);
    return new TensorSpec(name, h.fields().get(0).dtype(), Shape.of(h.shape()));
  }

  /**
   * {@link #read(Path, String)} of the remote file {@code in}: its header, then its whole data
   * region with one positioned read straight into the tensor's buffer (no block cache); big-endian
   * values are swapped and a Fortran-order array reordered in that buffer's copy. Closes {@code in}.
   */
  public static Tensor read(RemoteInput in, String name) {
    try (in) {
      NpyHeader h;
      try {
        h = NpyHeader.read(in.resource(), in, in.size(), name);
      } catch (IOException e) {
        throw new DatasetIOException(in.resource(), "cannot read its header: " + RemoteFiles.scrub(e.getMessage()), e);
      }
      checkPlain(h);
      if (in instanceof CachedFile c) {
        c.opened(); // the data read below downloads the file, or reads its local copy
      }
      ByteBuffer all = ByteBuffer.allocate(tensorBytes(h)).order(ByteOrder.LITTLE_ENDIAN);
      if (all.capacity() > 0) {
        in.readFully(h.dataOffset(), all);
        all.flip();
      }
      return toTensor(h, all);
    }
  }

  /**
   * What a cached copy of an {@code .npy} file must pass before it is published: a valid header whose
   * shape and dtype fit the copy's length.
   */
  public static CopyCheck copyCheck(String name) {
    return (resource, copy, size) -> NpyHeader.read(resource, copy, name);
  }

  private static int tensorBytes(NpyHeader h) {
    long bytes = h.dataBytes();
    if (bytes > Integer.MAX_VALUE) {
      throw new UnsupportedFormatException(h.resource(), "header", "shape " + NpyHeader.tuple(h.shape()) + " of "
          + h.fields().get(0).dtype() + " is " + bytes + " bytes; one sample tensor holds at most " + Integer.MAX_VALUE);
    }
    return (int) bytes;
  }

  /** The file's data region {@code raw}, as read, turned into a little-endian C-order tensor in place or by one copy. */
  private static Tensor toTensor(NpyHeader h, ByteBuffer raw) {
    NpyField f = h.fields().get(0);
    ByteBuffer c = h.isFortranOrder() && h.shape().length > 1 ? fortranToC(raw, h.shape(), h.itemSize()) : raw;
    if (f.bigEndian()) {
      ByteSwap.swap(c, 0, c.limit(), f.swapWidth());
    }
    return Tensor.wrap(f.dtype(), Shape.of(h.shape()), c);
  }

  /** The items of a Fortran-order array, {@code width} bytes each, copied into C order. */
  private static ByteBuffer fortranToC(ByteBuffer f, long[] shape, int width) {
    int rank = shape.length;
    long[] stride = new long[rank]; // Fortran strides, in items
    stride[0] = 1;
    for (int d = 1; d < rank; d++) {
      stride[d] = stride[d - 1] * shape[d - 1];
    }
    ByteBuffer c = ByteBuffer.allocate(f.limit()).order(ByteOrder.LITTLE_ENDIAN);
    long items = f.limit() / width;
    long[] idx = new long[rank]; // odometer in C order, last dimension fastest
    for (long k = 0; k < items; k++) {
      long at = 0;
      for (int d = 0; d < rank; d++) {
        at += idx[d] * stride[d];
      }
      c.put((int) (k * width), f, (int) (at * width), width);
      for (int d = rank - 1; d >= 0; d--) {
        if (++idx[d] < shape[d]) {
          break;
        }
        idx[d] = 0;
      }
    }
    return c;
  }

  /**
   * The whole array in {@code file} as one little-endian C-order tensor (a copy: any byte or memory
   * order is converted), of the dtype and shape its header gives (a 0-d array is a scalar).
   *
   * @throws dev.sluice.core.DatasetFormatException "changed while mapped" when the file shrinks
   *     under the read
   */
  public static Tensor read(Path file, String name) {
    try (NpyArrayReader r = NpyArrayReader.open(file, name, Integer.MAX_VALUE)) {
      return read(r, name);
    }
  }

  private static Tensor read(NpyArrayReader r, String name) {
    NpyHeader h = r.header();
    checkPlain(h);
    DType dtype = h.fields().get(0).dtype();
    long[] shape = h.shape();
    long bytes = h.dataBytes();
    if (bytes > Integer.MAX_VALUE) {
      throw new UnsupportedFormatException(h.resource(), "header", "shape " + NpyHeader.tuple(shape) + " of "
          + dtype + " is " + bytes + " bytes; one sample tensor holds at most " + Integer.MAX_VALUE);
    }
    ByteBuffer all = ByteBuffer.allocate((int) bytes).order(ByteOrder.LITTLE_ENDIAN);
    MappedReads.run(r.resource(), null, () -> {
      for (long i = 0; i < r.rows(); i++) {
        all.put(row(r, i, name).data());
      }
    });
    return Tensor.wrap(dtype, Shape.of(shape), all.flip());
  }

  private static Tensor row(NpyArrayReader r, long i, String name) {
    Example.Builder b = Example.builder(i);
    r.putRow(i, b);
    return b.build().tensor(name);
  }

  private static void checkPlain(NpyHeader h) {
    if (h.isStructured()) {
      throw new UnsupportedFormatException(h.resource(), "header", "a structured dtype (" + h.descr() + ") holds "
          + "several fields per item; a sample file must hold one plain array");
    }
  }
}
