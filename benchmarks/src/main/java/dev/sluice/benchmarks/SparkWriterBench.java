package dev.sluice.benchmarks;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.stream.Stream;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/**
 * Writing the same cached DataFrame of {@code rows} × {@code dim} float32 values (one fixed-length
 * array column {@code x}) with a local Spark ({@code local[2]}) as Sluice shards
 * ({@code format("sluice")}, {@code shape.x}) and with Spark's own Parquet writer (its defaults:
 * snappy), in alternating rounds after one warm-up round of each; and, in the same rounds, the
 * {@code sluice convert --to shards --workers 2} command of the jar given, converting the Parquet
 * that Spark wrote before the rounds (each run a new JVM, timed as a process by
 * {@code /usr/bin/time}). Per round: the wall time and the process CPU time of each, per million
 * rows; at the end the medians and the median of the per-round ratios. Each output directory is
 * deleted before its write, outside the timing.
 *
 * <p>Arguments: {@code DIR [rows] [dim] [rounds] [sluice.jar]} (1,000,000, 64, 5,
 * {@code examples/target/sluice.jar}); {@code benchmarks/spark-writer.sh} builds and runs it.
 */
public final class SparkWriterBench {
  private SparkWriterBench() {}

  /**
   * Runs the benchmark.
   *
   * @param args {@code DIR [rows] [dim] [rounds] [sluice.jar]}
   */
  public static void main(String[] args) throws Exception {
    Path dir = Path.of(args[0]);
    long rows = args.length > 1 ? Long.parseLong(args[1]) : 1_000_000;
    int dim = args.length > 2 ? Integer.parseInt(args[2]) : 64;
    int rounds = args.length > 3 ? Integer.parseInt(args[3]) : 5;
    Path jar = Path.of(args.length > 4 ? args[4] : "examples/target/sluice.jar");
    Files.createDirectories(dir);
    Path sluiceOut = dir.resolve("spark-sluice");
    Path parquetOut = dir.resolve("spark-parquet");
    Path convertIn = dir.resolve("input-parquet");
    Path convertOut = dir.resolve("convert-shards");

    SparkSession spark = SparkSession.builder().master("local[2]").appName("SparkWriterBench")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.host", "127.0.0.1")
        .getOrCreate();
    try {
      Dataset<Row> df = spark.range(0, rows, 1, 2)
          .selectExpr("transform(sequence(0, " + (dim - 1) + "),"
              + " j -> CAST(sin(CAST(id * " + dim + " + j AS DOUBLE)) AS FLOAT)) AS x")
          .cache();
      System.out.printf(Locale.ROOT, "%d rows x %d float32 cached in 2 partitions%n", df.count(), dim);
      delete(convertIn);
      df.write().parquet(convertIn.toUri().toString());

      Runnable sluice = () -> {
        delete(sluiceOut);
        df.write().format("sluice").mode("overwrite").option("shape.x", Integer.toString(dim))
            .save(sluiceOut.toUri().toString());
      };
      Runnable parquet = () -> {
        delete(parquetOut);
        df.write().mode("overwrite").parquet(parquetOut.toUri().toString());
      };
      List<String> convert = List.of("/usr/bin/time", "-f", "%e %U %S", "-o", dir.resolve("time.txt").toString(),
          ProcessHandle.current().info().command().orElse("java"), "-jar", jar.toString(),
          "convert", convertIn.toString(), convertOut.toString(), "--to", "shards", "--num-shards", "16",
          "--workers", "2");

      double perMillion = rows / 1e6;
      System.out.printf(Locale.ROOT, "warm-up: spark sluice %s; spark parquet %s; sluice convert %s%n",
          format(inProcess(sluice, perMillion)), format(inProcess(parquet, perMillion)),
          format(process(convert, dir, convertOut, perMillion)));
      List<double[]> shards = new ArrayList<>();
      List<double[]> parquets = new ArrayList<>();
      List<double[]> converts = new ArrayList<>();
      for (int r = 0; r < rounds; r++) {
        // alternate which writer goes first
        double[] s;
        double[] p;
        if (r % 2 == 0) {
          s = inProcess(sluice, perMillion);
          p = inProcess(parquet, perMillion);
        } else {
          p = inProcess(parquet, perMillion);
          s = inProcess(sluice, perMillion);
        }
        double[] c = process(convert, dir, convertOut, perMillion);
        shards.add(s);
        parquets.add(p);
        converts.add(c);
        System.out.printf(Locale.ROOT, "round %d (load %.2f): spark sluice %s; spark parquet %s; sluice convert %s;"
                + " parquet/sluice wall %.2f%n", r, ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage(),
            format(s), format(p), format(c), p[0] / s[0]);
      }
      System.out.printf(Locale.ROOT, "median per million rows: spark sluice %.3f s wall, %.3f s CPU;"
              + " spark parquet %.3f s wall, %.3f s CPU; sluice convert %.3f s wall, %.3f s CPU%n",
          median(shards, 0), median(shards, 1), median(parquets, 0), median(parquets, 1),
          median(converts, 0), median(converts, 1));
      double[] ratios = new double[rounds];
      double[] cpuRatios = new double[rounds];
      double[] convertRatios = new double[rounds];
      for (int r = 0; r < rounds; r++) {
        ratios[r] = parquets.get(r)[0] / shards.get(r)[0];
        cpuRatios[r] = parquets.get(r)[1] / shards.get(r)[1];
        convertRatios[r] = converts.get(r)[0] / shards.get(r)[0];
      }
      System.out.printf(Locale.ROOT, "median of the round ratios: shards are %.2fx Spark Parquet's speed (wall),"
              + " %.2fx (CPU); %.2fx sluice convert's (wall)%n", median(ratios), median(cpuRatios),
          median(convertRatios));
      System.out.printf(Locale.ROOT, "bytes written: spark sluice %d, spark parquet %d, sluice convert %d%n",
          bytes(sluiceOut), bytes(parquetOut), bytes(convertOut));
    } finally {
      spark.stop();
    }
  }

