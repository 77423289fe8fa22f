package dev.sluice.benchmarks;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.Options;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.VerboseMode;

/**
 * Runs {@link NpyGatherBenchmark} side by side (BUILDING.md): for each order, 5 rounds that each run
 * Sluice's gather and then the plain loop, and prints the ratio of every round and their median.
 * The 512 MB data file is generated once in a temp directory and deleted at the end.
 *
 * <pre>java -cp benchmarks/target/benchmarks.jar dev.sluice.benchmarks.NpyGatherRatio [rounds]</pre>
 */
public final class NpyGatherRatio {
  private NpyGatherRatio() {}

  public static void main(String[] args) throws Exception {
    int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 5;
    Path dir = Files.createTempDirectory("sluice-npy-bench");
    Path file = NpyGatherBenchmark.generate(dir.resolve("rows.npy"));
    try {
      for (String order : new String[] {"inOrder", "shuffled"}) {
        double[] ratios = new double[rounds];
        List<String> lines = new ArrayList<>();
        for (int r = 0; r < rounds; r++) {
          double sluice = run("sluiceGather", order, file);
          double plain = run("plainLoop", order, file);
          ratios[r] = sluice / plain;
          lines.add(String.format(Locale.ROOT, "  round %d: sluice %.0f batches/s (%.2f us), plain %.0f batches/s (%.2f us),"
              + " ratio %.3f", r + 1, sluice, 1e6 / sluice, plain, 1e6 / plain, ratios[r]));
        }
        double[] sorted = ratios.clone();
        Arrays.sort(sorted);
        System.out.println("order " + order + ":");
        lines.forEach(System.out::println);
        System.out.printf(Locale.ROOT, "  median ratio (sluice / plain): %.3f%n", sorted[rounds / 2]);
        if (order.equals("inOrder")) {
          double batchOnly = run("batchOnly", order, file);
          System.out.printf(Locale.ROOT, "  batch machinery alone (create, commit, build, close; no copy): %.2f us per batch%n",
              1e6 / batchOnly);
        }
      }
    } finally {
      Files.deleteIfExists(file);
      Files.deleteIfExists(dir);
    }
  }

  private static double run(String method, String order, Path file) throws Exception {
    Options opt = new OptionsBuilder()
        .include(NpyGatherBenchmark.class.getName() + "." + method + "$")
        .param("order", order)
        .jvmArgsAppend("-D" + NpyGatherBenchmark.FILE_PROPERTY + "=" + file)
        .verbosity(VerboseMode.SILENT)
        .build();
    RunResult result = new Runner(opt).runSingle();
    return result.getPrimaryResult().getScore();
  }
}
