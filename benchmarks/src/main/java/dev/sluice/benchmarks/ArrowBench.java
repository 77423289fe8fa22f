package dev.sluice.benchmarks;

import dev.sluice.core.Batch;
import dev.sluice.core.Dataset;
import dev.sluice.core.Datasets;
import dev.sluice.core.Example;
import dev.sluice.io.arrow.Arrow;
import dev.sluice.io.arrow.ArrowDataset;
import dev.sluice.io.arrow.ArrowWriteOptions;
import dev.sluice.io.npy.Npy;
import dev.sluice.io.npy.NpyDataset;
import dev.sluice.operators.Pipeline;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;

/**
 * The Arrow IPC benchmarks, each in one JVM with the contenders alternating epoch by epoch (median
 * of the per-round ratios), wall time beside the process's CPU time, over the same rows (x
 * float32[64], label int64) as a page-cached {@code .arrow} file (record batches of 65,536 rows,
 * uncompressed) and as {@code .npy} files:
 *
 * <ol>
 *   <li>{@code index}: {@code shuffle -> batch 256} and {@code batch 256} in order through the index
 *       path (bulk gathers) over the Arrow file against the same over the {@code .npy} files;
 *   <li>{@code columnar}: the columnar path over the Arrow file ({@code asSplits()}: record batches
 *       decoded and cut into batches; shuffled, the window shuffle of 10,000 rows) against the index
 *       path over the same file (shuffled: the global shuffle).
 * </ol>
 *
 * <pre>
 * java -Xms2g -Xmx2g -XX:+AlwaysPreTouch --add-opens=java.base/java.nio=ALL-UNNAMED \
 *     -cp benchmarks/target/benchmarks.jar dev.sluice.benchmarks.ArrowBench index|columnar [DIR] [rows] [rounds]
 * </pre>
 * Data is generated into {@code DIR} (default {@code /tmp/sluice-arrow-bench}) when missing.
 */
public final class ArrowBench {
  static final int BATCH = 256;
  /** Epochs of each contender per round. */
  static final int EPOCHS = 4;

  private ArrowBench() {}

  public static void main(String[] args) throws IOException {
    String what = args.length > 0 ? args[0] : "index";
    Path dir = Path.of(args.length > 1 ? args[1] : "/tmp/sluice-arrow-bench");
    long rows = args.length > 2 ? Long.parseLong(args[2]) : 2_000_000;
    int rounds = args.length > 3 ? Integer.parseInt(args[3]) : 5;
    Path npy = dir.resolve("npy-" + rows);
    Path arrow = dir.resolve("x-" + rows + ".arrow");
    Dataset<Example> source = Datasets.synthetic(rows, 64, 1);
    if (!Files.exists(npy.resolve("x.npy"))) {
      Npy.write(source, npy);
    }
    if (!Files.exists(arrow)) {
      Arrow.write(source, arrow, ArrowWriteOptions.defaults());
    }
    try (NpyDataset n = Npy.open(npy); ArrowDataset a = Arrow.open(arrow)) {
      switch (what) {
        case "index" -> {
          compare("index path, shuffled", "npy", Pipeline.from(n).shuffle().batch(BATCH),
              "arrow", Pipeline.from(a).shuffle().batch(BATCH), rows, rounds);
          compare("index path, in order", "npy", Pipeline.from(n).batch(BATCH),
              "arrow", Pipeline.from(a).batch(BATCH), rows, rounds);
        }
        case "columnar" -> {
          compare("shuffled: global shuffle (index path) against window shuffle (columnar path)",
              "index", Pipeline.from(a).shuffle().batch(BATCH),
              "columnar", Pipeline.from(a.asSplits()).shuffle().batch(BATCH), rows, rounds);
          compare("in order: index path against columnar path", "index", Pipeline.from(a).batch(BATCH),
              "columnar", Pipeline.from(a.asSplits()).batch(BATCH), rows, rounds);
        }
        default -> throw new IllegalArgumentException("index or columnar, not " + what);
      }
    }
  }

  /** Alternates {@code pa} and {@code pb} epoch by epoch; prints each round and the median ratio b / a. */
  private static void compare(String title, String na, Pipeline<Batch> pa, String nb, Pipeline<Batch> pb, long rows,
      int rounds) {
    for (int w = 0; w < 2; w++) {
      ShardBench.epoch(pa, 100 + w);
      ShardBench.epoch(pb, 100 + w);
    }
    double[] wall = new double[rounds];
    double[] cpu = new double[rounds];
    System.out.printf(Locale.ROOT, "%s, %d rows of x float32[64] + label int64, batch %d:%n", title, rows, BATCH);
    for (int r = 0; r < rounds; r++) {
      long[] a = new long[3];
      long[] b = new long[3];
      for (int e = 0; e < EPOCHS; e++) {
        ShardBench.add(a, ShardBench.epoch(pa, r * EPOCHS + e));
        ShardBench.add(b, ShardBench.epoch(pb, r * EPOCHS + e));
      }
      wall[r] = (double) a[1] / b[1]; // b's records/s over a's
      cpu[r] = (double) a[2] / b[2];
      System.out.printf(Locale.ROOT, "  round %d: %s %.2f M records/s (%.0f ns CPU/record), %s %.2f M records/s"
          + " (%.0f ns CPU/record), ratio %.3f wall, %.3f CPU%n", r + 1, na, a[0] / (a[1] / 1e3),
          (double) a[2] / a[0], nb, b[0] / (b[1] / 1e3), (double) b[2] / b[0], wall[r], cpu[r]);
    }
    System.out.printf(Locale.ROOT, "  median ratio %s / %s: %.3f wall, %.3f CPU%n", nb, na, ShardBench.median(wall),
        ShardBench.median(cpu));
  }
}
