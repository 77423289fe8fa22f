package dev.sluice.benchmarks;

import dev.sluice.core.Batch;
import dev.sluice.core.Dataset;
import dev.sluice.core.Datasets;
import dev.sluice.core.Example;
import dev.sluice.io.Formats;
import dev.sluice.io.WriteOptions;
import dev.sluice.io.npy.Npy;
import dev.sluice.io.npy.NpyDataset;
import dev.sluice.io.parquet.Parquet;
import dev.sluice.io.parquet.ParquetDataset;
import dev.sluice.operators.CacheMonitor;
import dev.sluice.operators.CacheSpec;
import dev.sluice.operators.CacheStats;
import dev.sluice.operators.Pipeline;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;

/**
 * The shared cache's benchmarks, each in one JVM with the contenders alternating round by round
 * (median of the per-round ratios), wall time beside the process's CPU time:
 *
 * <ol>
 *   <li>{@code parquet}: {@code batch(256)} over a zstd Parquet file of {@code rows} rows of
 *       {@code x float32[64]} and {@code label int64}, read through a warm cache (the columnar path
 *       over the cache's segments), against the index path over the same records as page-cached
 *       {@code .npy} files, and against the same pipeline without the cache (the columnar path
 *       decoding the file);
 *   <li>{@code map}: {@code map(f).batch(256)} over the {@code .npy} records, where {@code f} spins
 *       about 5 µs per element, with a warm cache after the map against without it.
 * </ol>
 *
 * <pre>
 * java -Xms2g -Xmx2g -XX:+AlwaysPreTouch -cp benchmarks/target/benchmarks.jar \
 *     dev.sluice.benchmarks.CacheBench parquet|map [DIR] [rows] [rounds]
 * </pre>
 * Data is generated into {@code DIR} (default {@code /tmp/sluice-cache-bench}) when missing; the
 * cache goes to {@code /dev/shm/sluice-<user>/}, filled by the first (unmeasured) pass.
 */
public final class CacheBench {
  static final int BATCH = 256;
  static final long MAP_NANOS = 5_000;
  /** Epochs per round of the fast contenders (the npy index path, the cached pass). */
  static final int FAST_EPOCHS = 10;

  private CacheBench() {}

  public static void main(String[] args) throws IOException {
    String what = args.length > 0 ? args[0] : "parquet";
    Path dir = Path.of(args.length > 1 ? args[1] : "/tmp/sluice-cache-bench");
    int rounds = args.length > 3 ? Integer.parseInt(args[3]) : 5;
    switch (what) {
      case "parquet" -> parquet(dir, args.length > 2 ? Integer.parseInt(args[2]) : 1_000_000, rounds);
      case "map" -> map(dir, args.length > 2 ? Integer.parseInt(args[2]) : 200_000, rounds);
      default -> throw new IllegalArgumentException("parquet or map, not " + what);
    }
  }

  /** The npy directory and the zstd Parquet file of {@code rows} synthetic rows, written when missing. */
  private static Path[] data(Path dir, int rows) throws IOException {
    Path npy = dir.resolve("npy-" + rows);
    Path parquet = dir.resolve("zstd-" + rows + ".parquet");
    Dataset<Example> source = Datasets.synthetic(rows, 64, 1);
    if (!Files.exists(npy.resolve("x.npy"))) {
      Npy.write(source, npy);
    }
    if (!Files.exists(parquet)) {
      Files.createDirectories(dir);
      Formats.named("parquet").write(source, parquet, WriteOptions.defaults().withCodec("zstd"));
    }
    return new Path[] {npy, parquet};
  }

