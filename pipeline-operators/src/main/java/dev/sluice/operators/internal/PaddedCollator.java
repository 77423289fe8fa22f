package dev.sluice.operators.internal;

import dev.sluice.core.Batch;
import dev.sluice.core.BufferPool;
import dev.sluice.core.Column;
import dev.sluice.core.DType;
import dev.sluice.core.Example;
import dev.sluice.core.Float16;
import dev.sluice.core.PooledBuffer;
import dev.sluice.core.Schema;
import dev.sluice.core.Shape;
import dev.sluice.core.Tensor;
import dev.sluice.core.TensorSpec;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** Pads and collates a list of examples into one {@link Batch} (see {@code PaddedBatch}). */
public final class PaddedCollator {
  private final Map<String, Shape> paddedShapes;
  private final Map<String, ? extends Number> paddingValues;
  private final BufferPool pool;

  public PaddedCollator(Map<String, Shape> paddedShapes, Map<String, ? extends Number> paddingValues, BufferPool pool) {
    this.paddedShapes = paddedShapes;
    this.paddingValues = paddingValues;
    this.pool = pool;
  }

  public Batch collate(List<Example> examples) {
    int n = examples.size();
    Example first = examples.get(0);
    List<PooledBuffer> owned = new ArrayList<>();
    try {
      List<TensorSpec> specs = new ArrayList<>();
      List<Column> columns = new ArrayList<>();
      long[] indices = new long[n];
      for (int i = 0; i < n; i++) {
        indices[i] = examples.get(i).index();
      }
      for (String name : first.names()) {
        Column c = column(name, examples, owned);
        specs.add(c.spec());
        columns.add(c);
      }
      return Batch.ofPooled(Schema.of(specs), columns, indices, owned);
    } catch (RuntimeException e) {
      owned.forEach(PooledBuffer::close);
      throw e;
    }
  }

  private Column column(String name, List<Example> examples, List<PooledBuffer> owned) {
    int n = examples.size();
    Tensor t0 = tensor(examples.get(0), name);
    DType dtype = t0.dtype();
    if (dtype.isVariableLength()) {
      throw new IllegalArgumentException("paddedBatch: field '" + name + "' is " + dtype
          + "; only numeric fields are padded (use batch for string and bytes fields)");
    }
    int rank = t0.shape().rank();
    Shape declared = paddedShapes.get(name);
    if (declared != null && declared.rank() != rank) {
      throw new IllegalArgumentException("paddedBatch: padded shape " + declared + " of field '" + name
          + "' has rank " + declared.rank() + " but example " + examples.get(0).index() + " has shape " + t0.shape());
    }
    long[] target = new long[rank];
    for (int d = 0; d < rank; d++) {
      target[d] = declared != null && declared.dim(d) >= 0 ? declared.dim(d) : 0;
    }
    Tensor[] rows = new Tensor[n];
    for (int i = 0; i < n; i++) {
      Example e = examples.get(i);
      Tensor t = tensor(e, name);
      if (t.dtype() != dtype) {
        throw new IllegalArgumentException("paddedBatch: field '" + name + "' of example " + e.index() + " is "
            + t.dtype() + " but example " + examples.get(0).index() + " has " + dtype);
      }
      if (t.shape().rank() != rank) {
        throw new IllegalArgumentException("paddedBatch: field '" + name + "' of example " + e.index() + " has shape "
            + t.shape() + " but example " + examples.get(0).index() + " has rank " + rank);
      }
      if (t.hasNulls()) {
        throw new IllegalArgumentException("paddedBatch: field '" + name + "' of example " + e.index()
            + " holds null elements, which padding would turn into values; use batch to keep them");
      }
      long[] bound = bound(t);
      for (int d = 0; d < rank; d++) {
        long dim = bound[d];
        if (declared != null && declared.dim(d) >= 0) {
          if (dim > declared.dim(d)) {
            throw new IllegalArgumentException("paddedBatch: field '" + name + "' of example " + e.index()
                + " has shape " + t.shape() + (t.isRagged() ? " (at most " + Shape.of(bound) + ")" : "")
                + " which does not fit the padded shape " + declared);
          }
        } else {
          target[d] = Math.max(target[d], dim);
        }
      }
      rows[i] = t;
    }
    Shape rowShape = Shape.of(target);
    int item = dtype.byteSize();
    long rowBytes = rowShape.numElements() * item;
    PooledBuffer values = pool.allocate(rowBytes * n);
    owned.add(values);
    ByteBuffer v = values.buffer();
    fill(v, (int) (rowBytes * n), dtype, paddingValues.get(name), name);
    for (int i = 0; i < n; i++) {
      copyPadded(rows[i], v, (int) (i * rowBytes), target, item);
    }
    TensorSpec spec = new TensorSpec(name, dtype, rowShape);
    Tensor valuesTensor = Tensor.wrap(dtype, rowShape.prepend(n), v.slice(0, (int) (rowBytes * n)));
    Tensor lengths = null;
    if (rank > 0) {
      PooledBuffer len = pool.allocate(8L * n * rank);
      owned.add(len);
      ByteBuffer l = len.buffer();
      for (int i = 0; i < n; i++) {
        for (int d = 0; d < rank; d++) {
          l.putLong((i * rank + d) * 8, bound(rows[i])[d]);
        }
      }
      lengths = Tensor.wrap(DType.INT64, Shape.of(n, rank), l.slice(0, 8 * n * rank));
    }
    return new Column(spec, n, valuesTensor, null, null, lengths);
  }

