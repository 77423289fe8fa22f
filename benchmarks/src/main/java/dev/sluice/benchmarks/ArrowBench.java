package dev.sluice.benchmarks;

import dev.sluice.core.Batch;
import dev.sluice.core.Dataset;
import dev.sluice.core.Datasets;
import dev.sluice.core.Example;
import dev.sluice.core.Split;
import dev.sluice.io.arrow.Arrow;
import dev.sluice.io.arrow.ArrowDataset;
import dev.sluice.io.arrow.ArrowWriteOptions;
import dev.sluice.io.npy.Npy;
import dev.sluice.io.npy.NpyDataset;
import dev.sluice.operators.Pipeline;
import java.io.FileOutputStream;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.LargeVarCharVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowFileWriter;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;

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
 *       path over the same file (shuffled: the global shuffle);
 *   <li>{@code decode}: decoding alone, the thread's CPU time per record of reading every split's
 *       batches ({@code readBatches}, each batch closed at once) of two files written by Arrow Java
 *       (record batches of 65,536 rows): {@code converted}, whose columns the reader converts (a
 *       string column with int32 offsets and 10 % null rows, an int32 column with nulls), and
 *       {@code shared}, whose columns it shares with the file (a string column with int64 offsets
 *       and an int32 column, no nulls). Uses only public API, so it runs against older builds too.
 * </ol>
 *
 * <pre>
 * java -Xms2g -Xmx2g -XX:+AlwaysPreTouch --add-opens=java.base/java.nio=ALL-UNNAMED \
 *     -cp benchmarks/target/benchmarks.jar dev.sluice.benchmarks.ArrowBench index|columnar [DIR] [rows] [rounds]
 * java -Xms1g -Xmx1g -Xmn128m -XX:+AlwaysPreTouch --add-opens=java.base/java.nio=ALL-UNNAMED \
 *     -cp benchmarks/target/benchmarks.jar dev.sluice.benchmarks.ArrowBench decode [DIR] [rows] [rounds] [batch]
 * </pre>
 * ({@code batch}: rows per batch, default 1024.) The decode mode counts the thread's system time too:
 * a small pretouched young generation keeps page faults of fresh heap memory out of its figures.
 * Data is generated into {@code DIR} (default {@code /tmp/sluice-arrow-bench}) when missing.
 */
public final class ArrowBench {
  static final int BATCH = 256;
  /** Epochs of each contender per round. */
  static final int EPOCHS = 4;
  /** Rows per record batch of the {@code decode} files. */
  static final int RECORD_BATCH = 65_536;

  private ArrowBench() {}

