package dev.sluice.operators;

/**
 * How {@link Pipeline#shuffle()} orders the rows of a split source that is not random access
 * (Parquet row groups, an Arrow file's record batches through {@code ArrowDataset.asSplits()}, a
 * cache over such a source); a random-access source (npy, a shard set, an Arrow file) is always
 * shuffled by a global permutation, whichever is asked.
 */
public enum SplitShuffle {
  /**
   * The default. Every split is cut into blocks of a bounded number of rows, the epoch's order is a
   * seeded permutation of all blocks of the dataset (the same on every rank), each rank takes its
   * part of that sequence with the shard's {@link EqualLength} counts, and the rank's blocks are
   * arranged so that every shuffle window draws rows from across the dataset. A rank therefore
   * reads a different random part of the data every epoch, well mixed, whatever the number and
   * size of the splits.
   */
  BLOCKS,
  /**
   * Only the order of whole splits is shuffled per epoch, and each rank takes a contiguous range of
   * that split sequence: cheaper to plan and read, but with few splits a rank reads the same rows
   * every epoch (a file of one row group: always the same quarter of it for rank 1 of 4), in an
   * order that follows the file within the shuffle window. For sources of many small splits only.
   */
  SPLITS
}
