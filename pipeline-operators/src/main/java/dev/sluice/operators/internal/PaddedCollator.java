package dev.sluice.operators.internal;

import dev.sluice.core.Batch;
import dev.sluice.core.DType;
import dev.sluice.core.Example;
import dev.sluice.core.Schema;
import dev.sluice.core.Shape;
import dev.sluice.core.Tensor;
import dev.sluice.core.TensorSpec;
import dev.sluice.core.spi.BatchBuilder;
import dev.sluice.core.spi.BufferPool;
import dev.sluice.core.spi.ColumnBuilder;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Pads and collates a list of examples into one {@link Batch} (see {@code PaddedBatch}): works out
 * each field's padded shape, then writes the rows through a {@link BatchBuilder} whose columns are
 * {@linkplain ColumnBuilder#pad padded}.
 */
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
    List<String> names = new ArrayList<>(first.names());
    List<TensorSpec> specs = new ArrayList<>(names.size());
    Tensor[][] rows = new Tensor[names.size()][n];
    for (int f = 0; f < names.size(); f++) {
      specs.add(paddedSpec(names.get(f), examples, rows[f]));
    }
    long[] indices = new long[n];
    for (int i = 0; i < n; i++) {
      indices[i] = examples.get(i).index();
    }
    try (BatchBuilder b = BatchBuilder.create(Schema.of(specs), n, pool)) {
      for (int f = 0; f < names.size(); f++) {
        String name = names.get(f);
        try {
          b.column(f).pad(paddingValues.get(name));
        } catch (IllegalArgumentException e) {
          throw new IllegalArgumentException("paddedBatch: " + e.getMessage(), e);
        }
        for (int i = 0; i < n; i++) {
          b.column(f).setPadded(i, rows[f][i]);
        }
      }
      b.commitRows(indices, 0, n);
      return b.build();
    }
  }

  /**
   * The spec of field {@code name} padded for {@code examples}: the declared padded shape, its
   * {@code -1} dimensions the longest in the batch. Puts the examples' values in {@code rows}.
   */
  private TensorSpec paddedSpec(String name, List<Example> examples, Tensor[] rows) {
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
    for (int i = 0; i < rows.length; i++) {
      Example e = examples.get(i);
      Tensor t = tensor(e, name);
      rows[i] = t;
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
      long[] bound = ColumnBuilder.paddedDims(t);
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
    }
    return new TensorSpec(name, dtype, Shape.of(target));
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
}