  public static void main(String[] args) throws IOException {
    String what = args.length > 0 ? args[0] : "index";
    Path dir = Path.of(args.length > 1 ? args[1] : "/tmp/sluice-arrow-bench");
    long rows = args.length > 2 ? Long.parseLong(args[2]) : 2_000_000;
    int rounds = args.length > 3 ? Integer.parseInt(args[3]) : 5;
    if (what.equals("decode")) {
      decode(dir, rows, rounds, args.length > 4 ? Integer.parseInt(args[4]) : 1024);
      return;
    }
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
        default -> throw new IllegalArgumentException("index, columnar or decode, not " + what);
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

  /**
   * The {@code decode} mode: {@code rounds} rounds, each decoding the converted and the shared file
   * {@link #EPOCHS} times (alternating), printing each file's thread CPU ns per record, then the medians.
   */
  private static void decode(Path dir, long rows, int rounds, int batch) throws IOException {
    Files.createDirectories(dir);
    Path converted = dir.resolve("decode-converted-" + rows + ".arrow");
    Path shared = dir.resolve("decode-shared-" + rows + ".arrow");
    if (!Files.exists(converted)) {
      writeDecodeFile(converted, rows, true);
    }
    if (!Files.exists(shared)) {
      writeDecodeFile(shared, rows, false);
    }
    ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    try (ArrowDataset c = Arrow.open(converted); ArrowDataset s = Arrow.open(shared)) {
      for (int w = 0; w < 30; w++) { // warm-up: until the JIT has compiled the decoders
        decodeAll(c, batch, threads);
        decodeAll(s, batch, threads);
      }
      double[] nc = new double[rounds];
      double[] ns = new double[rounds];
      System.out.printf(Locale.ROOT, "decode alone, %d rows, record batches of %d, batches of %d:%n", rows,
          RECORD_BATCH, batch);
      for (int r = 0; r < rounds; r++) {
        long[] a = new long[2];
        long[] b = new long[2];
        for (int e = 0; e < EPOCHS; e++) {
          ShardBench.add(a, decodeAll(c, batch, threads));
          ShardBench.add(b, decodeAll(s, batch, threads));
        }
        nc[r] = (double) a[1] / a[0];
        ns[r] = (double) b[1] / b[0];
        System.out.printf(Locale.ROOT, "  round %d: converted %.2f ns CPU/record, shared %.2f ns CPU/record%n", r + 1,
            nc[r], ns[r]);
      }
      System.out.printf(Locale.ROOT, "  median: converted %.2f ns CPU/record, shared %.2f ns CPU/record%n",
          ShardBench.median(nc), ShardBench.median(ns));
    }
  }

  /** Reads every split's batches of {@code ds} on this thread, closing each: {records, thread CPU ns}. */
  private static long[] decodeAll(ArrowDataset ds, int batch, ThreadMXBean threads) {
    long cpu = threads.getCurrentThreadCpuTime();
    long records = 0;
    for (Split split : ds.splits()) {
      Long n = ds.readBatches(split, 0, Long.MAX_VALUE, batch).map(b -> {
        long size = b.size();
        b.close();
        return size;
      }).reduce(0L, Long::sum).block();
      records += n;
    }
    return new long[] {records, threads.getCurrentThreadCpuTime() - cpu};
  }

  /**
   * Writes {@code rows} rows of {@code s} (strings of 0 to 23 ASCII bytes) and {@code i} (int32) in
   * record batches of {@link #RECORD_BATCH}: {@code converted}, int32 string offsets with every
   * tenth row null in both columns (in turn); else int64 string offsets and no nulls.
   */
  private static void writeDecodeFile(Path file, long rows, boolean converted) throws IOException {
    Field s = new Field("s", new FieldType(converted, converted ? new ArrowType.Utf8() : new ArrowType.LargeUtf8(),
        null), null);
    Field i = new Field("i", new FieldType(converted, new ArrowType.Int(32, true), null), null);
    Random random = new Random(42);
    byte[] text = new byte[23];
    Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
    try (RootAllocator allocator = new RootAllocator();
        VectorSchemaRoot root = VectorSchemaRoot.create(new org.apache.arrow.vector.types.pojo.Schema(List.of(s, i)),
            allocator);
        FileOutputStream out = new FileOutputStream(tmp.toFile());
        ArrowFileWriter w = new ArrowFileWriter(root, null, out.getChannel())) {
      w.start();
      VarCharVector sv = converted ? (VarCharVector) root.getVector("s") : null;
      LargeVarCharVector lv = converted ? null : (LargeVarCharVector) root.getVector("s");
      IntVector iv = (IntVector) root.getVector("i");
      for (long at = 0; at < rows; at += RECORD_BATCH) {
        int n = (int) Math.min(RECORD_BATCH, rows - at);
        root.allocateNew();
        for (int r = 0; r < n; r++) {
          long row = at + r;
          if (converted && row % 10 == 3) {
            sv.setNull(r);
          } else {
            int len = random.nextInt(text.length + 1);
            for (int k = 0; k < len; k++) {
              text[k] = (byte) ('a' + random.nextInt(26));
            }
            if (converted) {
              sv.setSafe(r, Arrays.copyOf(text, len));
            } else {
              lv.setSafe(r, Arrays.copyOf(text, len));
            }
          }
          if (converted && row % 10 == 7) {
            iv.setNull(r);
          } else {
            iv.setSafe(r, (int) row);
          }
        }
        root.getVector("s").setValueCount(n);
        iv.setValueCount(n);
        root.setRowCount(n);
        w.writeBatch();
      }
      w.end();
    }
    Files.move(tmp, file);
  }
}
