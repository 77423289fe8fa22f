package dev.sluice.benchmarks;

import dev.sluice.core.Batch;
import dev.sluice.core.Dataset;
import dev.sluice.core.Datasets;
import dev.sluice.core.Example;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.PipelineIterator;
import dev.sluice.core.PipelineState;
import dev.sluice.io.Formats;
import dev.sluice.io.WriteOptions;
import dev.sluice.io.parquet.Parquet;
import dev.sluice.io.parquet.ParquetDataset;
import dev.sluice.operators.Pipeline;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.function.Supplier;
import reactor.core.publisher.Flux;

/**
 * What a checkpoint costs on each path (docs/benchmarks.md): for an epoch of {@code rows} elements
 * (default 10,000,000), the size of the state's JSON at 90% of the epoch and the time from
 * {@code Pipeline.resume(state)} to the first element resumed, with the process CPU time it took.
 * Each case is resumed once to warm up, then the cases are resumed in turn for {@code rounds}
 * rounds (default 5); the median per case is printed with every round.
 *
 * <pre>
 * java -Xms2g -Xmx2g -XX:+AlwaysPreTouch -cp benchmarks/target/benchmarks.jar \
 *     dev.sluice.benchmarks.ResumeBench [DIR] [rows] [rounds]
 * </pre>
 * A Parquet file of {@code rows} rows ({@code x float32[1]}, {@code label int64}) is written to
 * {@code DIR} (default {@code /tmp/sluice-bench}) when missing. The interleave cases interleave 100
 * parts of {@code rows / 100} elements, random-access (resumed from counts) or streamed (replayed).
 */
public final class ResumeBench {
  private ResumeBench() {}

  /** One pipeline whose epoch holds {@code outputs} elements (batches, after {@code batch}). */
  record Case(String name, Supplier<Pipeline<?>> pipeline, long outputs) {}

  public static void main(String[] args) throws Exception {
    Path dir = Path.of(args.length > 0 ? args[0] : "/tmp/sluice-bench");
    long rows = args.length > 1 ? Long.parseLong(args[1]) : 10_000_000L;
    int rounds = args.length > 2 ? Integer.parseInt(args[2]) : 5;
    Path file = dir.resolve("resume-" + rows + ".parquet");
    if (!Files.exists(file)) {
      Files.createDirectories(dir);
      System.out.printf(Locale.ROOT, "writing %s ...%n", file);
      Formats.named("parquet").write(Datasets.synthetic(rows, 1, 1), file, WriteOptions.defaults());
    }
    long batches = (rows + 255) / 256;
    Dataset<Example> range = Datasets.range(rows);
    Dataset<Example> stream = range::flux; // not random-access: the element path, replayed
    long parts = 100;
    long perPart = rows / parts; // the interleave cases read parts * perPart elements
    try (ParquetDataset parquet = Parquet.open(file)) {
      List<Case> cases = List.of(
          new Case("index: shuffle, batch 256, prefetch 4",
              () -> Pipeline.from(range).shuffle().shard(1, 0).batch(256).prefetch(4), batches),
          new Case("index: shuffle, elements", () -> Pipeline.from(range).shuffle(), rows),
          new Case("columnar: Parquet, batch 256",
              () -> Pipeline.from(parquet).batch(256), batches),
          new Case("columnar: Parquet, window shuffle 10,000, batch 256",
              () -> Pipeline.from(parquet).shuffle().batch(256), batches),
          new Case("element: buffer shuffle 10,000 over the index path, map(4), batch 256",
              () -> Pipeline.from(range).shuffle(10_000).map(e -> e, 4, true).batch(256), batches),
          new Case("element: Parquet split shuffle + buffer 10,000, elements",
              () -> Pipeline.from(parquet).shuffle(), rows),
          new Case("element: interleave(4, 16) of 100 random-access parts, batch 256",
              () -> Pipeline.from(Datasets.range(parts)).interleave(e -> Datasets.range(perPart), 4, 16, 1, true)
                  .batch(256), (parts * perPart + 255) / 256),
          new Case("element (replayed): interleave(4, 16) of 100 streamed parts, batch 256",
              () -> Pipeline.from(Datasets.range(parts))
                  .interleave(e -> (Dataset<Example>) Datasets.range(perPart)::flux, 4, 16, 1, true).batch(256),
              (parts * perPart + 255) / 256),
          new Case("element (replayed): buffer shuffle 10,000 over a stream, batch 256",
              () -> Pipeline.from(stream).shuffle(10_000).batch(256), batches),
          new Case("element (replayed): shuffle, filter 9 in 10, batch 256",
              () -> Pipeline.from(range).shuffle().filter(e -> e.index() % 10 != 3).batch(256),
              (rows - (rows + 6) / 10 + 255) / 256));
      PipelineContext ctx = PipelineContext.defaults().withSeed(1);
      List<PipelineState> states = new ArrayList<>();
      for (Case c : cases) {
        PipelineState start;
        try (PipelineIterator<?> it = c.pipeline().get().iterate(ctx)) {
          start = it.state();
        }
        states.add(start.at(0, c.outputs() * 9 / 10, 0)); // 90% of the epoch
      }
      System.out.printf(Locale.ROOT, "%d rows; state at 90%% of the epoch; %d rounds after one warm-up each%n", rows,
          rounds);
      for (int i = 0; i < cases.size(); i++) {
        resume(cases.get(i), states.get(i));
      }
      double[][] wall = new double[cases.size()][rounds];
      double[][] cpu = new double[cases.size()][rounds];
      for (int r = 0; r < rounds; r++) {
        for (int i = 0; i < cases.size(); i++) {
          double[] t = resume(cases.get(i), states.get(i));
          wall[i][r] = t[0];
          cpu[i][r] = t[1];
        }
      }
      System.out.printf(Locale.ROOT, "%-72s %8s %12s %12s  %s%n", "path", "state B", "resume ms", "CPU ms", "rounds (ms)");
      for (int i = 0; i < cases.size(); i++) {
        int size = states.get(i).toJson().getBytes(StandardCharsets.UTF_8).length;
        StringBuilder each = new StringBuilder();
        for (double w : wall[i]) {
          each.append(String.format(Locale.ROOT, " %.2f", w));
        }
        System.out.printf(Locale.ROOT, "%-72s %8d %12.2f %12.2f %s%n", cases.get(i).name(), size, median(wall[i]),
            median(cpu[i]), each);
      }
    }
  }

  /** Resumes {@code c} from {@code state} to its first element: {wall ms, process CPU ms}. */
  private static double[] resume(Case c, PipelineState state) {
    var os = (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
    Pipeline<?> p = c.pipeline().get();
    long cpu0 = os.getProcessCpuTime();
    long t0 = System.nanoTime();
    Object first = Flux.from(p.resume(state)).take(1).blockLast();
    long t1 = System.nanoTime();
    long cpu1 = os.getProcessCpuTime();
    if (first instanceof Batch b) {
      b.close();
    }
    if (first == null) {
      throw new IllegalStateException(c.name() + ": nothing after " + state);
    }
    return new double[] {(t1 - t0) / 1e6, (cpu1 - cpu0) / 1e6};
  }

  private static double median(double[] values) {
    double[] v = values.clone();
    Arrays.sort(v);
    return v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
  }
}
