package dev.sluice.benchmarks;

import dev.sluice.core.Batch;
import dev.sluice.core.Dataset;
import dev.sluice.core.Example;
import dev.sluice.core.HasSchema;
import dev.sluice.core.TensorSpec;
import dev.sluice.io.parquet.Parquet;
import dev.sluice.io.shards.Shards;
import dev.sluice.operators.Pipeline;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The element path over a split source: a pipeline whose element stages follow the source's leading
 * run, one epoch per round after a warm-up, over a Parquet file or a shard set:
 * <ol>
 *   <li>{@code shuffle() -> filter(index % 8 != 0) -> batch 256 -> prefetch 4} (unchanged rows);
 *   <li>{@code shuffle() -> map(the non-nullable fields + label2 = label) -> filter -> batch 256 ->
 *       prefetch 4} (a map that returns new examples);
 *   <li>{@code filter -> batch 256 -> prefetch 4} in the source's order.
 * </ol>
 * Prints records/s per pipeline and round and the process CPU time per record; run the builds to
 * compare alternately.
 *
 * <pre>
 * java -Xms2g -Xmx2g -XX:+AlwaysPreTouch -cp benchmarks/target/benchmarks.jar \
 *     dev.sluice.benchmarks.SplitElementPath parquet|shards PATH [rounds]
 * </pre>
 */
public final class SplitElementPath {
  private SplitElementPath() {}

  /** Runs the three pipelines over {@code args[1]} ({@code args[0]}: parquet or shards) for {@code args[2]} rounds (3). */
  public static void main(String[] args) throws Exception {
    String format = args[0];
    Path path = Path.of(args[1]);
    int rounds = args.length > 2 ? Integer.parseInt(args[2]) : 3;
    try (AutoCloseable data = open(format, path)) {
      @SuppressWarnings("unchecked")
      Dataset<Example> source = (Dataset<Example>) data;
      List<String> required = new ArrayList<>();
      for (TensorSpec f : ((HasSchema) data).schema().fields()) {
        if (!f.nullable()) {
          required.add(f.name());
        }
      }
      List<Pipeline<Batch>> pipelines = List.of(
          Pipeline.from(source).shuffle().filter(e -> e.index() % 8 != 0).batch(256).prefetch(4),
          Pipeline.from(source).shuffle().map(e -> relabelled(e, required))
              .filter(e -> e.index() % 8 != 0).batch(256).prefetch(4),
          Pipeline.from(source).filter(e -> e.index() % 8 != 0).batch(256).prefetch(4));
      String[] names = {"shuffle+filter", "shuffle+map+filter", "filter"};
      for (int w = 0; w < HandLoopVsPipeline.WARMUP_EPOCHS; w++) {
        for (Pipeline<Batch> p : pipelines) {
          HandLoopVsPipeline.sluice(p, 1_000 + w);
        }
      }
      long[] counts = new long[pipelines.size()];
      for (int i = 0; i < counts.length; i++) {
        counts[i] = count(pipelines.get(i));
      }
      List<List<Double>> speeds = new ArrayList<>();
      for (int i = 0; i < pipelines.size(); i++) {
        speeds.add(new ArrayList<>());
      }
      for (int r = 0; r < rounds; r++) {
        StringBuilder line = new StringBuilder("round " + r + ":");
        for (int i = 0; i < pipelines.size(); i++) {
          long c0 = HandLoopVsPipeline.cpuNanos();
          double s = HandLoopVsPipeline.sluice(pipelines.get(i), r);
          long c1 = HandLoopVsPipeline.cpuNanos();
          speeds.get(i).add(s);
          line.append(String.format(Locale.ROOT, " %s %.0f rec/s (%.0f CPU ns/rec);", names[i], s,
              (c1 - c0) / (double) counts[i]));
        }
        System.out.println(line);
      }
      for (int i = 0; i < pipelines.size(); i++) {
        System.out.printf(Locale.ROOT, "median %s %.0f%n", names[i], ElementVsIndexPath.median(speeds.get(i)));
      }
    }
  }

  /**
   * A new example of {@code e}'s fields that are never null plus {@code label2} (a copy of
   * {@code label}): a batch after a map takes its schema from the first example.
   */
  private static Example relabelled(Example e, List<String> required) {
    Example.Builder b = Example.builder(e.index());
    for (String name : required) {
      b.put(name, e.tensor(name));
    }
    return b.put("label2", e.tensor("label")).build();
  }

  private static long count(Pipeline<Batch> p) {
    return p.flux().map(b -> {
      try (b) {
        return (long) b.size();
      }
    }).reduce(0L, Long::sum).block();
  }

  private static AutoCloseable open(String format, Path path) {
    return switch (format) {
      case "parquet" -> Parquet.open(path);
      case "shards" -> Shards.open(path);
      default -> throw new IllegalArgumentException("format must be parquet or shards but it was " + format);
    };
  }
}
