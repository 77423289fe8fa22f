package dev.sluice.benchmarks;

import dev.sluice.core.Batch;
import dev.sluice.io.npy.Npy;
import dev.sluice.io.npy.NpyDataset;
import dev.sluice.operators.Pipeline;
import java.io.IOException;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.function.Function;
import java.util.function.ToDoubleBiFunction;

/**
 * The element path against the index path over the same page-cached {@code .npy}, in alternating
 * rounds of one epoch each:
 * <ol>
 *   <li>index path: {@code shuffle() -> batch 256 -> prefetch 4} (global permutation, gather);
 *   <li>element path: {@code shuffle(10_000) -> batch 256 -> prefetch 4} (a lazy {@code Example}
 *       per row through the buffer shuffle; each batch of unchanged rows is gathered from the
 *       source in one bulk call);
 *   <li>element path with {@code map(identity, 2)} before the batch.
 * </ol>
 * Prints each round's records/s and the median ratios element/index and map/element. The
 * pipelines are consumed as a flux ({@code flux}, the default) or through {@code Pipeline.iterate}
 * ({@code iterate}: the blocking iterator, whose pass tracks its workers' tasks).
 *
 * <pre>
 * java -Xms2g -Xmx2g -XX:+AlwaysPreTouch -cp benchmarks/target/benchmarks.jar \
 *     dev.sluice.benchmarks.ElementVsIndexPath [FILE.npy] [rows] [rounds] [flux|iterate]
 * </pre>
 */
public final class ElementVsIndexPath {
  private ElementVsIndexPath() {}

  public static void main(String[] args) throws IOException {
    Path file = Path.of(args.length > 0 ? args[0] : "/tmp/sluice-bench/x.npy");
    long rows = args.length > 1 ? Long.parseLong(args[1]) : 2_000_000L;
    int rounds = args.length > 2 ? Integer.parseInt(args[2]) : 5;
    boolean iterate = args.length > 3 && args[3].equals("iterate");
    if (args.length > 3 && !iterate && !args[3].equals("flux")) {
      throw new IllegalArgumentException("consumption must be flux or iterate but it was " + args[3]);
    }
    ToDoubleBiFunction<Pipeline<Batch>, Long> epoch = iterate ? HandLoopVsPipeline::sluiceIterate : HandLoopVsPipeline::sluice;
    if (!Files.exists(file) || Files.size(file) < rows * HandLoopVsPipeline.ROW_BYTES) {
      HandLoopVsPipeline.writeNpy(file, rows);
    }
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ); NpyDataset data = Npy.open(file)) {
      MappedByteBuffer map = ch.map(FileChannel.MapMode.READ_ONLY, 0, ch.size());
      map.load();
      Pipeline<Batch> index = Pipeline.from(data).shuffle().batch(256).prefetch(4);
      Pipeline<Batch> element = Pipeline.from(data).shuffle(10_000).batch(256).prefetch(4);
      Pipeline<Batch> mapped = Pipeline.from(data).shuffle(10_000).map(Function.identity(), 2).batch(256).prefetch(4);
      System.out.printf(Locale.ROOT, "%d rows x %d bytes, batch 256, consumed by %s; warm-up...%n", data.size(),
          HandLoopVsPipeline.ROW_BYTES, iterate ? "iterate" : "flux");
      for (long w = 0; w < HandLoopVsPipeline.WARMUP_EPOCHS; w++) {
        epoch.applyAsDouble(index, 1_000 + w);
        epoch.applyAsDouble(element, 1_000 + w);
        epoch.applyAsDouble(mapped, 1_000 + w);
      }
      List<Double> elementOverIndex = new ArrayList<>();
      List<Double> mapOverElement = new ArrayList<>();
      for (long r = 0; r < rounds; r++) {
        long c0 = HandLoopVsPipeline.cpuNanos();
        double i = epoch.applyAsDouble(index, r);
        long c1 = HandLoopVsPipeline.cpuNanos();
        double e = epoch.applyAsDouble(element, r);
        long c2 = HandLoopVsPipeline.cpuNanos();
        double m = epoch.applyAsDouble(mapped, r);
        long c3 = HandLoopVsPipeline.cpuNanos();
        elementOverIndex.add(e / i);
        mapOverElement.add(m / e);
        double n = data.size();
        System.out.printf(Locale.ROOT, "round %d: index %.0f, element %.0f, element+map(identity, 2) %.0f records/s;"
            + " CPU ns per record: index %.1f, element %.1f, element+map %.1f%n",
            r, i, e, m, (c1 - c0) / n, (c2 - c1) / n, (c3 - c2) / n);
      }
      System.out.printf(Locale.ROOT, "median element/index %.3f %s; median (element+map)/element %.3f %s%n",
          median(elementOverIndex), elementOverIndex, median(mapOverElement), mapOverElement);
    }
  }

  static double median(List<Double> values) {
    double[] sorted = values.stream().mapToDouble(Double::doubleValue).sorted().toArray();
    return sorted[sorted.length / 2];
  }

  static String format(double[] a) {
    return Arrays.toString(a);
  }
}
