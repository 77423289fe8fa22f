package dev.sluice.benchmarks;

import dev.sluice.core.Batch;
import dev.sluice.core.MemoryManager;
import dev.sluice.core.spi.BatchBuilder;
import dev.sluice.core.spi.BufferPool;
import dev.sluice.io.shards.ShardSet;
import dev.sluice.io.shards.Shards;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Locale;
import java.util.SplittableRandom;

/**
 * The CPU time of the shard index path alone: epochs of shuffled gathers of 256 rows over a shard
 * set, each timed by the gathering thread's CPU time, so that other jobs on the machine do not
 * enter the figure. Prints the first epoch (which checks every block's checksum) and the median of
 * the others. It uses only the public API, so it runs against any build of Sluice as a single-file
 * program:
 *
 * <pre>
 * java -Xms2g -Xmx2g -XX:+AlwaysPreTouch -cp "examples/target/sluice.jar:examples/target/lib/*" \
 *     benchmarks/src/main/java/dev/sluice/benchmarks/ShardGatherCpu.java DIR 11
 * </pre>
 */
public final class ShardGatherCpu {
  private ShardGatherCpu() {}

  /**
   * Runs the benchmark.
   *
   * @param args the shard set's directory and the number of epochs (at least 2)
   */
  public static void main(String[] args) {
    ThreadMXBean mx = ManagementFactory.getThreadMXBean();
    int epochs = Integer.parseInt(args[1]);
    BufferPool pool = MemoryManager.shared().pool("bench.gather");
    try (ShardSet s = Shards.open(Path.of(args[0]))) {
      int n = Math.toIntExact(s.size());
      long[] order = new long[n];
      double[] ms = new double[epochs];
      for (int e = 0; e < epochs; e++) {
        for (int i = 0; i < n; i++) {
          order[i] = i;
        }
        SplittableRandom rnd = new SplittableRandom(e);
        for (int i = n - 1; i > 0; i--) {
          int j = rnd.nextInt(i + 1);
          long t = order[i];
          order[i] = order[j];
          order[j] = t;
        }
        long c0 = mx.getCurrentThreadCpuTime();
        for (int from = 0; from < n; from += 256) {
          int k = Math.min(256, n - from);
          try (BatchBuilder b = BatchBuilder.create(s.schema(), k, pool)) {
            s.gather(order, from, k, b);
            b.build().close();
          }
        }
        ms[e] = (mx.getCurrentThreadCpuTime() - c0) / 1e6;
      }
      double[] rest = Arrays.copyOfRange(ms, 1, epochs);
      Arrays.sort(rest);
      System.out.printf(Locale.ROOT, "first %.1f ms, median of the next %d: %.1f ms (min %.1f, max %.1f)%n", ms[0],
          rest.length, rest[rest.length / 2], rest[0], rest[rest.length - 1]);
    }
  }
}
