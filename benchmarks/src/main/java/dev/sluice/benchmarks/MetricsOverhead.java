package dev.sluice.benchmarks;

import dev.sluice.core.Batch;
import dev.sluice.core.PipelineContext;
import dev.sluice.io.npy.Npy;
import dev.sluice.io.npy.NpyDataset;
import dev.sluice.operators.Pipeline;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * What per-stage metrics cost, over the same page-cached {@code .npy} as {@link HandLoopVsPipeline}
 * (docs/benchmarks.md): the index path {@code shuffle() -> batch 256 -> prefetch 4} and the element
 * path {@code shuffle(10_000) -> batch 256 -> prefetch 4}, each without metrics (no measuring
 * operator in the pass) and with a {@link SimpleMeterRegistry} in its options (a probe per stage
 * and the sampler thread), in alternating rounds of one epoch after three warm-up epochs of each.
 * Prints each round's records/s and CPU nanoseconds per record of the process, and the median ratios
 * metrics on / off of records/s and of CPU per record. Each round then runs the same four pipelines
 * without the prefetch, on the calling thread alone, and times them by that thread's CPU time
 * (nanosecond resolution, and little disturbed by other processes on the machine): the figure that
 * resolves a few percent on a busy machine.
 *
 * <pre>
 * java -Xms1g -Xmx1g -XX:+AlwaysPreTouch -cp benchmarks/target/benchmarks.jar \
 *     dev.sluice.benchmarks.MetricsOverhead [FILE.npy] [rows] [rounds]
 * </pre>
 */
public final class MetricsOverhead {
  private MetricsOverhead() {}

  public static void main(String[] args) throws IOException {
    Path file = Path.of(args.length > 0 ? args[0] : "/tmp/sluice-bench/x.npy");
    long rows = args.length > 1 ? Long.parseLong(args[1]) : 2_000_000L;
    int rounds = args.length > 2 ? Integer.parseInt(args[2]) : 5;
    if (!Files.exists(file) || Files.size(file) < rows * HandLoopVsPipeline.ROW_BYTES) {
      HandLoopVsPipeline.writeNpy(file, rows);
    }
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ); NpyDataset data = Npy.open(file)) {
      ch.map(FileChannel.MapMode.READ_ONLY, 0, ch.size()).load(); // page-cache the file
      SimpleMeterRegistry registry = new SimpleMeterRegistry();
      Pipeline<Batch> index = Pipeline.from(data).shuffle().batch(256).prefetch(4);
      Pipeline<Batch> element = Pipeline.from(data).shuffle(10_000).batch(256).prefetch(4);
      Pipeline<Batch> indexOn = measured(index, registry, "index");
      Pipeline<Batch> elementOn = measured(element, registry, "element");
      List<Pipeline<Batch>> contenders = List.of(index, indexOn, element, elementOn);
      Pipeline<Batch> indexOne = Pipeline.from(data).shuffle().batch(256);
      Pipeline<Batch> elementOne = Pipeline.from(data).shuffle(10_000).batch(256);
      List<Pipeline<Batch>> oneThread = List.of(indexOne, measured(indexOne, registry, "index-1"), elementOne,
          measured(elementOne, registry, "element-1"));
      System.out.printf(Locale.ROOT, "%d rows x %d bytes, batch 256; warm-up...%n", data.size(),
          HandLoopVsPipeline.ROW_BYTES);
      for (long w = 0; w < HandLoopVsPipeline.WARMUP_EPOCHS; w++) {
        for (Pipeline<Batch> p : contenders) {
          HandLoopVsPipeline.sluice(p, 1_000 + w);
        }
        for (Pipeline<Batch> p : oneThread) {
          threadCpuPerRecord(p, 1_000 + w);
        }
      }
      double n = data.size();
      List<Double> indexRatio = new ArrayList<>();
      List<Double> elementRatio = new ArrayList<>();
      List<Double> indexCpuRatio = new ArrayList<>();
      List<Double> elementCpuRatio = new ArrayList<>();
      List<Double> indexThreadRatio = new ArrayList<>();
      List<Double> elementThreadRatio = new ArrayList<>();
      for (long r = 0; r < rounds; r++) {
        double[] rate = new double[contenders.size()];
        double[] cpu = new double[contenders.size()];
        for (int c = 0; c < contenders.size(); c++) {
          // the off/on order flips every round, so neither always runs right after the other
          int k = r % 2 == 0 ? c : c ^ 1;
          long c0 = HandLoopVsPipeline.cpuNanos();
          rate[k] = HandLoopVsPipeline.sluice(contenders.get(k), r);
          cpu[k] = (HandLoopVsPipeline.cpuNanos() - c0) / n;
        }
        double[] thread = new double[oneThread.size()];
        for (int c = 0; c < oneThread.size(); c++) {
          int k = r % 2 == 0 ? c : c ^ 1;
          thread[k] = threadCpuPerRecord(oneThread.get(k), r);
        }
        indexThreadRatio.add(thread[1] / thread[0]);
        elementThreadRatio.add(thread[3] / thread[2]);
        indexRatio.add(rate[1] / rate[0]);
        elementRatio.add(rate[3] / rate[2]);
        indexCpuRatio.add(cpu[1] / cpu[0]);
        elementCpuRatio.add(cpu[3] / cpu[2]);
        System.out.printf(Locale.ROOT, "round %d: index off %.0f, on %.0f records/s (CPU ns per record %.1f, %.1f);"
            + " element off %.0f, on %.0f records/s (CPU ns per record %.1f, %.1f)%n",
            r, rate[0], rate[1], cpu[0], cpu[1], rate[2], rate[3], cpu[2], cpu[3]);
        System.out.printf(Locale.ROOT, "  one thread, no prefetch: thread CPU ns per record: index off %.1f, on %.1f;"
            + " element off %.1f, on %.1f%n", thread[0], thread[1], thread[2], thread[3]);
      }
      System.out.printf(Locale.ROOT, "median on/off records/s: index %.3f %s, element %.3f %s%n",
          ElementVsIndexPath.median(indexRatio), indexRatio, ElementVsIndexPath.median(elementRatio), elementRatio);
      System.out.printf(Locale.ROOT, "median on/off CPU per record: index %.3f, element %.3f%n",
          ElementVsIndexPath.median(indexCpuRatio), ElementVsIndexPath.median(elementCpuRatio));
      System.out.printf(Locale.ROOT, "median on/off thread CPU per record, one thread: index %.3f, element %.3f%n",
          ElementVsIndexPath.median(indexThreadRatio), ElementVsIndexPath.median(elementThreadRatio));
    }
  }

  /** One epoch of {@code p} on the calling thread (no prefetch in it); returns that thread's CPU ns per record. */
  static double threadCpuPerRecord(Pipeline<Batch> p, long epoch) {
    ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    long[] rows = new long[1];
    long c0 = threads.getCurrentThreadCpuTime();
    p.flux(PipelineContext.defaults().withSeed(42).withEpoch(epoch)).doOnNext(b -> {
      try (b) {
        rows[0] += b.size();
      }
    }).blockLast();
    return (threads.getCurrentThreadCpuTime() - c0) / (double) rows[0];
  }

  /** {@code p} reporting its stages to {@code registry} under {@code name}. */
  static Pipeline<Batch> measured(Pipeline<Batch> p, SimpleMeterRegistry registry, String name) {
    return p.withOptions(p.options().toBuilder().metrics(registry).name(name).build());
  }
}
