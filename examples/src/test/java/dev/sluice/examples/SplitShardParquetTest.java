package dev.sluice.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.core.Datasets;
import dev.sluice.core.Example;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.testing.NoLeaks;
import dev.sluice.io.WriteOptions;
import dev.sluice.io.parquet.Parquet;
import dev.sluice.io.parquet.ParquetDataset;
import dev.sluice.io.parquet.ParquetFormat;
import dev.sluice.operators.Pipeline;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Split sharding and split-order shuffle on a real Parquet file: its row groups are the splits. Each
 * rank reads only the row groups and row ranges it needs, with the index path's PAD/DROP/UNEVEN
 * counts, also with more ranks than row groups.
 */
@ExtendWith(NoLeaks.class)
class SplitShardParquetTest {
  @TempDir Path tmp;

  @Test
  void ranksReadOnlyTheirRowGroupsWithTheIndexPathsCounts() {
    Path file = tmp.resolve("d.parquet");
    long n = 1_000;
    new ParquetFormat().write(Datasets.synthetic(n, 4, 3), file, WriteOptions.defaults().withRowGroupBytes(6_000));
    ParquetDataset parquet = Parquet.open(file);
    int groups = parquet.splits().size();
    assertTrue(groups >= 3, "several row groups: " + groups);
    PipelineContext ctx = PipelineContext.defaults().withSeed(9);
    // the last world size has more ranks than row groups
    SplitShardChecks.assertRanksPartition(parquet, n, new int[] {1, 2, 3, groups + 3}, ctx,
        e -> e.tensor("label").getLong(0));
    List<Long> e0 = Pipeline.from(parquet).shuffle().flux(ctx).map(Example::index).collectList().block();
    List<Long> e1 = Pipeline.from(parquet).shuffle().flux(ctx.nextEpoch()).map(Example::index).collectList().block();
    assertNotEquals(e0, e1, "the split order and buffer reshuffle every epoch");
    assertEquals(LongStream.range(0, n).boxed().toList(), e1.stream().sorted().toList());
  }
}
