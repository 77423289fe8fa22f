package dev.sluice.benchmarks;

import dev.sluice.core.Batch;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.PipelineIterator;
import dev.sluice.io.npy.Npy;
import dev.sluice.io.npy.NpyDataset;
import dev.sluice.operators.Pipeline;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;

/**
 * The index pipeline against a hand-written Java loop over the same page-cached {@code .npy}
 * (docs/benchmarks.md): {@code shuffle -> shard(1 of 1) -> batch 256 -> prefetch 4} versus, per
 * epoch, a seeded Fisher–Yates permutation of an {@code int[]} computed inside the timed region and
 * 256 rows per batch bulk-copied from the mapping into one reused direct buffer. Three warm-up
 * epochs each, then 5 alternating rounds; prints each round's records/s and the median ratio.
 *
 * <pre>
 * java -Xms2g -Xmx2g -XX:+AlwaysPreTouch -cp benchmarks/target/benchmarks.jar \
 *     dev.sluice.benchmarks.HandLoopVsPipeline [FILE.npy] [rows] [rounds]
 * </pre>
 * The file (one field {@code x}: uint8[256] per row) is written when missing.
 */
public final class HandLoopVsPipeline {
  static final int ROW_BYTES = 256;
  static final int BATCH = 256;
  /** Warm-up epochs of each contender before the measured rounds. */
  static final int WARMUP_EPOCHS = 3;

  private HandLoopVsPipeline() {}

