package dev.sluice.benchmarks.parquet;

import dev.sluice.core.Batch;
import dev.sluice.core.Split;
import dev.sluice.io.parquet.ParquetDataset;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * What a block of a large row group costs: {@code BlockReadBench <rows> <blockRows> <rounds>} reads
 * {@code blockRows} rows with {@code readBatches(split, from, from + blockRows, blockRows)} at the
 * start of a one-row-group file of {@code rows} rows ({@code x} = 16 float32 as a LIST, label, score,
 * name; parquet-java's default page index) and at its end, alternating, and prints per round the
 * median milliseconds of 9 reads at each place and their ratio (end / start), then the median ratio.
 */
public final class BlockReadBench {
  private BlockReadBench() {}

  /** Runs the benchmark; arguments as in the class comment. */
  public static void main(String[] args) throws Exception {
    long rows = Long.parseLong(args[0]);
    int block = Integer.parseInt(args[1]);
    int rounds = Integer.parseInt(args[2]);
    Path f = BenchFiles.file(BenchFiles.Layout.LIST, rows, 16, 1L << 40);
    try (ParquetDataset ds = Readers.open(f)) {
      if (ds.splits().size() != 1) {
        throw new IllegalStateException(f + " has " + ds.splits().size() + " row groups, expected one");
      }
      Split split = ds.splits().get(0);
      long end = split.rowCount() - block;
      median(ds, split, 0, block); // warm up
      median(ds, split, end, block);
      double[] ratios = new double[rounds];
      for (int r = 0; r < rounds; r++) {
        double start = median(ds, split, 0, block);
        double last = median(ds, split, end, block);
        ratios[r] = last / start;
        System.out.printf("round %d: start %.2f ms, end %.2f ms, end/start %.2f%n", r, start, last, ratios[r]);
      }
      Arrays.sort(ratios);
      System.out.printf("median end/start %.2f%n", ratios[rounds / 2]);
    }
  }

  /** The median wall time of 9 reads of {@code block} rows from {@code from}, ms. */
  private static double median(ParquetDataset ds, Split split, long from, int block) {
    double[] ms = new double[9];
    for (int i = 0; i < ms.length; i++) {
      long t0 = System.nanoTime();
      long n = ds.readBatches(split, from, from + block, block).map(b -> {
        try (b) {
          return (long) b.size();
        }
      }).reduce(0L, Long::sum).block();
      ms[i] = (System.nanoTime() - t0) / 1e6;
      if (n != block) {
        throw new IllegalStateException("read " + n + " rows, expected " + block);
      }
    }
    Arrays.sort(ms);
    return ms[ms.length / 2];
  }
}
