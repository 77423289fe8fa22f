package dev.sluice.benchmarks.parquet;

import dev.sluice.io.parquet.ParquetDataset;
import java.nio.file.Path;

/**
 * A plain main for scripts: {@code QuickRead <layout list|flat> <rows> <dim> <rounds> [sluice|pages|record]...}
 * prints one line per contender and round: {@code <contender> <round> <rows/s wall> <rows/s of process CPU>}
 * (the second figure divides by the CPU time of the whole JVM, so it is robust against other load).
 */
public final class QuickRead {
  private QuickRead() {}

  /** CPU time of the whole JVM, ns. */
  static long cpu() {
    return ((com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory
        .getOperatingSystemMXBean()).getProcessCpuTime();
  }

  public static void main(String[] args) throws Exception {
    BenchFiles.Layout layout = BenchFiles.Layout.valueOf(args[0].toUpperCase());
    long rows = Long.parseLong(args[1]);
    int dim = Integer.parseInt(args[2]);
    int rounds = Integer.parseInt(args[3]);
    String[] who = args.length > 4 ? java.util.Arrays.copyOfRange(args, 4, args.length)
        : new String[] {"sluice", "pages", "record"};
    Path f = args.length > 0 && System.getProperty("file") != null ? Path.of(System.getProperty("file"))
        : BenchFiles.file(layout, rows, dim, 128L << 20);
    ParquetDataset ds = Readers.open(f);
    long check = 0;
    for (int r = -1; r < rounds; r++) { // round -1 warms up
      for (String w : who) {
        long c0 = cpu();
        long t0 = System.nanoTime();
        check += switch (w) {
          case "sluice" -> Readers.sluiceColumnar(ds, 4096);
          case "pages" -> Readers.pagesOnly(f);
          case "record" -> Readers.recordApi(f, dim);
          default -> throw new IllegalArgumentException("unknown contender " + w);
        };
        double s = (System.nanoTime() - t0) / 1e9;
        double c = (cpu() - c0) / 1e9;
        if (r >= 0) {
          System.out.printf("%s %d %.0f %.0f%n", w, r, ds.rowCount() / s, ds.rowCount() / c);
        }
      }
    }
    System.err.println("checksum " + check);
  }
}
