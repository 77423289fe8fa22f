package dev.sluice.benchmarks.parquet;

import dev.sluice.core.Batch;
import dev.sluice.core.MemoryManager;
import dev.sluice.io.parquet.Parquet;
import dev.sluice.io.parquet.ParquetDataset;
import java.nio.file.Files;
import java.nio.file.Path;
import reactor.core.publisher.Flux;

/**
 * The bounded-memory check (a manual run, not a unit test): generates a LIST-layout file of
 * {@code rows} rows × 64 float32 in 128 MiB row groups (cached under {@code $TMPDIR/sluice-bench}),
 * then reads every row group in order through {@code readBatches} and prints rows, seconds and the
 * peak pooled off-heap bytes. Run it under {@code /usr/bin/time -v} with {@code -Xmx512m} for two
 * sizes and compare the peak RSS:
 *
 * <pre>
 * /usr/bin/time -v java -Xmx512m -cp benchmarks/target/benchmarks.jar \
 *     dev.sluice.benchmarks.parquet.BoundedMemoryRun 16000000 [decodeParallelism]
 * </pre>
 */
public final class BoundedMemoryRun {
  private BoundedMemoryRun() {}

  public static void main(String[] args) throws Exception {
    long rows = Long.parseLong(args[0]);
    int parallelism = args.length > 1 ? Integer.parseInt(args[1]) : 1;
    Path f = BenchFiles.file(BenchFiles.Layout.LIST, rows, 64, 128L << 20);
    ParquetDataset ds = Parquet.open(f, Readers.options().toBuilder().decodeParallelism(parallelism).build());
    System.out.printf("file %s: %.2f GB, %d row groups%n", f, Files.size(f) / 1e9, ds.splits().size());
    long[] peak = {0};
    long t0 = System.nanoTime();
    Flux<Batch> batches = parallelism == 1
        ? Flux.fromIterable(ds.splits()).concatMap(s -> ds.readBatches(s, 0, Long.MAX_VALUE, 4096))
        : ds.batches(4096);
    long n = batches.map(b -> {
      try (b) {
        peak[0] = Math.max(peak[0], MemoryManager.shared().outstandingBytes());
        return (long) b.size();
      }
    }).reduce(0L, Long::sum).block();
    System.out.printf("rows %d in %.1f s; peak outstanding pooled bytes %.1f MB%n", n,
        (System.nanoTime() - t0) / 1e9, peak[0] / 1e6);
  }
}
