package dev.sluice.benchmarks;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import org.openjdk.jmh.infra.Blackhole;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.Options;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.VerboseMode;

/**
 * Runs {@link NpyGatherBenchmark} side by side (alternating rounds) and prints the ratio Sluice / plain of
 * every round and their median, for each order:
 *
 * <ol>
 *   <li>JMH: 5 rounds, each a JMH run (own fork) of Sluice's gather then one of the plain loop;
 *   <li>interleaved, in this JVM: 5 rounds, each alternating one-second slices of the two, timed by
 *       wall clock and by the thread's CPU time. On a shared machine the JMH rounds are seconds
 *       apart and other jobs' load moves between them; the interleaved slices see the same load,
 *       and CPU time ignores the time the thread was descheduled.
 * </ol>
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
        jmh(order, rounds, file);
      }
      for (String order : new String[] {"inOrder", "shuffled"}) {
        interleaved(order, rounds, file);
      }
    } finally {
      Files.deleteIfExists(file);
      Files.deleteIfExists(dir);
    }
  }

  private static void jmh(String order, int rounds, Path file) throws Exception {
    double[] ratios = new double[rounds];
    List<String> lines = new ArrayList<>();
    for (int r = 0; r < rounds; r++) {
      double sluice = run("sluiceGather", order, file);
      double plain = run("plainLoop", order, file);
      ratios[r] = sluice / plain;
      lines.add(String.format(Locale.ROOT, "  round %d: sluice %.0f batches/s (%.2f us), plain %.0f batches/s (%.2f us),"
          + " ratio %.3f", r + 1, sluice, 1e6 / sluice, plain, 1e6 / plain, ratios[r]));
    }
    System.out.println("JMH, order " + order + ":");
    lines.forEach(System.out::println);
    System.out.printf(Locale.ROOT, "  median ratio (sluice / plain): %.3f%n", median(ratios));
    if (order.equals("inOrder")) {
      double batchOnly = run("batchOnly", order, file);
      System.out.printf(Locale.ROOT, "  batch machinery alone (create, commit, build, close; no copy): %.2f us per batch%n",
          1e6 / batchOnly);
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

  private static void interleaved(String order, int rounds, Path file) throws Exception {
    System.setProperty(NpyGatherBenchmark.FILE_PROPERTY, file.toString());
    NpyGatherBenchmark b = new NpyGatherBenchmark();
    b.order = order;
    b.setUp();
    try {
      Blackhole bh = new Blackhole(
          "Today's password is swordfish. I understand instantiating Blackholes directly is dangerous.");
      ThreadMXBean cpu = ManagementFactory.getThreadMXBean();
      slice(b, true, bh, cpu, 2_000_000_000L); // warm up both
      slice(b, false, bh, cpu, 2_000_000_000L);
      double[] wall = new double[rounds];
      double[] cpuRatio = new double[rounds];
      System.out.println("interleaved, order " + order + ":");
      for (int r = 0; r < rounds; r++) {
        double[] s = {0, 0, 0};
        double[] p = {0, 0, 0};
        for (int k = 0; k < 3; k++) { // three one-second slices each, alternating
          add(s, slice(b, true, bh, cpu, 1_000_000_000L));
          add(p, slice(b, false, bh, cpu, 1_000_000_000L));
        }
        wall[r] = (s[0] / s[1]) / (p[0] / p[1]);
        cpuRatio[r] = (s[0] / s[2]) / (p[0] / p[2]);
        System.out.printf(Locale.ROOT, "  round %d: sluice %.2f us/batch (%.2f us CPU), plain %.2f us/batch (%.2f us CPU),"
            + " ratio %.3f wall, %.3f CPU%n", r + 1, s[1] / s[0] / 1e3, s[2] / s[0] / 1e3, p[1] / p[0] / 1e3,
            p[2] / p[0] / 1e3, wall[r], cpuRatio[r]);
      }
      System.out.printf(Locale.ROOT, "  median ratio (sluice / plain): %.3f wall, %.3f CPU%n", median(wall), median(cpuRatio));
    } finally {
      b.tearDown();
    }
  }

  private static void add(double[] into, double[] v) {
    for (int i = 0; i < into.length; i++) {
      into[i] += v[i];
    }
  }

  /** {batches, wall ns, CPU ns} of running one contender for about {@code nanos}. */
  private static double[] slice(NpyGatherBenchmark b, boolean sluice, Blackhole bh, ThreadMXBean cpu, long nanos) {
    long n = 0;
    long c0 = cpu.getCurrentThreadCpuTime();
    long t0 = System.nanoTime();
    long t;
    do {
      for (int i = 0; i < 256; i++) {
        if (sluice) {
          b.sluiceGather(bh);
        } else {
          b.plainLoop(bh);
        }
      }
      n += 256;
      t = System.nanoTime();
    } while (t - t0 < nanos);
    return new double[] {n, t - t0, cpu.getCurrentThreadCpuTime() - c0};
  }

  private static double median(double[] v) {
    double[] s = v.clone();
    Arrays.sort(s);
    return s[s.length / 2];
  }
}