  private static void parquet(Path dir, int rows, int rounds) throws IOException {
    Path[] files = data(dir, rows);
    CacheMonitor monitor = new CacheMonitor();
    try (NpyDataset npy = Npy.open(files[0]); ParquetDataset pq = Parquet.open(files[1])) {
      Pipeline<Batch> index = Pipeline.from(npy).batch(BATCH);
      Pipeline<Batch> cached = Pipeline.from(pq).cache(CacheSpec.defaults().monitor(monitor)).batch(BATCH);
      Pipeline<Batch> decoded = Pipeline.from(pq).batch(BATCH);
      long[] fill = ShardBench.epoch(cached, 0);
      System.out.printf(Locale.ROOT, "fill: %d records in %.2f s (%s)%n", fill[0], fill[1] / 1e9, monitor.lastPass());
      for (int w = 0; w < 2; w++) {
        ShardBench.epoch(index, w);
        ShardBench.epoch(cached, w);
        ShardBench.epoch(decoded, w);
      }
      System.out.printf(Locale.ROOT, "%d rows of x float32[64] + label int64, zstd Parquet, batch %d, in order:%n",
          rows, BATCH);
      double[] vsIndex = new double[rounds];
      double[] vsIndexCpu = new double[rounds];
      double[] vsDecoded = new double[rounds];
      double[] vsDecodedCpu = new double[rounds];
      for (int r = 0; r < rounds; r++) {
        long[] a = new long[3];
        long[] b = new long[3];
        long[] c = new long[3];
        // alternating, so the three see the same load; the fast ones for several epochs, so that
        // the process CPU clock (10 ms ticks) measures them
        for (int e = 0; e < FAST_EPOCHS; e++) {
          ShardBench.add(a, ShardBench.epoch(index, e));
          ShardBench.add(b, ShardBench.epoch(cached, e));
          if (e == FAST_EPOCHS / 2) {
            ShardBench.add(c, ShardBench.epoch(decoded, r));
          }
        }
        CacheStats last = monitor.lastPass();
        if (last.misses() != 0) {
          throw new IllegalStateException("a measured cached epoch missed: " + last);
        }
        vsIndex[r] = perSecond(b) / perSecond(a);
        vsIndexCpu[r] = perCpuSecond(b) / perCpuSecond(a);
        vsDecoded[r] = perSecond(b) / perSecond(c);
        vsDecodedCpu[r] = perCpuSecond(b) / perCpuSecond(c);
        System.out.printf(Locale.ROOT, "  round %d: npy index path %s, cached Parquet %s, uncached Parquet %s;"
            + " cached / index %.3f wall, %.3f CPU; cached / uncached %.2f wall, %.2f CPU (records per second, per CPU"
            + " second)%n", r + 1, rate(a), rate(b),
            rate(c), vsIndex[r], vsIndexCpu[r], vsDecoded[r], vsDecodedCpu[r]);
      }
      System.out.printf(Locale.ROOT, "  median cached / npy index path: %.3f wall, %.3f CPU%n",
          ShardBench.median(vsIndex), ShardBench.median(vsIndexCpu));
      System.out.printf(Locale.ROOT, "  median cached / uncached columnar Parquet: %.2f wall, %.2f CPU%n",
          ShardBench.median(vsDecoded), ShardBench.median(vsDecodedCpu));
    }
  }

  private static void map(Path dir, int rows, int rounds) throws IOException {
    Path[] files = data(dir, rows);
    CacheMonitor monitor = new CacheMonitor();
    try (NpyDataset npy = Npy.open(files[0])) {
      Pipeline<Batch> uncached = Pipeline.from(npy).map(CacheBench::spin).batch(BATCH);
      Pipeline<Batch> cached = Pipeline.from(npy).map(CacheBench::spin)
          .cache(CacheSpec.named("spin-5us").monitor(monitor)).batch(BATCH);
      long[] fill = ShardBench.epoch(cached, 0);
      System.out.printf(Locale.ROOT, "fill: %d records in %.2f s (%s)%n", fill[0], fill[1] / 1e9, monitor.lastPass());
      ShardBench.epoch(uncached, 0);
      ShardBench.epoch(cached, 0);
      System.out.printf(Locale.ROOT, "%d rows of x float32[64] + label int64 (npy), a map of about %d us per element,"
          + " batch %d, in order:%n", rows, MAP_NANOS / 1000, BATCH);
      double[] wall = new double[rounds];
      double[] cpu = new double[rounds];
      for (int r = 0; r < rounds; r++) {
        long[] a = ShardBench.epoch(uncached, r);
        long[] b = new long[3];
        for (int e = 0; e < 5; e++) {
          ShardBench.add(b, ShardBench.epoch(cached, e));
        }
        if (monitor.lastPass().misses() != 0) {
          throw new IllegalStateException("a measured cached epoch missed: " + monitor.lastPass());
        }
        wall[r] = perSecond(b) / perSecond(a);
        cpu[r] = perCpuSecond(b) / perCpuSecond(a);
        System.out.printf(Locale.ROOT, "  round %d: uncached %s, cached %s; cached / uncached %.1f wall, %.1f CPU%n",
            r + 1, rate(a), rate(b), wall[r], cpu[r]);
      }
      System.out.printf(Locale.ROOT, "  median cached / uncached epoch: %.1f wall, %.1f CPU%n", ShardBench.median(wall),
          ShardBench.median(cpu));
    }
  }

  /** The element after about {@value #MAP_NANOS} ns of work on this thread. */
  private static Example spin(Example e) {
    long end = System.nanoTime() + MAP_NANOS;
    while (System.nanoTime() < end) {
      Thread.onSpinWait();
    }
    return e;
  }

  /** Records per second of an epoch's (or several epochs') {records, wall ns, cpu ns}. */
  private static double perSecond(long[] m) {
    return m[0] / (m[1] / 1e9);
  }

  /** Records per CPU-second of the process. */
  private static double perCpuSecond(long[] m) {
    return m[0] / (Math.max(1, m[2]) / 1e9);
  }

  /** {@code 12.3 M records/s (81 ns CPU/record)} of an epoch's {records, wall ns, cpu ns}. */
  private static String rate(long[] m) {
    return String.format(Locale.ROOT, "%.2f M records/s (%.0f ns CPU/record)", m[0] / (m[1] / 1e9) / 1e6,
        (double) m[2] / m[0]);
  }
}
