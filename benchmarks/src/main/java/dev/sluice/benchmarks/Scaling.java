package dev.sluice.benchmarks;

import dev.sluice.core.Batch;
import dev.sluice.io.npy.Npy;
import dev.sluice.io.npy.NpyDataset;
import dev.sluice.operators.Pipeline;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicLong;

/**
 * How the index path's parallel gather scales with its workers, against its limit: a hand-written
 * N-thread gather of the same batches (docs/benchmarks.md, "Scaling"). Per worker count, the
 * pipeline {@code shuffle -> batch(256, workers) -> prefetch(4)} (what {@code sluice bench --shuffle
 * --batch 256 --num-workers N} runs) and the hand loop alternate for a number of rounds, one epoch
 * each: the loop computes the epoch's seeded permutation, then N threads each gather their stripe of
 * batches ({@code b % N == t}) into a preallocated buffer of their own. Prints each round's
 * records/s and process CPU-seconds per million records, then the medians.
 *
 * <pre>
 * java -Xms2g -Xmx2g -cp benchmarks/target/benchmarks.jar dev.sluice.benchmarks.Scaling \
 *     [FILE.npy] [rows] [rounds] [workers,...]
 * </pre>
 * The file (one field {@code x}: uint8[256] per row) is written when missing.
 */
public final class Scaling {
  private Scaling() {}

  public static void main(String[] args) throws IOException, InterruptedException {
    Path file = Path.of(args.length > 0 ? args[0] : "/tmp/sluice-bench/x.npy");
    long rows = args.length > 1 ? Long.parseLong(args[1]) : 2_000_000L;
    int rounds = args.length > 2 ? Integer.parseInt(args[2]) : 5;
    int[] workers = Arrays.stream((args.length > 3 ? args[3] : "1,2").split(",")).mapToInt(Integer::parseInt).toArray();
    int rowBytes = HandLoopVsPipeline.ROW_BYTES;
    if (!Files.exists(file) || Files.size(file) < rows * rowBytes) {
      HandLoopVsPipeline.writeNpy(file, rows);
    }
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ);
         NpyDataset data = Npy.open(file)) {
      MappedByteBuffer map = ch.map(FileChannel.MapMode.READ_ONLY, 0, ch.size());
      map.load();
      int header = (int) (ch.size() - rows * rowBytes);
      System.out.printf(Locale.ROOT, "%d rows x %d bytes, batch %d, %d processors%n", rows, rowBytes,
          HandLoopVsPipeline.BATCH, Runtime.getRuntime().availableProcessors());
      for (int n : workers) {
        Pipeline<Batch> pipeline = Pipeline.from(data).shuffle().batch(HandLoopVsPipeline.BATCH, false, n).prefetch(4);
        for (int w = 0; w < HandLoopVsPipeline.WARMUP_EPOCHS; w++) {
          handLoop(map, header, (int) rows, 1_000 + w, n);
          HandLoopVsPipeline.sluice(pipeline, 1_000 + w);
        }
        List<double[]> hand = new ArrayList<>();
        List<double[]> ours = new ArrayList<>();
        for (int r = 0; r < rounds; r++) {
          long c0 = HandLoopVsPipeline.cpuNanos();
          double h = handLoop(map, header, (int) rows, r, n);
          long c1 = HandLoopVsPipeline.cpuNanos();
          double s = HandLoopVsPipeline.sluice(pipeline, r);
          long c2 = HandLoopVsPipeline.cpuNanos();
          hand.add(new double[] {h, (c1 - c0) / 1e9 / (rows / 1e6)});
          ours.add(new double[] {s, (c2 - c1) / 1e9 / (rows / 1e6)});
          System.out.printf(Locale.ROOT, "workers %d round %d: hand loop %.2f M/s (%.3f CPU-s/M), sluice %.2f M/s"
              + " (%.3f CPU-s/M)%n", n, r, h / 1e6, hand.get(r)[1], s / 1e6, ours.get(r)[1]);
        }
        System.out.printf(Locale.ROOT, "workers %d median: hand loop %.2f M/s %.3f CPU-s/M; sluice %.2f M/s %.3f CPU-s/M;"
            + " sluice/hand %.2f%n", n, median(hand, 0) / 1e6, median(hand, 1), median(ours, 0) / 1e6, median(ours, 1),
            median(ours, 0) / median(hand, 0));
      }
    }
  }

  private static double median(List<double[]> xs, int k) {
    double[] v = xs.stream().mapToDouble(x -> x[k]).sorted().toArray();
    return v[v.length / 2];
  }

  /** One epoch of the hand-written gather on {@code threads} threads; returns records/s. */
  static double handLoop(ByteBuffer map, int header, int rows, long epoch, int threads) throws InterruptedException {
    int batch = HandLoopVsPipeline.BATCH;
    int rowBytes = HandLoopVsPipeline.ROW_BYTES;
    int batches = (rows + batch - 1) / batch;
    ByteBuffer[] buffers = new ByteBuffer[threads];
    for (int t = 0; t < threads; t++) {
      buffers[t] = ByteBuffer.allocateDirect(batch * rowBytes).order(ByteOrder.LITTLE_ENDIAN);
    }
    AtomicLong sink = new AtomicLong();
    long t0 = System.nanoTime();
    int[] perm = HandLoopVsPipeline.permutation(rows, epoch);
    Thread[] all = new Thread[threads];
    for (int t = 0; t < threads; t++) {
      int stripe = t;
      all[t] = new Thread(() -> {
        ByteBuffer out = buffers[stripe];
        long local = 0;
        for (int b = stripe; b < batches; b += threads) {
          int from = b * batch;
          int n = Math.min(batch, rows - from);
          for (int k = 0; k < n; k++) {
            out.put(k * rowBytes, map, header + perm[from + k] * rowBytes, rowBytes);
          }
          local += out.getLong(0);
        }
        sink.addAndGet(local);
      }, "hand-gather-" + t);
      all[t].start();
    }
    for (Thread t : all) {
      t.join();
    }
    double s = (System.nanoTime() - t0) / 1e9;
    if (sink.get() == 42) {
      System.out.print("");
    }
    return rows / s;
  }
}
