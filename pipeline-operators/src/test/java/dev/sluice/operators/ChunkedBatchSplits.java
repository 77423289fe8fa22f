package dev.sluice.operators;

import dev.sluice.core.Batch;
import dev.sluice.core.Split;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import reactor.core.publisher.Flux;

/**
 * A batch split source whose splits decode in chunks of {@code chunk} rows, as a chunked HDF5 file
 * does (its blocks align to them: {@link #blockAlignment}); every chunk a columnar read touches is
 * counted, so a test sees how often each chunk would be decoded.
 */
class ChunkedBatchSplits extends MemoryBatchSplits {
  private final long chunk;
  /** Reads of each chunk ({@code split#chunk}) since the last clear. */
  final Map<String, Integer> decodes = new ConcurrentHashMap<>();

  ChunkedBatchSplits(long chunk, long... sizes) {
    super(sizes);
    this.chunk = chunk;
    this.columns = false;
  }

  /** {@code rows} rows in splits of {@code chunksPerSplit} whole chunks each (the last one shorter). */
  static ChunkedBatchSplits of(long chunk, long chunksPerSplit, long rows) {
    long per = chunk * chunksPerSplit;
    long[] sizes = new long[(int) ((rows + per - 1) / per)];
    for (int i = 0; i < sizes.length; i++) {
      sizes[i] = Math.min(per, rows - i * per);
    }
    return new ChunkedBatchSplits(chunk, sizes);
  }

  @Override
  public long blockAlignment(Split split) {
    return chunk;
  }

  @Override
  public Flux<Batch> readBatches(Split split, long fromRow, long toRow, int first, int size) {
    return Flux.defer(() -> {
      long end = Math.min(toRow, split.rowCount());
      for (long c = fromRow / chunk; c * chunk < end; c++) {
        decodes.merge(split.id() + "#" + c, 1, Integer::sum);
      }
      return super.readBatches(split, fromRow, toRow, first, size);
    });
  }

  /** Every chunk of every split. */
  long chunks() {
    long n = 0;
    for (long size : sizes) {
      n += (size + chunk - 1) / chunk;
    }
    return n;
  }

  @Override
  public String toString() {
    return "chunked-splits(" + chunk + ")" + java.util.Arrays.toString(sizes);
  }
}
