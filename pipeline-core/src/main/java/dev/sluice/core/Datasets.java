package dev.sluice.core;

import dev.sluice.core.internal.RangeDataset;
import dev.sluice.core.internal.SyntheticDataset;
import dev.sluice.core.internal.TensorSliceDataset;
import java.util.LinkedHashMap;
import java.util.Map;

/** Sources that need no files. */
public final class Datasets {
  private Datasets() {}

  /** The examples {@code 0 .. n-1}, each with one int64 field {@code value} equal to its index. */
  public static RandomAccessDataset<Example> range(long n) {
    return new RangeDataset(n);
  }

  /**
   * Slices each tensor along its first dimension, as tf.data's {@code from_tensor_slices}: example
   * {@code i} has one field per entry, a zero-copy view of row {@code i}. Every tensor must have the
   * same first dimension. Fields keep the map's order.
   */
  public static RandomAccessDataset<Example> fromTensors(Map<String, Tensor> tensors) {
    return new TensorSliceDataset(new LinkedHashMap<>(tensors));
  }

  /** {@link #fromTensors(Map)} with one field. */
  public static RandomAccessDataset<Example> fromTensors(String name, Tensor tensor) {
    return fromTensors(Map.of(name, tensor));
  }

  /**
   * A seeded synthetic dataset of {@code rows} examples with fields {@code x} (float32[dim], values
   * in [0, 1) that depend only on (seed, row, column)) and {@code label} (int64, the row index).
   */
  public static RandomAccessDataset<Example> synthetic(long rows, int dim, long seed) {
    return new SyntheticDataset(rows, dim, seed);
  }
}
