package dev.sluice.operators;

/**
 * How {@link Pipeline#shuffle()} orders a random-access source (npy, a shard set, an Arrow file):
 * by a global permutation of its rows, or by blocks of contiguous rows read whole.
 *
 * <p>The global permutation mixes perfectly at O(1) memory, but each row is a read at a random
 * place in the file: fine while the file stays in the page cache, one random disk read per row once
 * it does not. The block shuffle reads the file in large contiguous blocks, in a new random order
 * every epoch, and mixes rows within a window of several blocks: it reads about as fast as a
 * sequential pass, at the cost of a local rather than global mix (docs/architecture.md, shuffling
 * random-access sources).
 */
public enum RandomAccessShuffle {
  /**
   * The default: {@link #GLOBAL} while the dataset's data bytes (rows times the schema's row size)
   * are at most {@link dev.sluice.core.Options#blockShuffleThreshold()} (half the physical memory
   * unless set), {@link #BLOCKS} above it. A source without a declared schema stays global.
   * {@code explain()} says which was chosen and why.
   */
  AUTO,
  /**
   * A uniform permutation of all rows per (seed, epoch), computed per position: each rank takes its
   * stride of it. Whatever the dataset's size.
   */
  GLOBAL,
  /**
   * The block shuffle, whatever the dataset's size: the rows are cut into blocks of contiguous rows
   * (about 2 MiB each), the epoch's block order is a permutation per (seed, epoch) shared by every
   * rank, each rank takes its part of that sequence with the shard's {@link EqualLength} counts,
   * reads each block sequentially, and mixes its rows in windows of many blocks (the window bounded
   * by the pipeline's memory limit), the next window read ahead on a worker. Every row once per
   * epoch across the ranks, a rank's rows different every epoch, exactly resumable.
   */
  BLOCKS
}
