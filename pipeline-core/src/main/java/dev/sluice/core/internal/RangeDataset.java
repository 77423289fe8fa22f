package dev.sluice.core.internal;

import dev.sluice.core.DType;
import dev.sluice.core.Example;
import dev.sluice.core.HasSchema;
import dev.sluice.core.RandomAccessDataset;
import dev.sluice.core.Schema;
import dev.sluice.core.Shape;
import dev.sluice.core.Tensor;
import dev.sluice.core.TensorSpec;
import dev.sluice.core.spi.BatchBuilder;
import dev.sluice.core.spi.Fingerprinted;
import java.nio.ByteBuffer;

/** {@code Datasets.range(n)}: field {@code value} (int64) equal to the index. */
public final class RangeDataset implements RandomAccessDataset<Example>, HasSchema, Fingerprinted {
  private static final Schema SCHEMA = Schema.of(new TensorSpec("value", DType.INT64, Shape.scalar()));

  private final long n;

  public RangeDataset(long n) {
    if (n < 0) {
      throw new IllegalArgumentException("n >= 0 required but it was " + n);
    }
    this.n = n;
  }

  @Override
  public Schema schema() {
    return SCHEMA;
  }

  @Override
  public long size() {
    return n;
  }

  @Override
  public Example get(long index) {
    RandomAccessDataset.checkIndex(index, n, this);
    return Example.of(index, "value", Tensor.scalar(index));
  }

  @Override
  public void gather(long[] indices, int from, int count, BatchBuilder target) {
    ByteBuffer col = target.fixedColumn(0);
    int row = target.size();
    for (int i = from; i < from + count; i++) {
      long index = indices[i];
      RandomAccessDataset.checkIndex(index, n, this);
      col.putLong((row++) * 8, index);
    }
    target.commitRows(indices, from, count);
  }

  /** Its description: the elements depend on nothing else. */
  @Override
  public String fingerprint() {
    return toString() + "\n" + Fingerprints.schema(schema());
  }

  @Override
  public String toString() {
    return "range(" + n + ")";
  }
}
