package dev.sluice.benchmarks.parquet;

import dev.sluice.core.Batch;
import dev.sluice.io.parquet.Parquet;
import dev.sluice.io.parquet.ParquetDataset;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * Two decode threads versus one on a file with at least 8 row groups (default: 1,000,000 rows of
 * 64 floats in 16 row groups of 62,500 rows, LIST layout): wall time and CPU time per row (ThreadMXBean, the
 * sum over every thread of the JVM), alternating 1 and 2 threads for {@code rounds} rounds, median
 * ratios. Each measurement reads the file four times (64 row groups).
 *
 * <pre>
 * java -Xms2g -Xmx2g -XX:+AlwaysPreTouch -cp benchmarks/target/benchmarks.jar \
 *     dev.sluice.benchmarks.parquet.ParallelDecodeBench [rounds=5] [layout=LIST]
 * </pre>
 */
public final class ParallelDecodeBench {
  private ParallelDecodeBench() {}

  public static void main(String[] args) throws Exception {
    int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 5;
    BenchFiles.Layout layout = args.length > 1 ? BenchFiles.Layout.valueOf(args[1]) : BenchFiles.Layout.LIST;
    Path f = BenchFiles.file(layout, 1_000_000, 64, 128L << 20, 62_500);
    ParquetDataset ds = Parquet.open(f, Readers.options());
    System.out.println("file " + f + ": " + ds.splits().size() + " row groups, " + ds.rowCount() + " rows");
    Scheduler scheduler = Schedulers.newParallel("decode", 2, true);
    ThreadMXBean mx = ManagementFactory.getThreadMXBean();
    List<Double> wallRatio = new ArrayList<>();
    List<Double> cpuRatio = new ArrayList<>();
    for (int r = -1; r < rounds; r++) {
      double[] wall = new double[3];
      double[] cpu = new double[3];
      for (int threads = 1; threads <= 2; threads++) {
        long c0 = totalCpu(mx);
        long t0 = System.nanoTime();
        List<dev.sluice.core.Split> passes = new ArrayList<>();
        for (int k = 0; k < 4; k++) {
          passes.addAll(ds.splits()); // four passes over the file per measurement
        }
        long rows = ds.batches(passes, 4096, threads, scheduler)
            .map(b -> {
              try (Batch x = b) {
                return (long) x.size();
              }
            })
            .reduce(0L, Long::sum).block();
        wall[threads] = (System.nanoTime() - t0) / 1e9;
        cpu[threads] = (totalCpu(mx) - c0) / 1e9;
        if (r >= 0) {
          System.out.printf("round %d threads %d: %.3f s wall, %.0f rows/s, %.1f ns CPU/row%n", r, threads,
              wall[threads], rows / wall[threads], cpu[threads] * 1e9 / rows);
        }
      }
      if (r >= 0) {
        wallRatio.add(wall[1] / wall[2]);
        cpuRatio.add(cpu[2] / cpu[1]);
      }
    }
    scheduler.dispose();
    if (!wallRatio.isEmpty()) {
      System.out.printf("median speed-up (1 thread wall / 2 threads wall): %.2f; median CPU per row (2 threads / 1): %.2f%n",
          median(wallRatio), median(cpuRatio));
    }
  }

  private static long totalCpu(ThreadMXBean mx) {
    long sum = 0;
    for (long id : mx.getAllThreadIds()) {
      long t = mx.getThreadCpuTime(id);
      if (t > 0) {
        sum += t;
      }
    }
    return sum;
  }

  static double median(List<Double> v) {
    List<Double> s = new ArrayList<>(v);
    s.sort(null);
    int n = s.size();
    return n % 2 == 1 ? s.get(n / 2) : (s.get(n / 2 - 1) + s.get(n / 2)) / 2;
  }
}
