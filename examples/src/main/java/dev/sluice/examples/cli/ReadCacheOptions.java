package dev.sluice.examples.cli;

import dev.sluice.operators.Pipeline;
import picocli.CommandLine.Option;

/**
 * {@code --read-cache BYTES} and {@code --page-cache BYTES}: the budgets a pipeline asks for while
 * it runs ({@code Options.readCacheBytes}, {@code Options.pageCacheBytes}); and
 * {@code --shuffle-block BYTES}, the block size of the block shuffle of a random-access source
 * ({@code Options.shuffleBlockBytes}).
 */
final class ReadCacheOptions {
  @Option(names = "--read-cache", paramLabel = "BYTES", converter = ByteSize.OrZero.class,
      description = "With --io read and for Hadoop URIs: the most the block cache of positioned reads holds, "
          + "e.g. 512m or 0 (off). A file up to this size is read in 1 MiB blocks kept off-heap, so shuffled rows "
          + "are copies instead of one read each; a larger file is read one run of rows at a time. Default: a "
          + "quarter of --memory-limit, or 1 GiB.")
  Long readCache;

  @Option(names = "--page-cache", paramLabel = "BYTES", converter = ByteSize.OrZero.class,
      description = "For Parquet: the most the page cache holds, e.g. 256m or 0 (off): the decompressed pages "
          + "that a read of part of a row group cuts (a shuffle's blocks), with their decoded levels, and the "
          + "decoded dictionary pages, kept on the heap so the next block of the same page neither reads nor "
          + "decompresses it again; a page over a quarter of it is not kept. Default: 64m.")
  Long pageCache;

  @Option(names = "--shuffle-block", paramLabel = "BYTES", converter = ByteSize.class,
      description = "With --shuffle on a random-access source that is block-shuffled (--shuffle-mode blocks, or "
          + "auto above the threshold): the bytes of rows a block holds at least, e.g. 4m or 256k. Smaller blocks "
          + "mix better and read more randomly; a block is a whole number of runs of this size (a run is at most a "
          + "256th of the rows). A checkpoint is resumed only with blocks of the same rows. Default: 2m.")
  Long shuffleBlock;

  /** {@code pipeline} asking for the budgets given; unchanged for an option not given. */
  <T> Pipeline<T> apply(Pipeline<T> pipeline) {
    if (readCache == null && pageCache == null && shuffleBlock == null) {
      return pipeline;
    }
    var options = pipeline.options().toBuilder();
    if (readCache != null) {
      options.readCacheBytes(readCache);
    }
    if (pageCache != null) {
      options.pageCacheBytes(pageCache);
    }
    if (shuffleBlock != null) {
      options.shuffleBlockBytes(shuffleBlock);
    }
    return pipeline.withOptions(options.build());
  }
}
