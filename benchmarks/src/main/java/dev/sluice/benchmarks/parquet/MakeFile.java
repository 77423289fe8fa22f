package dev.sluice.benchmarks.parquet;

import java.nio.file.Path;

/**
 * A plain main for scripts: {@code MakeFile <flat|list> <rows> <dim> <row group bytes>} writes the
 * Parquet pipeline benchmark's file of that layout under {@code $TMPDIR/sluice-bench} unless it is
 * there, and prints its path.
 */
public final class MakeFile {
  private MakeFile() {}

  public static void main(String[] args) throws Exception {
    BenchFiles.Layout layout = BenchFiles.Layout.valueOf(args[0].toUpperCase());
    Path f = BenchFiles.file(layout, Long.parseLong(args[1]), Integer.parseInt(args[2]), Long.parseLong(args[3]));
    System.out.println(f);
  }
}
