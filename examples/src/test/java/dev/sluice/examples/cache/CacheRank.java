package dev.sluice.examples.cache;

import dev.sluice.core.PipelineContext;
import dev.sluice.operators.CacheMonitor;
import dev.sluice.operators.CacheStats;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Stream;

/**
 * One rank of a multi-process cache test, in a JVM of its own: runs the test pipeline through the
 * shared cache for each epoch and prints {@code epoch E hits H misses M fallbacks F digest D}; waits
 * at a file barrier between epochs (so that every rank's first epoch is over before any second one
 * starts) and prints {@code progress N} every {@code progressEvery} mapped elements.
 *
 * <pre>args: PATH ROOT RANK WORLD EPOCHS BARRIER-DIR MAP-MICROS PROGRESS-EVERY BLOCK-ROWS</pre>
 */
public final class CacheRank {
  /** The logging of the command line: libraries silent, Sluice's own warnings shown. */
  static final java.util.List<String> LOGGING = java.util.List.of("-Dorg.slf4j.simpleLogger.defaultLogLevel=off",
      "-Dorg.slf4j.simpleLogger.log.dev.sluice=warn");

  private CacheRank() {}

  public static void main(String[] args) throws Exception {
    Path path = Path.of(args[0]);
    Path root = Path.of(args[1]);
    int rank = Integer.parseInt(args[2]);
    int world = Integer.parseInt(args[3]);
    int epochs = Integer.parseInt(args[4]);
    Path barrier = Path.of(args[5]);
    int mapMicros = Integer.parseInt(args[6]);
    long every = Long.parseLong(args[7]);
    int blockRows = Integer.parseInt(args[8]);
    CacheMonitor monitor = new CacheMonitor();
    var pipeline = CacheRuns.pipeline(path, root, world, rank, mapMicros, blockRows, monitor, n -> {
      if (n % every == 0) {
        System.out.println("progress " + n);
        System.out.flush();
      }
    });
    for (int e = 0; e < epochs; e++) {
      PipelineContext ctx = PipelineContext.defaults().withSeed(17).withEpoch(e).withRank(rank, world);
      String digest = CacheRuns.digest(pipeline, ctx);
      CacheStats s = monitor.lastPass();
      System.out.println("epoch " + e + " hits " + s.hits() + " misses " + s.misses() + " fallbacks " + s.fallbacks()
          + " digest " + digest);
      System.out.flush();
      if (e + 1 < epochs) {
        await(barrier, e, rank, world);
      }
    }
    System.exit(0);
  }

  private static void await(Path barrier, int epoch, int rank, int world) throws Exception {
    Files.createDirectories(barrier);
    Files.createFile(barrier.resolve("epoch-" + epoch + "-rank-" + rank));
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
    while (count(barrier, epoch) < world) {
      if (System.nanoTime() > deadline) {
        System.out.println("barrier timed out");
        System.exit(3);
      }
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
    }
  }

  private static long count(Path barrier, int epoch) throws Exception {
    try (Stream<Path> s = Files.list(barrier)) {
      return s.filter(p -> p.getFileName().toString().startsWith("epoch-" + epoch + "-")).count();
    }
  }
}
