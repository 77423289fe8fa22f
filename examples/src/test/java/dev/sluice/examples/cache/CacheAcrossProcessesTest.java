package dev.sluice.examples.cache;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.core.PipelineContext;
import dev.sluice.core.testing.ChildJvm;
import dev.sluice.core.testing.NoLeaks;
import dev.sluice.examples.cli.CliRunner;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Three ranks in three JVMs share one cache over a generated Parquet file: in the first epoch they
 * fill their own blocks (the block shuffle and the shard give each rank different ones),
 * and in the second, reshuffled, each reads the blocks the others filled: no rank misses, and every
 * rank's elements equal those of a run without the cache, bit for bit.
 */
@ExtendWith(NoLeaks.class)
class CacheAcrossProcessesTest {
  private static final int WORLD = 3;

  @TempDir Path dir;

  @Test
  @Timeout(value = 240, unit = TimeUnit.SECONDS)
  void threeRanksFillDisjointBlocksThenReadEachOthersWithoutAMiss() throws Exception {
    Path parquet = dir.resolve("train.parquet");
    CliRunner.run("generate", parquet.toString(), "--rows", "12000", "--dim", "16", "--format", "parquet",
        "--seed", "5", "--row-group-size", "60000");
    Path root = dir.resolve("shm");
    List<String[]> expected = new ArrayList<>();
    for (int rank = 0; rank < WORLD; rank++) {
      String[] digests = new String[2];
      for (int e = 0; e < 2; e++) {
        digests[e] = CacheRuns.digest(CacheRuns.pipeline(parquet, null, WORLD, rank, 0, 1000, null, n -> { }),
            PipelineContext.defaults().withSeed(17).withEpoch(e).withRank(rank, WORLD));
      }
      expected.add(digests);
    }
    List<ChildJvm> ranks = new ArrayList<>();
    try {
      for (int rank = 0; rank < WORLD; rank++) {
        ranks.add(ChildJvm.start(CacheRank.class, CacheRank.LOGGING, parquet.toString(), root.toString(), String.valueOf(rank),
            String.valueOf(WORLD), "2", dir.resolve("barrier").toString(), "0", "1000", "1000"));
      }
      for (int rank = 0; rank < WORLD; rank++) {
        ChildJvm r = ranks.get(rank);
        String first = r.nextLine(180);
        String second = r.nextLine(180);
        assertThat(r.waitFor(60)).as("rank %d exits: %s", rank, r.stderr()).isZero();
        assertThat(first).as("rank %d, stderr: %s", rank, r.stderr()).startsWith("epoch 0 ")
            .endsWith(" digest " + expected.get(rank)[0]);
        assertThat(second).as("rank %d", rank).startsWith("epoch 1 ").contains(" misses 0 fallbacks 0 ")
            .endsWith(" digest " + expected.get(rank)[1]);
        assertThat(r.stderr()).as("rank %d writes nothing to stderr", rank).isEmpty();
      }
    } finally {
      ranks.forEach(ChildJvm::close);
    }
  }
}
