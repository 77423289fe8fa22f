package dev.sluice.examples;

import dev.sluice.core.Dataset;
import dev.sluice.core.Datasets;
import dev.sluice.core.Example;
import dev.sluice.io.Checksums;
import dev.sluice.io.Formats;
import dev.sluice.io.WriteOptions;
import dev.sluice.io.npy.Npy;
import dev.sluice.io.shards.ShardInfo;
import dev.sluice.io.shards.ShardSet;
import dev.sluice.io.shards.Shards;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A preprocessing job: a large {@code .npy} dataset (or npy stack) is cut into Sluice shards,
 * several written at once, each with its row count, byte count and checksum in
 * {@code metadata.json}; then the SHA-256 of the canonical bytes of the input and of the shard set
 * are compared, which proves no row was lost, repeated or changed. It prints the shards and the
 * throughput of each step.
 *
 * <pre>
 * java -cp examples/target/sluice.jar dev.sluice.examples.ShardingJob [--in NPY] [--out DIR] [--rows N]
 *     [--dim D] [--shards S] [--workers W]
 * </pre>
 *
 * <p>Without {@code --in} it first writes {@code --rows} (default 200,000) seeded rows of
 * {@code x} float32[{@code --dim}] (default 64) and {@code label} int64 as {@code .npy} under a new
 * temporary directory; {@code --out} defaults to {@code shards} beside the input. Defaults: 8
 * shards, as many workers as cores. Exit status 1 when the checksums differ.
 */
public final class ShardingJob {
  private ShardingJob() {}

  /**
   * Runs the job.
   *
   * @param args {@code [--in NPY] [--out DIR] [--rows N] [--dim D] [--shards S] [--workers W]}
   */
  public static void main(String[] args) throws IOException {
    ExampleArgs a = ExampleArgs.parse(args, List.of("--in", "--out", "--rows", "--dim", "--shards", "--workers"),
        List.of());
    Path in = a.path("--in");
    Path out = a.path("--out");
    long rows = a.longValue("--rows", 200_000);
    int dim = a.intValue("--dim", 64);
    int shards = a.intValue("--shards", 8);
    int workers = a.intValue("--workers", Runtime.getRuntime().availableProcessors());
    if (in == null) {
      in = Files.createTempDirectory("sluice-sharding").resolve("npy");
      long t0 = System.nanoTime();
      Npy.write(Datasets.synthetic(rows, dim, 1), in);
      System.out.printf(Locale.ROOT, "wrote the input: %d rows of x float32[%d] and label int64 to %s in %.2f s%n", rows,
          dim, in, seconds(t0));
    }
    if (out == null) {
      out = in.toAbsolutePath().getParent().resolve("shards");
    }
    if (!run(in, out, shards, workers)) {
      System.exit(1);
    }
  }

  /**
   * Writes {@code in} as {@code shards} shards into {@code out} with {@code workers} writers, then
   * compares the checksums; true when they are equal.
   */
  static boolean run(Path in, Path out, int shards, int workers) {
    Dataset<Example> input = Formats.detect(in).open(in); // an .npy pair or file, or an npy stack
    long bytes;
    long rows;
    try {
      AtomicLong written = new AtomicLong();
      long t0 = System.nanoTime();
      List<ShardInfo> infos = Shards.write(input, out, WriteOptions.defaults().withNumShards(shards)
          .withWorkers(workers).withProgress(written::addAndGet));
      double s = seconds(t0);
      rows = infos.stream().mapToLong(ShardInfo::rows).sum();
      bytes = infos.stream().mapToLong(ShardInfo::bytes).sum();
      System.out.printf(Locale.ROOT, "wrote %d shards (%d workers) to %s in %.2f s: %.0f rows/s, %.1f MB/s%n",
          infos.size(), workers, out, s, rows / s, bytes / s / 1e6);
      for (ShardInfo info : infos) {
        System.out.printf(Locale.ROOT, "  %s: %d rows, %d bytes, checksum %s%n", info.file(), info.rows(), info.bytes(),
            info.checksum());
      }
    } finally {
      close(input);
    }

    long t1 = System.nanoTime();
    String expected = checksum(Formats.detect(in).open(in));
    String found;
    try (ShardSet set = Shards.open(out)) {
      found = Checksums.sha256(set);
    }
    double s = seconds(t1);
    System.out.printf(Locale.ROOT, "sha256 of the input:  %s%nsha256 of the shards: %s%n", expected, found);
    System.out.printf(Locale.ROOT, "checksummed both in %.2f s (%.1f MB/s)%n", s, 2 * bytes / s / 1e6);
    boolean same = expected.equals(found);
    System.out.println(same ? "nothing lost: " + rows + " rows, identical canonical bytes"
        : "MISMATCH: the shards do not hold the input's rows");
    return same;
  }

  private static String checksum(Dataset<Example> data) {
    try {
      return Checksums.sha256(data);
    } finally {
      close(data);
    }
  }

  private static void close(Dataset<?> data) {
    if (data instanceof AutoCloseable c) {
      try {
        c.close();
      } catch (Exception e) {
        throw new IllegalStateException("closing " + data, e);
      }
    }
  }

  private static double seconds(long startNanos) {
    return (System.nanoTime() - startNanos) / 1e9;
  }
}
