package dev.sluice.benchmarks;

import dev.sluice.core.Batch;
import dev.sluice.core.DType;
import dev.sluice.core.Dataset;
import dev.sluice.core.Datasets;
import dev.sluice.core.Example;
import dev.sluice.core.HasSchema;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.RandomAccessDataset;
import dev.sluice.core.Schema;
import dev.sluice.core.Shape;
import dev.sluice.core.Tensor;
import dev.sluice.core.TensorSpec;
import dev.sluice.core.internal.shardfile.FieldLayout;
import dev.sluice.core.internal.shardfile.ShardFile;
import dev.sluice.io.WriteOptions;
import dev.sluice.io.npy.Npy;
import dev.sluice.io.npy.NpyDataset;
import dev.sluice.io.shards.ShardSet;
import dev.sluice.io.shards.Shards;
import dev.sluice.operators.Pipeline;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.Comparator;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.stream.Stream;

/**
 * The shard format's three benchmarks, each in one JVM with the contenders alternating round by
 * round (median of the per-round ratios), wall time beside the process's CPU time:
 *
 * <ol>
 *   <li>{@code index}: {@code shuffle -> batch 256} (and the same in order) over a shard set against
 *       the same pipeline over the same rows as {@code .npy} files (x float32[64], label int64);
 *   <li>{@code varlen}: shuffled batches of 256 records of 100 to 10,000 bytes through
 *       {@code Pipeline.from(shards).shuffle().batch(256)} against a hand-written loop over the
 *       same shard's offset index (a seeded permutation, then per record two offset loads and one
 *       bulk copy into a reused buffer);
 *   <li>{@code convert}: an npy directory into 8 shards with 1 and with 2 workers.
 * </ol>
 *
 * <pre>
 * java -Xms2g -Xmx2g -XX:+AlwaysPreTouch -cp benchmarks/target/benchmarks.jar \
 *     dev.sluice.benchmarks.ShardBench index|varlen|convert [DIR] [rows] [rounds]
 * </pre>
 * Data is generated into {@code DIR} (default {@code /tmp/sluice-shard-bench}) when missing.
 */
public final class ShardBench {
  static final int BATCH = 256;
  /** Epochs of each contender per round of the index benchmark. */
  static final int INDEX_EPOCHS = 20;
  /** Epochs of each contender per round of the variable-length benchmark (an epoch is a few ms). */
  static final int VARLEN_EPOCHS = 20;

  private ShardBench() {}

  public static void main(String[] args) throws IOException {
    String what = args.length > 0 ? args[0] : "index";
    Path dir = Path.of(args.length > 1 ? args[1] : "/tmp/sluice-shard-bench");
    int rounds = args.length > 3 ? Integer.parseInt(args[3]) : 5;
    switch (what) {
      case "index" -> index(dir, args.length > 2 ? Integer.parseInt(args[2]) : 500_000, rounds);
      case "varlen" -> varlen(dir, args.length > 2 ? Integer.parseInt(args[2]) : 40_000, rounds);
      case "convert" -> convert(dir, args.length > 2 ? Integer.parseInt(args[2]) : 500_000, rounds);
      default -> throw new IllegalArgumentException("index, varlen or convert, not " + what);
    }
  }

