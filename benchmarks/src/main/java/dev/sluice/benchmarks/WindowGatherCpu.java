package dev.sluice.benchmarks;

import dev.sluice.core.Batch;
import dev.sluice.core.DType;
import dev.sluice.core.Example;
import dev.sluice.core.MemoryManager;
import dev.sluice.core.Schema;
import dev.sluice.core.Shape;
import dev.sluice.core.Tensor;
import dev.sluice.core.TensorSpec;
import dev.sluice.core.spi.BatchBuilder;
import dev.sluice.core.spi.BufferPool;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;

/**
 * The CPU time of the window shuffle's gather alone ({@code BatchBuilder.appendRows} of a window in
 * a random order into 256-row batches): a window of 10,000 rows of the FLAT Parquet benchmark's
 * fields (64 float32 columns, an int64 label, a float32 score, a nullable string name), gathered
 * again and again, each pass timed by the gathering thread's CPU time so that other jobs on the
 * machine do not enter the figure. Prints the median pass in nanoseconds per value. It uses only the
 * public API, so it runs against any build of Sluice as a single-file program:
 *
 * <pre>
 * java -Xms1g -Xmx1g -XX:+AlwaysPreTouch -cp examples/target/sluice.jar \
 *     benchmarks/src/main/java/dev/sluice/benchmarks/WindowGatherCpu.java 200
 * </pre>
 *
 * <p>With {@code -Dsun.misc.unsafe.memory.access=deny} the gathers take their path without
 * address access.
 */
public final class WindowGatherCpu {
  private WindowGatherCpu() {}

  private static final int ROWS = 10_000;
  private static final int BATCH = 256;

  /**
   * Runs the benchmark.
   *
   * @param args the number of passes (at least 10; the first tenth is warm-up)
   */
  public static void main(String[] args) {
    ThreadMXBean mx = ManagementFactory.getThreadMXBean();
    int passes = Integer.parseInt(args[0]);
    List<TensorSpec> fields = new ArrayList<>();
    for (int c = 0; c < 64; c++) {
      fields.add(new TensorSpec("x" + c, DType.FLOAT32, Shape.scalar()));
    }
    fields.add(new TensorSpec("label", DType.INT64, Shape.scalar()));
    fields.add(new TensorSpec("score", DType.FLOAT32, Shape.scalar()));
    fields.add(new TensorSpec("name", DType.STRING, Shape.scalar(), true));
    Schema schema = Schema.of(fields);
    BufferPool pool = MemoryManager.shared().pool("bench.window");
    SplittableRandom rnd = new SplittableRandom(1);
    try (BatchBuilder b = BatchBuilder.create(schema, ROWS, pool)) {
      for (int r = 0; r < ROWS; r++) {
        Example.Builder e = Example.builder(r);
        for (int c = 0; c < 64; c++) {
          e.put("x" + c, Tensor.scalar(rnd.nextInt() * 0x1p-20f));
        }
        e.put("label", Tensor.scalar((long) r)).put("score", Tensor.scalar(r * 0.5f));
        if (r % 10 == 0) {
          e.putNull("name");
        } else {
          e.put("name", Tensor.ofString("name-" + r));
        }
        b.append(e.build());
      }
      try (Batch window = b.build()) {
        int[] order = new int[ROWS];
        double[] ns = new double[passes];
        for (int p = 0; p < passes; p++) {
          for (int i = 0; i < ROWS; i++) {
            order[i] = i;
          }
          for (int i = ROWS - 1; i > 0; i--) {
            int j = rnd.nextInt(i + 1);
            int t = order[i];
            order[i] = order[j];
            order[j] = t;
          }
          List<BatchBuilder> targets = new ArrayList<>();
          for (int at = 0; at < ROWS; at += BATCH) {
            targets.add(BatchBuilder.create(schema, Math.min(BATCH, ROWS - at), pool));
          }
          long c0 = mx.getCurrentThreadCpuTime();
          BatchBuilder.appendRows(window, order, 0, ROWS, targets);
          ns[p] = (mx.getCurrentThreadCpuTime() - c0) / ((double) ROWS * schema.size());
          for (BatchBuilder t : targets) {
            t.build().close();
          }
        }
        double[] measured = Arrays.copyOfRange(ns, passes / 10, passes);
        Arrays.sort(measured);
        System.out.printf(Locale.ROOT, "median %.3f ns per value (min %.3f, max %.3f) over %d passes%n",
            measured[measured.length / 2], measured[0], measured[measured.length - 1], measured.length);
      }
    }
  }
}