  private static Tensor tensor(Example e, String name) {
    if (!e.has(name)) {
      throw new IllegalArgumentException("paddedBatch: example " + e.index() + " has no field '" + name + "'; fields are "
          + e.names());
    }
    if (e.isNull(name)) {
      throw new IllegalArgumentException("paddedBatch: field '" + name + "' of example " + e.index() + " is null");
    }
    return e.tensor(name);
  }

  /**
   * The smallest dense shape that holds {@code t}: its dimensions, where a ragged one is the
   * longest of its items.
   */
  private static long[] bound(Tensor t) {
    long[] dims = t.shape().dims();
    if (!t.isRagged()) {
      return dims;
    }
    java.util.Arrays.fill(dims, 1, dims.length, 0);
    for (long i = 0; i < dims[0]; i++) {
      long[] inner = bound(t.slice(i));
      for (int d = 0; d < inner.length; d++) {
        dims[d + 1] = Math.max(dims[d + 1], inner[d]);
      }
    }
    return dims;
  }

  /** Copies {@code row} (row-major) into the padded slot at {@code base}, one innermost run at a time. */
  private static void copyPadded(Tensor row, ByteBuffer target, int base, long[] padded, int item) {
    if (row.isRagged()) { // each item into its own padded block
      long block = item;
      for (int d = 1; d < padded.length; d++) {
        block *= padded[d];
      }
      long[] inner = java.util.Arrays.copyOfRange(padded, 1, padded.length);
      for (long i = 0, n = row.shape().dim(0); i < n; i++) {
        copyPadded(row.slice(i), target, (int) (base + i * block), inner, item);
      }
      return;
    }
    ByteBuffer src = row.data();
    long[] dims = row.shape().dims();
    int rank = dims.length;
    if (rank == 0) {
      target.put(base, src, 0, item);
      return;
    }
    long count = row.shape().numElements();
    if (count == 0) {
      return;
    }
    int run = (int) (dims[rank - 1] * item);
    long outer = count / dims[rank - 1];
    long[] idx = new long[rank - 1];
    for (long o = 0; o < outer; o++) {
      // Offset of row index idx in the padded layout.
      long off = 0;
      for (int d = 0; d < rank - 1; d++) {
        off = off * padded[d] + idx[d];
      }
      off = off * padded[rank - 1];
      target.put(base + (int) (off * item), src, (int) (o * run), run);
      for (int d = rank - 2; d >= 0; d--) {
        if (++idx[d] < dims[d]) {
          break;
        }
        idx[d] = 0;
      }
    }
  }

  private static void fill(ByteBuffer b, int bytes, DType dtype, Number value, String name) {
    if (value == null || value.doubleValue() == 0 && !(dtype.isFloatingPoint() && 1 / value.doubleValue() < 0)) {
      for (int i = 0; i < bytes; i++) {
        b.put(i, (byte) 0);
      }
      return;
    }
    int item = dtype.byteSize();
    for (int i = 0; i < bytes; i += item) {
      switch (dtype) {
        case BOOL, INT8, UINT8 -> b.put(i, value.byteValue());
        case INT16, UINT16 -> b.putShort(i, value.shortValue());
        case INT32, UINT32 -> b.putInt(i, value.intValue());
        case INT64, UINT64 -> b.putLong(i, value.longValue());
        case FLOAT16 -> b.putShort(i, Float16.fromFloat(value.floatValue()));
        case BFLOAT16 -> b.putShort(i, (short) (Float.floatToIntBits(value.floatValue()) >>> 16));
        case FLOAT32 -> b.putFloat(i, value.floatValue());
        case FLOAT64 -> b.putDouble(i, value.doubleValue());
        default -> throw new IllegalArgumentException("paddedBatch: cannot pad field '" + name + "' of dtype " + dtype
            + " with " + value);
      }
    }
  }
}
