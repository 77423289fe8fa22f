package dev.sluice.examples.cache;

import dev.sluice.core.PipelineContext;
import dev.sluice.operators.CacheMonitor;
import dev.sluice.operators.internal.cache.CacheAdmin;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A child process that runs passes of the crash test's pipeline on command, so that one JVM serves
 * as the restarted rank of one trial and then as the filler killed in the next: each line
 * {@code run ROOT RANK WORLD} on standard input runs one pass through the cache in {@code ROOT},
 * printing {@code progress N} every {@code PROGRESS-EVERY} mapped elements, then closes the cache
 * (as a finished job would) and prints {@code done DIGEST FALLBACKS} (the pass's cache fallbacks).
 *
 * <pre>args: PATH MAP-MICROS PROGRESS-EVERY BLOCK-ROWS</pre>
 */
public final class CacheCommands {
  private CacheCommands() {}

  public static void main(String[] args) throws Exception {
    Path path = Path.of(args[0]);
    int mapMicros = Integer.parseInt(args[1]);
    long every = Long.parseLong(args[2]);
    int blockRows = Integer.parseInt(args[3]);
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    System.out.println("ready");
    System.out.flush();
    String line;
    while ((line = in.readLine()) != null) {
      String[] c = line.split(" ");
      int rank = Integer.parseInt(c[2]);
      int world = Integer.parseInt(c[3]);
      CacheMonitor stats = new CacheMonitor();
      var pipeline = CacheRuns.pipeline(path, Path.of(c[1]), world, rank, mapMicros, blockRows, stats, n -> {
        if (n % every == 0) {
          System.out.println("progress " + n);
          System.out.flush();
        }
      });
      String digest = CacheRuns.digest(pipeline, PipelineContext.defaults().withSeed(17).withRank(rank, world));
      try (DirectoryStream<Path> caches = Files.newDirectoryStream(Path.of(c[1]), "cache-*")) {
        for (Path cache : caches) {
          CacheAdmin.closeInThisProcess(cache); // as a finished job: this process no longer uses the cache
        }
      }
      System.out.println("done " + digest + " " + stats.lastPass().fallbacks());
      System.out.flush();
    }
    System.exit(0);
  }
}
