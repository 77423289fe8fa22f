package dev.sluice.examples.cache;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.core.PipelineContext;
import dev.sluice.core.testing.ChildJvm;
import dev.sluice.core.testing.NoLeaks;
import dev.sluice.examples.cli.CliRunner;
import dev.sluice.operators.CacheMonitor;
import dev.sluice.operators.CacheStats;
import dev.sluice.operators.internal.cache.CacheAdmin;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * A filling process killed with SIGKILL at a random moment (ten trials, each with a fresh cache):
 * the other rank, filling at the same time in this JVM, finishes with the right elements; a
 * restarted rank (a new process, which then fills the next trial's cache and is killed there)
 * completes with the right elements; and afterwards every block is published, no claim is left,
 * and a process that opens every segment afresh (checking its checksums) reads exactly the data of
 * a run without the cache. A kill that lands while the victim holds a claim the survivors
 * cannot take over in time, or a lock of the index (a rare moment), makes them serve those blocks
 * from upstream, counted as fallbacks, and leaves them unpublished: the trial then checks that a
 * pass once no process uses the cache fills every block. Every wait is bounded, so a trial that
 * hangs fails.
 */
@ExtendWith(NoLeaks.class)
class CacheCrashTest {
  private static final int TRIALS = 10;
  private static final int ROWS = 3000;
  private static final int BLOCK_ROWS = 100;
  private static final int MAP_MICROS = 150;
  private static final int PROGRESS_EVERY = 10;

  @TempDir Path dir;

  @Test
  @Timeout(value = 600, unit = TimeUnit.SECONDS)
  void aFillerKilledAtRandomMomentsLeavesNothingHalfWrittenAndTheOthersFinish() throws Exception {
    Path data = dir.resolve("data");
    CliRunner.run("generate", data.toString(), "--rows", String.valueOf(ROWS), "--dim", "8", "--seed", "3");
    String[] expected = new String[2];
    for (int rank = 0; rank < 2; rank++) {
      expected[rank] = CacheRuns.digest(CacheRuns.pipeline(data, null, 2, rank, 0, BLOCK_ROWS, null, n -> { }),
          context(rank, 2));
    }
    String whole = CacheRuns.digest(CacheRuns.pipeline(data, null, 1, 0, 0, BLOCK_ROWS, null, n -> { }), context(0, 1));
    Random random = new Random(20261124);
    ExecutorService survivor = Executors.newSingleThreadExecutor();
    ChildJvm filler = commands();
    try {
      for (int trial = 0; trial < TRIALS; trial++) {
        Path root = dir.resolve("shm-" + trial);
        long killAfter = (1 + random.nextInt(120)) * (long) PROGRESS_EVERY;
        ChildJvm victim = filler;
        victim.send("run " + root + " 0 2");
        assertThat(victim.nextLine(120)).as("trial %d: the victim fills, %s", trial, victim.stderr())
            .startsWith("progress ");
        CacheMonitor otherStats = new CacheMonitor();
        Future<String> other = survivor.submit(() -> CacheRuns.digest(
            CacheRuns.pipeline(data, root, 2, 1, MAP_MICROS, BLOCK_ROWS, otherStats, n -> { }), context(1, 2)));
        String line;
        while ((line = victim.nextLine(120)) != null && line.startsWith("progress ")
            && Long.parseLong(line.substring(9)) < killAfter) {
          // the victim is filling: let it run until the trial's random moment
        }
        victim.kill();
        assertThat(other.get(180, TimeUnit.SECONDS)).as("trial %d: the other rank's elements", trial)
            .isEqualTo(expected[1]);
        // the restarted rank: a new process, which then serves as the next trial's victim
        filler = commands();
        filler.send("run " + root + " 0 2");
        String result = filler.nextLine(180);
        while (result != null && result.startsWith("progress ")) {
          result = filler.nextLine(180);
        }
        assertThat(result).as("trial %d: the restarted rank completes with its elements: %s", trial, filler.stderr())
            .startsWith("done " + expected[0] + " ");
        long fallbacks = otherStats.lastPass().fallbacks() + Long.parseLong(result.substring(result.lastIndexOf(' ') + 1));
        Path cache = onlyCache(root);
        CacheAdmin.closeInThisProcess(cache);
        CacheAdmin.Index index = CacheAdmin.index(cache, TimeUnit.SECONDS.toNanos(30));
        if (index.published() != index.blocks()) {
          // A block the survivors could not get in time (the killed process held its claim or a lock
          // of the index) was served from upstream, counted as a fallback, and left unpublished;
          // the next process that reads it, once no process uses the cache, fills it.
          assertThat(fallbacks).as("trial %d: blocks unpublished without a fallback", trial).isPositive();
          CacheMonitor refill = new CacheMonitor();
          assertThat(CacheRuns.digest(CacheRuns.pipeline(data, root, 1, 0, MAP_MICROS, BLOCK_ROWS, refill, n -> { }),
              context(0, 1))).as("trial %d: a pass after the fallbacks", trial).isEqualTo(whole);
          assertThat(refill.lastPass().hits() + refill.lastPass().misses())
              .as("trial %d: the pass after the fallbacks reads every row through the cache", trial).isEqualTo(ROWS);
          CacheAdmin.closeInThisProcess(cache);
          index = CacheAdmin.index(cache, TimeUnit.SECONDS.toNanos(30));
        }
        assertThat(index.published()).as("trial %d: every block published", trial).isEqualTo(index.blocks());
        assertThat(index.claimed()).as("trial %d: no claim left", trial).isZero();
        CacheMonitor m = new CacheMonitor();
        assertThat(CacheRuns.digest(CacheRuns.pipeline(data, root, 1, 0, MAP_MICROS, BLOCK_ROWS, m, n -> { }),
            context(0, 1))).as("trial %d: every segment, checked afresh", trial).isEqualTo(whole);
        assertThat(m.lastPass()).as("trial %d", trial).isEqualTo(new CacheStats(ROWS, 0, 0, 0, 0, 0));
        CacheAdmin.closeInThisProcess(cache);
        assertThat(CacheAdmin.index(cache, TimeUnit.SECONDS.toNanos(30)).orphans())
            .as("trial %d: what the killed process left was removed", trial).isZero();
      }
    } finally {
      filler.close();
      survivor.shutdownNow();
    }
  }

  /** A child JVM that runs passes on command; ready once it printed so. */
  private ChildJvm commands() throws Exception {
    ChildJvm c = ChildJvm.start(CacheCommands.class, CacheRank.LOGGING, dir.resolve("data").toString(),
        String.valueOf(MAP_MICROS), String.valueOf(PROGRESS_EVERY), String.valueOf(BLOCK_ROWS));
    assertThat(c.nextLine(120)).as("a child JVM starts: %s", c.stderr()).isEqualTo("ready");
    return c;
  }

  private static PipelineContext context(int rank, int world) {
    return PipelineContext.defaults().withSeed(17).withRank(rank, world);
  }

  private static Path onlyCache(Path root) throws Exception {
    try (DirectoryStream<Path> d = Files.newDirectoryStream(root, "cache-*")) {
      return d.iterator().next();
    }
  }
}
