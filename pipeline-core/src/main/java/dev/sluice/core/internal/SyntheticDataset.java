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
import java.nio.ByteOrder;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Seeded synthetic examples: {@code x} float32[dim] with values in [0, 1) that depend only on
 * (seed, row, column), and {@code label} int64 = the row index. Random access in O(dim).
 */
public final class SyntheticDataset implements RandomAccessDataset<Example>, HasSchema, Fingerprinted {
  private final long rows;
  private final int dim;
  private final long seed;
  private final Schema schema;

  public SyntheticDataset(long rows, int dim, long seed) {
    if (rows < 0) {
      throw new IllegalArgumentException("rows >= 0 required but it was " + rows);
    }
    if (dim <= 0) {
      throw new IllegalArgumentException("dim > 0 required but it was " + dim);
    }
    this.rows = rows;
    this.dim = dim;
    this.seed = seed;
    this.schema = Schema.of(
        new TensorSpec("x", DType.FLOAT32, Shape.of(dim)),
        new TensorSpec("label", DType.INT64, Shape.scalar()));
  }

  /** The value of column {@code j} of row {@code row} for {@code seed}. */
  public static float value(long seed, long row, int j) {
    return (Mix.mix64(Mix.mix64(seed * 0x9E3779B97F4A7C15L + row) + j) >>> 40) * 0x1p-24f;
  }

  @Override
  public Schema schema() {
    return schema;
  }

  @Override
  public long size() {
    return rows;
  }

  @Override
  public Example get(long index) {
    RandomAccessDataset.checkIndex(index, rows, this);
    ByteBuffer x = ByteBuffer.allocate(dim * 4).order(ByteOrder.LITTLE_ENDIAN);
    fill(x, 0, index);
    Map<String, Tensor> fields = new LinkedHashMap<>(4);
    fields.put("x", Tensor.wrap(DType.FLOAT32, Shape.of(dim), x));
    fields.put("label", Tensor.scalar(index));
    return Example.of(index, fields);
  }

  private void fill(ByteBuffer target, int offset, long row) {
    long h = Mix.mix64(seed * 0x9E3779B97F4A7C15L + row);
    for (int j = 0; j < dim; j++) {
      target.putFloat(offset + j * 4, (Mix.mix64(h + j) >>> 40) * 0x1p-24f);
    }
  }

  @Override
  public void gather(long[] indices, int from, int count, BatchBuilder target) {
    ByteBuffer x = target.fixedColumn(0);
    ByteBuffer label = target.fixedColumn(1);
    int row = target.size();
    int rowBytes = dim * 4;
    for (int i = from; i < from + count; i++, row++) {
      long index = indices[i];
      RandomAccessDataset.checkIndex(index, rows, this);
      fill(x, row * rowBytes, index);
      label.putLong(row * 8, index);
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
    return "synthetic(rows=" + rows + ", dim=" + dim + ", seed=" + seed + ")";
  }
}