  public static void main(String[] args) throws IOException {
    Path file = Path.of(args.length > 0 ? args[0] : "/tmp/sluice-bench/x.npy");
    long rows = args.length > 1 ? Long.parseLong(args[1]) : 2_000_000L;
    int rounds = args.length > 2 ? Integer.parseInt(args[2]) : 5;
    if (!Files.exists(file) || Files.size(file) < rows * ROW_BYTES) {
      writeNpy(file, rows);
    }
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ);
         NpyDataset data = Npy.open(file)) {
      MappedByteBuffer map = ch.map(FileChannel.MapMode.READ_ONLY, 0, ch.size());
      map.load(); // page-cache the file for both contenders
      int header = (int) (ch.size() - rows * ROW_BYTES);
      Pipeline<Batch> pipeline = Pipeline.from(data).shuffle().shard(1, 0).batch(BATCH).prefetch(4);
      System.out.printf(Locale.ROOT, "%d rows x %d bytes, batch %d; warm-up...%n", rows, ROW_BYTES, BATCH);
      for (int w = 0; w < WARMUP_EPOCHS; w++) { // until C2 has compiled both (one epoch was not enough)
        handLoop(map, header, (int) rows, 1_000 + w);
        sluice(pipeline, 1_000 + w);
      }
      List<Double> ratios = new ArrayList<>();
      List<Double> cpuRatios = new ArrayList<>();
      for (int r = 0; r < rounds; r++) {
        long c0 = cpuNanos();
        double hand = handLoop(map, header, (int) rows, r);
        long c1 = cpuNanos();
        double ours = sluice(pipeline, r);
        long c2 = cpuNanos();
        double handCpu = rows / ((c1 - c0) / 1e9);
        double oursCpu = rows / ((c2 - c1) / 1e9);
        ratios.add(ours / hand);
        cpuRatios.add(oursCpu / handCpu);
        System.out.printf(Locale.ROOT, "round %d: hand loop %.0f records/s (%.0f per CPU-second), sluice %.0f records/s"
            + " (%.0f per CPU-second), ratio %.3f (per CPU-second %.3f)%n", r, hand, handCpu, ours, oursCpu, ours / hand,
            oursCpu / handCpu);
      }
      double[] sorted = ratios.stream().mapToDouble(Double::doubleValue).sorted().toArray();
      double[] cpuSorted = cpuRatios.stream().mapToDouble(Double::doubleValue).sorted().toArray();
      System.out.printf(Locale.ROOT, "median ratio sluice / hand loop: %.3f (rounds: %s)%n",
          sorted[sorted.length / 2], Arrays.toString(sorted));
      System.out.printf(Locale.ROOT, "median ratio of records per CPU-second (all threads of the process): %.3f%n",
          cpuSorted[cpuSorted.length / 2]);
    }
  }

  /** CPU time of every thread of this process (the pipeline's producer and consumer included). */
  static long cpuNanos() {
    return ((com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory.getOperatingSystemMXBean())
        .getProcessCpuTime();
  }

  /** One epoch of the hand-written loop; returns records/s. */
  static double handLoop(ByteBuffer map, int header, int rows, long epoch) {
    ByteBuffer batch = ByteBuffer.allocateDirect(BATCH * ROW_BYTES).order(ByteOrder.LITTLE_ENDIAN);
    long sink = 0;
    long t0 = System.nanoTime();
    int[] perm = permutation(rows, epoch);
    for (int from = 0; from < rows; from += BATCH) {
      int n = Math.min(BATCH, rows - from);
      for (int k = 0; k < n; k++) {
        batch.put(k * ROW_BYTES, map, header + perm[from + k] * ROW_BYTES, ROW_BYTES);
      }
      sink += batch.getLong(0);
    }
    double s = (System.nanoTime() - t0) / 1e9;
    if (sink == 42) {
      System.out.print("");
    }
    return rows / s;
  }

  /** A seeded Fisher–Yates permutation of {@code 0 .. rows-1}, different for every epoch. */
  static int[] permutation(int rows, long epoch) {
    int[] perm = new int[rows];
    for (int i = 0; i < rows; i++) {
      perm[i] = i;
    }
    SplittableRandom random = new SplittableRandom(epoch * 0x9E3779B97F4A7C15L + 42);
    for (int i = rows - 1; i > 0; i--) {
      int j = random.nextInt(i + 1);
      int t = perm[i];
      perm[i] = perm[j];
      perm[j] = t;
    }
    return perm;
  }

  /** One epoch of the pipeline; returns records/s. */
  static double sluice(Pipeline<Batch> pipeline, long epoch) {
    long[] count = new long[2];
    long t0 = System.nanoTime();
    pipeline.flux(PipelineContext.defaults().withSeed(42).withEpoch(epoch)).doOnNext(b -> {
      try (b) {
        count[0] += b.size();
        count[1] += b.column(0).values().data().getLong(0);
      }
    }).blockLast();
    double s = (System.nanoTime() - t0) / 1e9;
    return count[0] / s;
  }

  /** As {@link #sluice}, consumed with {@link Pipeline#iterate} (the blocking iterator) instead of a flux. */
  static double sluiceIterate(Pipeline<Batch> pipeline, long epoch) {
    long[] count = new long[2];
    long t0 = System.nanoTime();
    try (PipelineIterator<Batch> batches = pipeline.iterate(PipelineContext.defaults().withSeed(42).withEpoch(epoch))) {
      for (Batch b : batches) {
        try (b) {
          count[0] += b.size();
          count[1] += b.column(0).values().data().getLong(0);
        }
      }
    }
    double s = (System.nanoTime() - t0) / 1e9;
    return count[0] / s;
  }

  /** A valid .npy v1.0 file of {@code rows} rows of uint8[256] (seeded bytes). */
  static void writeNpy(Path file, long rows) throws IOException {
    Files.createDirectories(file.toAbsolutePath().getParent());
    String dict = "{'descr': '|u1', 'fortran_order': False, 'shape': (" + rows + ", " + ROW_BYTES + "), }";
    int total = 10 + dict.length() + 1;
    int padded = (total + 63) / 64 * 64;
    StringBuilder h = new StringBuilder(dict);
    while (10 + h.length() + 1 < padded) {
      h.append(' ');
    }
    h.append('\n');
    ByteBuffer head = ByteBuffer.allocate(padded).order(ByteOrder.LITTLE_ENDIAN);
    head.put((byte) 0x93).put("NUMPY".getBytes(StandardCharsets.US_ASCII)).put((byte) 1).put((byte) 0);
    head.putShort((short) h.length()).put(h.toString().getBytes(StandardCharsets.US_ASCII)).flip();
    try (FileChannel out = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
        StandardOpenOption.TRUNCATE_EXISTING)) {
      out.write(head);
      ByteBuffer chunk = ByteBuffer.allocateDirect(ROW_BYTES * 4096);
      SplittableRandom random = new SplittableRandom(7);
      for (long r = 0; r < rows; r += 4096) {
        chunk.clear();
        int n = (int) Math.min(4096, rows - r);
        for (int i = 0; i < n * ROW_BYTES / 8; i++) {
          chunk.putLong(random.nextLong());
        }
        chunk.flip();
        while (chunk.hasRemaining()) {
          out.write(chunk);
        }
      }
    }
  }
}
