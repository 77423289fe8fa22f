package dev.sluice.core;

/**
 * How a source can be read, as it declares it ({@link Dataset#access()}): the planner chooses a
 * pipeline's path from this declaration and from nothing else about the source's type.
 *
 * <ul>
 *   <li>{@link #RANDOM}: any row by its index ({@link RandomAccessDataset}): the index path, a
 *       global permutation computed per position and rows gathered in bulk;
 *   <li>{@link #BLOCKS}: row ranges of splits ({@link SplitDataset}): block shuffle and shard by row
 *       ranges, and the columnar path when the source also decodes into batches
 *       ({@link BatchSplitDataset}) and knows its row counts;
 *   <li>{@link #STREAM}: one pass in order, nothing addressable: the element path.
 * </ul>
 */
public enum Access {
  /** Any row by its index: the source is a {@link RandomAccessDataset}. */
  RANDOM,
  /** Row ranges of splits: the source is a {@link SplitDataset}. */
  BLOCKS,
  /** One pass in order. */
  STREAM
}