  /** Runs {@code write} in this process: {wall s, process CPU s} per million rows. */
  private static double[] inProcess(Runnable write, double perMillion) {
    com.sun.management.OperatingSystemMXBean os =
        (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
    long cpu0 = os.getProcessCpuTime();
    long t0 = System.nanoTime();
    write.run();
    long t1 = System.nanoTime();
    long cpu1 = os.getProcessCpuTime();
    return new double[] {(t1 - t0) / 1e9 / perMillion, (cpu1 - cpu0) / 1e9 / perMillion};
  }

  /** Runs {@code command} as a process timed by /usr/bin/time: {wall s, user + system CPU s} per million rows. */
  private static double[] process(List<String> command, Path dir, Path out, double perMillion) throws Exception {
    delete(out);
    Process p = new ProcessBuilder(command).redirectErrorStream(true)
        .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
    int code = p.waitFor();
    if (code != 0) {
      throw new IllegalStateException("exit " + code + ": " + String.join(" ", command));
    }
    String[] t = Files.readString(dir.resolve("time.txt")).trim().split("\\s+");
    return new double[] {Double.parseDouble(t[0]) / perMillion,
        (Double.parseDouble(t[1]) + Double.parseDouble(t[2])) / perMillion};
  }

  private static String format(double[] wallCpu) {
    return String.format(Locale.ROOT, "%.3f s wall, %.3f s CPU", wallCpu[0], wallCpu[1]);
  }

  private static double median(List<double[]> runs, int k) {
    return median(runs.stream().mapToDouble(r -> r[k]).toArray());
  }

  private static double median(double[] values) {
    double[] v = values.clone();
    Arrays.sort(v);
    int n = v.length;
    return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  }

  private static long bytes(Path dir) throws IOException {
    try (Stream<Path> s = Files.walk(dir)) {
      return s.filter(Files::isRegularFile).mapToLong(p -> p.toFile().length()).sum();
    }
  }

  private static void delete(Path dir) {
    if (!Files.exists(dir)) {
      return;
    }
    try (Stream<Path> s = Files.walk(dir)) {
      for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
        Files.delete(p);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
