package dev.sluice.core.internal;

import dev.sluice.core.Example;
import dev.sluice.core.HasSchema;
import dev.sluice.core.RandomAccessDataset;
import dev.sluice.core.Schema;
import dev.sluice.core.Tensor;
import dev.sluice.core.TensorSpec;
import dev.sluice.core.spi.BatchBuilder;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** {@code Datasets.fromTensors}: example {@code i} views row {@code i} of every tensor. */
public final class TensorSliceDataset implements RandomAccessDataset<Example>, HasSchema {
  private final Map<String, Tensor> tensors;
  private final String[] names;
  private final Tensor[] columns;
  private final long size;
  private final Schema schema;

  public TensorSliceDataset(Map<String, Tensor> tensors) {
    if (tensors.isEmpty()) {
      throw new IllegalArgumentException("fromTensors needs at least one tensor");
    }
    this.tensors = tensors;
    this.names = tensors.keySet().toArray(new String[0]);
    this.columns = tensors.values().toArray(new Tensor[0]);
    List<TensorSpec> specs = new ArrayList<>();
    long n = -1;
    String first = null;
    for (Map.Entry<String, Tensor> e : tensors.entrySet()) {
      Tensor t = e.getValue();
      if (t.shape().rank() == 0) {
        throw new IllegalArgumentException("tensor '" + e.getKey() + "' is a scalar; fromTensors slices along the first dimension");
      }
      if (t.dtype().isVariableLength()) {
        throw new IllegalArgumentException("tensor '" + e.getKey() + "' is " + t.dtype() + "; fromTensors takes fixed-length tensors");
      }
      long rows = t.shape().dim(0);
      if (n >= 0 && rows != n) {
        throw new IllegalArgumentException("tensor '" + e.getKey() + "' has " + rows + " rows but '" + first + "' has " + n);
      }
      n = rows;
      first = first == null ? e.getKey() : first;
      specs.add(new TensorSpec(e.getKey(), t.dtype(), t.shape().dropFirst()));
    }
    this.size = n;
    this.schema = Schema.of(specs);
  }

  @Override
  public Schema schema() {
    return schema;
  }

  @Override
  public long size() {
    return size;
  }

  @Override
  public Example get(long index) {
    RandomAccessDataset.checkIndex(index, size, this);
    Map<String, Tensor> fields = new LinkedHashMap<>();
    for (int f = 0; f < names.length; f++) {
      fields.put(names[f], columns[f].slice(index));
    }
    return Example.of(index, fields);
  }

  @Override
  public void gather(long[] indices, int from, int count, BatchBuilder target) {
    int start = target.size();
    for (int f = 0; f < columns.length; f++) {
      ByteBuffer dst = target.fixedColumn(f);
      ByteBuffer src = columns[f].data();
      int rowBytes = target.rowBytes(f);
      int row = start;
      for (int i = from; i < from + count; i++, row++) {
        long index = indices[i];
        RandomAccessDataset.checkIndex(index, size, this);
        dst.put(row * rowBytes, src, (int) (index * rowBytes), rowBytes);
      }
    }
    target.commitRows(indices, from, count);
  }

  @Override
  public String toString() {
    return "fromTensors(" + tensors.keySet() + ", rows=" + size + ")";
  }
}
