package dev.sluice.benchmarks.parquet;

import dev.sluice.core.Batch;
import dev.sluice.io.parquet.ParquetDataset;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Locale;

/**
 * {@code ParquetDataset.batches(B)} measured as {@code sluice bench} measures a pipeline:
 * {@code warmup} warm-up epochs (one by default), then {@code epochs} measured ones, each batch's rows
 * and bytes counted and the batch closed by the consumer. Prints one JSON line with the median records/s and the process CPU time
 * per record of the measured epochs (the keys of {@code sluice bench --json}).
 *
 * <pre>java -cp benchmarks/target/benchmarks.jar dev.sluice.benchmarks.parquet.BatchesBench FILE [batch] [epochs] [warmup]</pre>
 */
public final class BatchesBench {
  private BatchesBench() {}

  public static void main(String[] args) {
    Path file = Path.of(args[0]);
    int batch = args.length > 1 ? Integer.parseInt(args[1]) : 256;
    int epochs = args.length > 2 ? Integer.parseInt(args[2]) : 5;
    int warmup = args.length > 3 ? Integer.parseInt(args[3]) : 1;
    ParquetDataset ds = Readers.open(file);
    for (int w = 0; w < warmup; w++) {
      epoch(ds, batch);
    }
    double[] rates = new double[epochs];
    long records = 0;
    long cpu0 = QuickRead.cpu();
    for (int e = 0; e < epochs; e++) {
      long t0 = System.nanoTime();
      long[] r = epoch(ds, batch);
      rates[e] = r[0] / ((System.nanoTime() - t0) / 1e9);
      records += r[0];
    }
    long cpu = QuickRead.cpu() - cpu0;
    Arrays.sort(rates);
    double median = epochs % 2 == 1 ? rates[epochs / 2] : (rates[epochs / 2 - 1] + rates[epochs / 2]) / 2;
    System.out.printf(Locale.ROOT, "{\"examples\":%d,\"epochs\":%d,\"recordsPerSecond\":%.6f,\"cpuSecondsPerMillionRecords\":%.6f}%n",
        records, epochs, median, cpu / 1e3 / records);
  }

  /** One epoch: records and bytes. */
  private static long[] epoch(ParquetDataset ds, int batch) {
    long[] r = new long[2];
    ds.batches(batch).doOnNext(b -> {
      try (Batch x = b) {
        r[0] += x.size();
        r[1] += x.byteSize();
      }
    }).blockLast();
    return r;
  }
}
