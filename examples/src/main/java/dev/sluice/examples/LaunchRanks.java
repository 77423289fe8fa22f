package dev.sluice.examples;

import dev.sluice.core.Batch;
import dev.sluice.core.Dataset;
import dev.sluice.core.Datasets;
import dev.sluice.core.Example;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.PipelineIterator;
import dev.sluice.core.Tensor;
import dev.sluice.examples.internal.JvmCommand;
import dev.sluice.io.Formats;
import dev.sluice.io.WriteOptions;
import dev.sluice.io.npy.Npy;
import dev.sluice.io.parquet.Parquet;
import dev.sluice.operators.CacheMonitor;
import dev.sluice.operators.CacheSpec;
import dev.sluice.operators.CacheStats;
import dev.sluice.operators.EqualLength;
import dev.sluice.operators.Pipeline;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Data-parallel sharding across processes, as {@code torchrun --nproc-per-node N} runs a training
 * script: the launcher starts N JVMs with {@code RANK}, {@code WORLD_SIZE}, {@code LOCAL_RANK} and
 * {@code LOCAL_WORLD_SIZE} set; each builds the same pipeline, takes its rank from
 * {@link PipelineContext#fromEnvironment()} and writes the indices it reads to a file of its own.
 * The launcher then reads those files and checks, for every {@link EqualLength} policy and for a
 * random-access source (an {@code .npy} pair: a global shuffle) and a streaming split source (a
 * Parquet file whose row groups are the splits: blocks of them shuffled, then a buffer), that the
 * ranks' indices are disjoint, cover the dataset and have equal lengths as the policy promises:
 *
 * <ul>
 *   <li>{@code PAD}: equal lengths, every index covered; the last ranks repeat a few indices to fill up;
 *   <li>{@code DROP}: equal lengths, disjoint; the {@code rows % world} indices left over are dropped;
 *   <li>{@code UNEVEN}: disjoint and covering; lengths differ by at most one.
 * </ul>
 *
 * <p>With {@code --cache} every rank reads through {@link Pipeline#cache(CacheSpec)}, the node's
 * shared cache ({@code /dev/shm/sluice-<user>/}, or {@code --cache-dir DIR}): the ranks fill
 * disjoint blocks at once and read each other's, so together they decode each block once; the
 * launcher adds up their counts. The cache is transparent, so every check still holds.
 *
 * <pre>
 * java -cp examples/target/sluice.jar dev.sluice.examples.LaunchRanks [--rows 10007] [--world 4] [--dir DIR]
 *     [--cache] [--cache-dir DIR]
 * </pre>
 *
 * <p>The default 10,007 rows (a prime) make every policy differ. The data and the ranks' files
 * ({@code <source>-<policy>-rank<r>.txt}, one index per line in the order read, and
 * {@code rank<r>.log}) stay in {@code DIR} (default: a new temporary directory). Exit status 0 when
 * every check holds, 1 otherwise.
 */
public final class LaunchRanks {
  /** JVM flags the shared cache's index (Chronicle Map) needs; the launcher gives them to its ranks. */
  static final List<String> CACHE_FLAGS = List.of("--add-exports=java.base/sun.nio.ch=ALL-UNNAMED",
      "--add-exports=java.base/jdk.internal.ref=ALL-UNNAMED",
      "--add-exports=jdk.compiler/com.sun.tools.javac.file=ALL-UNNAMED", "--add-opens=java.base/java.lang=ALL-UNNAMED",
      "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED", "--add-opens=java.base/java.nio=ALL-UNNAMED",
      "-Dchronicle.analytics.disable=true");
  /**
   * JVM flags every rank gets, so that its log holds no JDK warnings: native code (Chronicle's
   * jffi) on JDK 22+, and {@code sun.misc.Unsafe} (Parquet's windowed reads free their buffers
   * with it) on JDK 24+, which is also the first that accepts the flag.
   */
  static final List<String> RANK_FLAGS = Runtime.version().feature() >= 24
      ? List.of("--enable-native-access=ALL-UNNAMED", "--sun-misc-unsafe-memory-access=allow")
      : List.of("--enable-native-access=ALL-UNNAMED");
  /** The two kinds of source every rank reads. */
  static final List<String> SOURCES = List.of("random-access", "split");
  private static final String ROW = "%-14s %-7s %-22s %-20s %-14s %-16s %s%n";

  private LaunchRanks() {}

  /**
   * Runs the launcher, or one rank when started with {@code --rank-of DIR} (as the launcher starts
   * its children).
   *
   * @param args {@code [--rows N] [--world W] [--batch B] [--seed S] [--dir DIR] [--cache] [--cache-dir DIR]}
   */
  public static void main(String[] args) throws Exception {
    int code = args.length > 0 && args[0].equals("--rank-of") ? rank(args) : launch(args, System.out);
    if (code != 0) {
      System.exit(code);
    }
  }

  /** The launcher: generates the data, starts the ranks, checks their files; 0 when every check holds. */
  static int launch(String[] args, PrintStream out) throws IOException, InterruptedException {
    ExampleArgs a = ExampleArgs.parse(args, List.of("--rows", "--world", "--batch", "--seed", "--dir", "--cache-dir"),
        List.of("--cache"));
    long rows = a.longValue("--rows", 10_007);
    int world = a.intValue("--world", 4);
    int batch = a.intValue("--batch", 64);
    long seed = a.longValue("--seed", 7);
    Path dir = a.path("--dir");
    // none, default (the node's cache directory), or the cache's directory
    String cache = a.get("--cache-dir") != null ? a.path("--cache-dir").toAbsolutePath().toString()
        : a.has("--cache") ? "default" : "none";
    if (rows < 1 || world < 1 || batch < 1) {
      throw new IllegalArgumentException("--rows, --world and --batch must be > 0");
    }
    dir = dir != null ? Files.createDirectories(dir) : Files.createTempDirectory("sluice-ranks");
    long t0 = System.nanoTime();
    writeData(dir, rows, seed);
    out.printf(Locale.ROOT, "data: %d rows in %s (x.npy + label.npy, and data.parquet in row groups)%n", rows, dir);

    List<Process> ranks = new ArrayList<>();
    try {
      for (int r = 0; r < world; r++) {
        ranks.add(startRank(dir, r, world, batch, seed, cache));
      }
      boolean failed = false;
      for (int r = 0; r < world; r++) {
        Process p = ranks.get(r);
        if (!p.waitFor(5, TimeUnit.MINUTES)) {
          Path log = dir.resolve("rank" + r + ".log");
          out.printf(Locale.ROOT, "rank %d did not finish within 5 minutes; its threads were appended to its log %s:%n%s",
              r, log, threadDump(p, log));
          failed = true;
        } else if (p.exitValue() != 0) {
          out.printf(Locale.ROOT, "rank %d exited with %d; its log %s:%n%s", r, p.exitValue(),
              dir.resolve("rank" + r + ".log"), Files.readString(dir.resolve("rank" + r + ".log")));
          failed = true;
        }
      }
      if (failed) {
        return 1;
      }
    } finally {
      ranks.forEach(Process::destroyForcibly);
    }
    out.printf(Locale.ROOT, "%d ranks finished in %.1f s%n", world, (System.nanoTime() - t0) / 1e9);
    out.printf(Locale.ROOT, ROW, "source", "policy", "lengths", "disjoint", "covers", "equal lengths", "check");
    boolean ok = true;
    for (String source : SOURCES) {
      for (EqualLength policy : EqualLength.values()) {
        ok &= verdict(dir, source, policy, rows, world, out);
      }
    }
    if (!cache.equals("none")) {
      long[] sum = new long[4];
      for (int r = 0; r < world; r++) {
        String[] counts = Files.readString(dir.resolve("rank" + r + "-cache.txt")).trim().split(" ");
        for (int k = 0; k < sum.length; k++) {
          sum[k] += Long.parseLong(counts[k]);
        }
      }
      out.printf(Locale.ROOT, "cache (%s): the ranks wrote %d blocks in all, read %d rows from the cache and %d from "
          + "the source, %d blocks fell back to the source (sluice cache ls lists it, sluice cache rm removes it)%n",
          cache.equals("default") ? CacheSpec.defaultDirectory() : cache, sum[2], sum[0], sum[1], sum[3]);
    }
    out.println(ok ? "verdict: every policy holds for both sources" : "verdict: FAILED (see above)");
    return ok ? 0 : 1;
  }

  /**
   * Appends the threads of the running rank {@code p} to its log ({@code jcmd <pid> Thread.print}
   * from this JVM's JDK, when it has one) and returns the log.
   */
  private static String threadDump(Process p, Path log) throws IOException, InterruptedException {
    Path jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd");
    if (Files.isExecutable(jcmd)) {
      Process dump = new ProcessBuilder(jcmd.toString(), Long.toString(p.pid()), "Thread.print")
          .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
      if (!dump.waitFor(1, TimeUnit.MINUTES)) {
        dump.destroyForcibly();
      }
    }
    return Files.readString(log);
  }

  private static void writeData(Path dir, long rows, long seed) {
    Dataset<Example> data = Datasets.synthetic(rows, 16, seed);
    Path npy = dir.resolve("npy");
    if (!Files.exists(npy.resolve("label.npy"))) {
      Npy.write(data, npy);
    }
    Path parquet = dir.resolve("data.parquet");
    if (!Files.exists(parquet)) {
      // row groups of about 64 KiB: a dozen splits for the default rows; uncompressed, so that no
      // process loads a native codec
      Formats.named("parquet").write(data, parquet,
          WriteOptions.defaults().withRowGroupBytes(64 << 10).withCodec("uncompressed"));
    }
  }

  /**
   * Starts rank {@code r} as torchrun would: this JVM's {@code java}, flags and class path, with
   * the rank's variables in its environment.
   */
  private static Process startRank(Path dir, int r, int world, int batch, long seed, String cache) throws IOException {
    List<String> flags = new ArrayList<>(List.of(
        "-Xmx256m",
        "-XX:TieredStopAtLevel=1",                            // short-lived: start fast rather than optimize hard
        "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",      // libraries' info lines stay out of the rank's log
        "-Dorg.slf4j.simpleLogger.log.net.openhft=error"));   // and Chronicle's advice on recovering its map
    flags.addAll(RANK_FLAGS);
    if (!cache.equals("none")) {
      flags.addAll(CACHE_FLAGS);
    }
    List<String> cmd = JvmCommand.of(LaunchRanks.class, flags,
        List.of("--rank-of", dir.toString(), Integer.toString(batch), Long.toString(seed), cache));
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true)
        .redirectOutput(dir.resolve("rank" + r + ".log").toFile());
    Map<String, String> env = pb.environment();
    env.put("RANK", Integer.toString(r));
    env.put("WORLD_SIZE", Integer.toString(world));
    env.put("LOCAL_RANK", Integer.toString(r));
    env.put("LOCAL_WORLD_SIZE", Integer.toString(world));
    return pb.start();
  }

  /** One rank: for each source and policy, writes the indices it reads, in order, to its file. */
  static int rank(String[] args) throws IOException {
    Path dir = Path.of(args[1]);
    int batch = Integer.parseInt(args[2]);
    long seed = Long.parseLong(args[3]);
    String cache = args[4];
    CacheMonitor monitor = new CacheMonitor();
    PipelineContext ctx = PipelineContext.fromEnvironment().withSeed(seed); // RANK, WORLD_SIZE from the launcher
    for (String source : SOURCES) {
      for (EqualLength policy : EqualLength.values()) {
        Path file = dir.resolve(fileName(source, policy, ctx.rank()));
        long n = 0;
        Dataset<Example> data = source.equals("split") ? Parquet.open(dir.resolve("data.parquet")) : Npy.open(dir.resolve("npy"));
        try (BufferedWriter w = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
          Pipeline<Example> read = Pipeline.from(data);
          if (!cache.equals("none")) {
            CacheSpec spec = CacheSpec.defaults().monitor(monitor);
            read = read.cache(cache.equals("default") ? spec : spec.directory(Path.of(cache)));
          }
          Pipeline<Batch> pipeline = read
              .shuffle()                                      // the same order on every rank (same seed)
              .shard(ctx.worldSize(), ctx.rank(), policy)     // this rank's part of it
              .batch(batch)
              .prefetch(2);
          try (PipelineIterator<Batch> batches = pipeline.iterate(ctx)) {
            for (Batch b : batches) {
              try (b) {
                Tensor label = b.column("label").values(); // label = the row index
                for (int i = 0; i < b.size(); i++) {
                  w.write(Long.toString(label.getLong(i)));
                  w.newLine();
                }
                n += b.size();
              }
            }
          }
        } finally {
          if (data instanceof AutoCloseable c) {
            close(c);
          }
        }
        System.out.printf(Locale.ROOT, "rank %d of %d: %s %s: %d indices%n", ctx.rank(), ctx.worldSize(), source,
            policy.name().toLowerCase(Locale.ROOT), n);
      }
    }
    if (!cache.equals("none")) {
      CacheStats c = monitor.total();
      Files.writeString(dir.resolve("rank" + ctx.rank() + "-cache.txt"),
          c.hits() + " " + c.misses() + " " + c.blocksWritten() + " " + c.fallbacks() + "\n");
      System.out.printf(Locale.ROOT, "rank %d cache: %d hits, %d misses, %d blocks written, %d fallbacks%n", ctx.rank(),
          c.hits(), c.misses(), c.blocksWritten(), c.fallbacks());
    }
    return 0;
  }

  private static void close(AutoCloseable c) {
    try {
      c.close();
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  /** The file rank {@code rank} writes for a source and policy. */
  static String fileName(String source, EqualLength policy, int rank) {
    return source + "-" + policy.name().toLowerCase(Locale.ROOT) + "-rank" + rank + ".txt";
  }

  /** Reads the indices rank {@code rank} wrote for a source and policy. */
  static long[] indices(Path dir, String source, EqualLength policy, int rank) {
    try {
      return Files.readAllLines(dir.resolve(fileName(source, policy, rank))).stream()
          .mapToLong(Long::parseLong).toArray();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Checks one source and policy from the ranks' files and prints a row; true when it holds. */
  private static boolean verdict(Path dir, String source, EqualLength policy, long rows, int world, PrintStream out) {
    BitSet seen = new BitSet();
    long total = 0;
    long repeats = 0;
    boolean inRange = true;
    List<Integer> lengths = new ArrayList<>();
    for (int r = 0; r < world; r++) {
      long[] mine = indices(dir, source, policy, r);
      lengths.add(mine.length);
      total += mine.length;
      for (long i : mine) {
        if (i < 0 || i >= rows) {
          inRange = false;
        } else if (seen.get((int) i)) {
          repeats++;
        } else {
          seen.set((int) i);
        }
      }
    }
    long covered = seen.cardinality();
    boolean disjoint = repeats == 0;
    boolean covers = covered == rows;
    int min = lengths.stream().min(Integer::compare).orElse(0);
    int max = lengths.stream().max(Integer::compare).orElse(0);
    boolean equal = min == max;
    long floor = rows / world;
    long ceil = (rows + world - 1) / world;
    boolean holds = inRange && switch (policy) {
      case PAD -> covers && equal && max == ceil && repeats == total - rows;
      case DROP -> disjoint && equal && max == floor && covered == floor * world;
      case UNEVEN -> disjoint && covers && max - min <= 1;
    };
    String disjointText = disjoint ? "yes" : "no: " + repeats + " padded repeat" + (repeats == 1 ? "" : "s");
    String coversText = covers ? "yes" : "no: " + (rows - covered) + " dropped";
    out.printf(Locale.ROOT, ROW, source, policy.name().toLowerCase(Locale.ROOT),
        lengths.toString().replace(",", ""), disjointText, coversText, equal ? "yes" : "no (" + min + ".." + max + ")",
        holds ? "OK" : "FAILED");
    return holds;
  }
}