  /** CPU time of every thread of this process. */
  static long cpuNanos() {
    return ((com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory.getOperatingSystemMXBean())
        .getProcessCpuTime();
  }

  static void add(long[] into, long[] v) {
    for (int i = 0; i < into.length; i++) {
      into[i] += v[i];
    }
  }

  static double median(double[] v) {
    double[] s = v.clone();
    Arrays.sort(s);
    return s[s.length / 2];
  }

  /** One epoch of {@code pipeline}: {records, wall ns, cpu ns}. */
  static long[] epoch(Pipeline<Batch> pipeline, long epoch) {
    long[] sink = new long[2];
    long c0 = cpuNanos();
    long t0 = System.nanoTime();
    pipeline.flux(PipelineContext.defaults().withSeed(42).withEpoch(epoch)).doOnNext(b -> {
      try (b) {
        sink[0] += b.size();
        sink[1] += b.column(0).values().data().get(0);
      }
    }).blockLast();
    return new long[] {sink[0], System.nanoTime() - t0, cpuNanos() - c0};
  }

  private static void index(Path dir, int rows, int rounds) throws IOException {
    Path npy = dir.resolve("index-npy-" + rows);
    Path shards = dir.resolve("index-shards-" + rows);
    Dataset<Example> source = Datasets.synthetic(rows, 64, 1);
    if (!Files.exists(npy.resolve("x.npy"))) {
      Npy.write(source, npy);
    }
    if (!Files.exists(shards.resolve(Shards.METADATA))) {
      Shards.write(source, shards, WriteOptions.defaults().withNumShards(8).withWorkers(2));
    }
    try (NpyDataset n = Npy.open(npy); ShardSet s = Shards.open(shards)) {
      for (boolean shuffled : new boolean[] {true, false}) {
        Pipeline<Batch> pn = shuffled ? Pipeline.from(n).shuffle().batch(BATCH) : Pipeline.from(n).batch(BATCH);
        Pipeline<Batch> ps = shuffled ? Pipeline.from(s).shuffle().batch(BATCH) : Pipeline.from(s).batch(BATCH);
        for (int w = 0; w < 3; w++) {
          epoch(pn, 100 + w);
          epoch(ps, 100 + w);
        }
        double[] wall = new double[rounds];
        double[] cpu = new double[rounds];
        System.out.printf(Locale.ROOT, "index path, %s, %d rows of x float32[64] + label int64, batch %d:%n",
            shuffled ? "shuffled" : "in order", rows, BATCH);
        for (int r = 0; r < rounds; r++) {
          long[] a = new long[3];
          long[] b = new long[3];
          for (int e = 0; e < INDEX_EPOCHS; e++) { // alternating epochs, so both see the same load
            add(a, epoch(pn, r * INDEX_EPOCHS + e));
            add(b, epoch(ps, r * INDEX_EPOCHS + e));
          }
          wall[r] = (double) a[1] / b[1]; // shards records/s over npy records/s
          cpu[r] = (double) a[2] / b[2];
          System.out.printf(Locale.ROOT, "  round %d: npy %.2f M records/s (%.0f ns CPU/record), shards %.2f M records/s"
              + " (%.0f ns CPU/record), ratio %.3f wall, %.3f CPU%n", r + 1, a[0] / (a[1] / 1e3), (double) a[2] / a[0],
              b[0] / (b[1] / 1e3), (double) b[2] / b[0], wall[r], cpu[r]);
        }
        System.out.printf(Locale.ROOT, "  median ratio shards / npy: %.3f wall, %.3f CPU%n", median(wall), median(cpu));
      }
    }
  }

  /** Rows of one bytes field {@code data}, 100 to 10,000 seeded bytes each. */
  private record Blobs(long size) implements RandomAccessDataset<Example>, HasSchema {
    @Override
    public Schema schema() {
      return Schema.of(new TensorSpec("data", DType.BYTES, Shape.scalar()));
    }

    @Override
    public Example get(long index) {
      SplittableRandom rnd = new SplittableRandom(index * 0x9E3779B97F4A7C15L);
      byte[] b = new byte[100 + rnd.nextInt(9_901)];
      rnd.nextBytes(b);
      return Example.of(index, "data", Tensor.wrap(DType.BYTES, Shape.scalar(), ByteBuffer.wrap(b)));
    }
  }

  private static void varlen(Path dir, int rows, int rounds) throws IOException {
    Path shards = dir.resolve("varlen-" + rows);
    if (!Files.exists(shards.resolve(Shards.METADATA))) {
      Shards.write(new Blobs(rows), shards, WriteOptions.defaults().withNumShards(1));
    }
    Path file = shards.resolve("shard-00000.shard");
    try (ShardSet s = Shards.open(shards); FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
      ShardFile.Frame frame = ShardFile.read(file.toString(), ch, ch.size());
      FieldLayout data = FieldLayout.of(s.schema().fields()).get(0);
      ShardFile.Block off = frame.blocks().get(data.block(FieldLayout.Buffer.OFFSETS));
      ShardFile.Block val = frame.blocks().get(data.block(FieldLayout.Buffer.VALUES));
      MappedByteBuffer offsets = ch.map(FileChannel.MapMode.READ_ONLY, off.offset(), off.length());
      MappedByteBuffer values = ch.map(FileChannel.MapMode.READ_ONLY, val.offset(), val.length());
      offsets.load();
      offsets.order(ByteOrder.LITTLE_ENDIAN);
      values.load();
      Pipeline<Batch> ps = Pipeline.from(s).shuffle().batch(BATCH);
      for (int w = 0; w < 3; w++) {
        handLoop(offsets, values, rows, 100 + w);
        epoch(ps, 100 + w);
      }
      double[] wall = new double[rounds];
      double[] cpu = new double[rounds];
      System.out.printf(Locale.ROOT, "variable length, shuffled, %d records of 100-10,000 bytes (%.0f MB), batch %d:%n",
          rows, val.length() / 1e6, BATCH);
      for (int r = 0; r < rounds; r++) {
        long[] a = new long[3];
        long[] b = new long[3];
        for (int e = 0; e < VARLEN_EPOCHS; e++) { // alternating epochs, so both see the same load
          add(a, handLoop(offsets, values, rows, r * VARLEN_EPOCHS + e));
          add(b, epoch(ps, r * VARLEN_EPOCHS + e));
        }
        wall[r] = (double) a[1] / b[1];
        cpu[r] = (double) a[2] / b[2];
        System.out.printf(Locale.ROOT, "  round %d: hand loop %.0f k records/s (%.0f ns CPU/record), sluice %.0f k"
            + " records/s (%.0f ns CPU/record), ratio %.3f wall, %.3f CPU%n", r + 1, a[0] / (a[1] / 1e6),
            (double) a[2] / a[0], b[0] / (b[1] / 1e6), (double) b[2] / b[0], wall[r], cpu[r]);
      }
      System.out.printf(Locale.ROOT, "  median ratio sluice / hand loop: %.3f wall, %.3f CPU%n", median(wall), median(cpu));
    }
  }

  /**
   * One shuffled epoch by hand over the offset index: a seeded Fisher–Yates permutation, then per
   * batch the records' bytes copied back to back into one reused buffer and their end offsets into
   * another (the batch a training step would receive). Returns {records, wall ns, cpu ns}.
   */
  static long[] handLoop(ByteBuffer offsets, ByteBuffer values, int rows, long epoch) {
    long c0 = cpuNanos();
    long t0 = System.nanoTime();
    int[] perm = HandLoopVsPipeline.permutation(rows, epoch);
    ByteBuffer batch = ByteBuffer.allocateDirect(BATCH * 10_000);
    ByteBuffer ends = ByteBuffer.allocateDirect((BATCH + 1) * 8).order(ByteOrder.LITTLE_ENDIAN);
    long sink = 0;
    for (int from = 0; from < rows; from += BATCH) {
      int n = Math.min(BATCH, rows - from);
      int at = 0;
      for (int k = 0; k < n; k++) {
        int row = perm[from + k];
        int start = (int) offsets.getLong(row * 8);
        int end = (int) offsets.getLong(row * 8 + 8);
        batch.put(at, values, start, end - start);
        at += end - start;
        ends.putLong((k + 1) * 8, at);
      }
      sink += batch.get(0) + ends.getLong(n * 8);
    }
    if (sink == 42) {
      System.out.print("");
    }
    return new long[] {rows, System.nanoTime() - t0, cpuNanos() - c0};
  }

  private static void convert(Path dir, int rows, int rounds) throws IOException {
    Path npy = dir.resolve("convert-npy-" + rows);
    if (!Files.exists(npy.resolve("x.npy"))) {
      Npy.write(Datasets.synthetic(rows, 64, 1), npy);
    }
    Path out = dir.resolve("convert-out");
    try (NpyDataset source = Npy.open(npy)) {
      for (int w = 1; w <= 2; w++) {
        Shards.write(source, out, WriteOptions.defaults().withNumShards(8).withWorkers(w)); // warm up
      }
      double[] wall = new double[rounds];
      double[] cpu = new double[rounds];
      System.out.printf(Locale.ROOT, "convert %d rows of x float32[64] + label int64 (npy, %.0f MB) into 8 shards:%n",
          rows, rows * 264 / 1e6);
      for (int r = 0; r < rounds; r++) {
        long[][] t = new long[3][];
        for (int w = 1; w <= 2; w++) {
          long c0 = cpuNanos();
          long t0 = System.nanoTime();
          Shards.write(source, out, WriteOptions.defaults().withNumShards(8).withWorkers(w));
          t[w] = new long[] {System.nanoTime() - t0, cpuNanos() - c0};
        }
        wall[r] = (double) t[1][0] / t[2][0];
        cpu[r] = (double) t[2][1] / t[1][1];
        System.out.printf(Locale.ROOT, "  round %d: 1 worker %.3f s (%.0f ns CPU/record), 2 workers %.3f s (%.0f ns"
            + " CPU/record): speed-up %.2f, CPU 2/1 %.2f%n", r + 1, t[1][0] / 1e9, (double) t[1][1] / rows,
            t[2][0] / 1e9, (double) t[2][1] / rows, wall[r], cpu[r]);
      }
      System.out.printf(Locale.ROOT, "  median speed-up 2 workers / 1: %.2f wall; CPU per record 2 / 1: %.2f%n",
          median(wall), median(cpu));
    } finally {
      if (Files.isDirectory(out)) {
        try (Stream<Path> s = Files.list(out)) {
          for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
            Files.deleteIfExists(p);
          }
        }
      }
    }
  }
}
