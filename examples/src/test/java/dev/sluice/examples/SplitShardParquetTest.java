package dev.sluice.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.core.Datasets;
import dev.sluice.core.Example;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.Split;
import dev.sluice.core.SplitDataset;
import dev.sluice.core.testing.NoLeaks;
import dev.sluice.io.WriteOptions;
import dev.sluice.io.parquet.Parquet;
import dev.sluice.io.parquet.ParquetDataset;
import dev.sluice.io.parquet.ParquetFormat;
import dev.sluice.operators.EqualLength;
import dev.sluice.operators.Pipeline;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import reactor.core.publisher.Flux;

/**
 * Split sharding and split-order shuffle on a real Parquet file: its row groups are the splits. Each
 * rank reads only the row groups and row ranges it needs, with the index path's PAD/DROP/UNEVEN
 * counts, also with more ranks than row groups.
 */
@ExtendWith(NoLeaks.class)
class SplitShardParquetTest {
  @TempDir Path tmp;

  /** The dataset with a record of the row ranges read. */
  record SplitView(ParquetDataset parquet, List<String> reads) implements SplitDataset<Example> {
    @Override
    public List<Split> splits() {
      return parquet.splits();
    }

    @Override
    public Flux<Example> read(Split split, long fromRow, long toRow) {
      reads.add(split.id() + "[" + fromRow + "," + Math.min(toRow, split.rowCount()) + ")");
      return parquet.read(split, fromRow, toRow);
    }
  }

  @Test
  void ranksReadOnlyTheirRowGroupsWithTheIndexPathsCounts() {
    Path file = tmp.resolve("d.parquet");
    long n = 1_000;
    new ParquetFormat().write(Datasets.synthetic(n, 4, 3), file, WriteOptions.defaults().withRowGroupBytes(6_000));
    ParquetDataset parquet = Parquet.open(file);
    int groups = parquet.splits().size();
    assertTrue(groups >= 3, "several row groups: " + groups);
    PipelineContext ctx = PipelineContext.defaults().withSeed(9);
    for (int k : new int[] {1, 2, 3, groups + 3}) { // the last: more ranks than row groups
      for (EqualLength policy : EqualLength.values()) {
        Map<Long, Integer> seen = new HashMap<>();
        for (int r = 0; r < k; r++) {
          SplitView view = new SplitView(parquet, Collections.synchronizedList(new ArrayList<>()));
          List<Long> mine = Pipeline.from(view).shuffle().shard(k, r, policy).flux(ctx)
              .map(e -> e.tensor("label").getLong(0)).collectList().block();
          assertEquals(policy.count(n, k, r), mine.size(), "k " + k + " " + policy + " rank " + r);
          long rowsRead = 0;
          for (String read : view.reads()) {
            String[] ab = read.substring(read.indexOf('[') + 1, read.length() - 1).split(",");
            rowsRead += Long.parseLong(ab[1]) - Long.parseLong(ab[0]);
          }
          assertEquals(mine.size(), rowsRead, "rank reads only its rows: " + view.reads());
          mine.forEach(i -> seen.merge(i, 1, Integer::sum));
        }
        if (policy != EqualLength.DROP) {
          assertEquals(LongStream.range(0, n).boxed().toList(), seen.keySet().stream().sorted().toList());
        }
        if (policy != EqualLength.PAD) {
          assertTrue(seen.values().stream().allMatch(c -> c == 1), "disjoint: " + seen);
        }
      }
    }
    List<Long> e0 = Pipeline.from(parquet).shuffle().flux(ctx).map(Example::index).collectList().block();
    List<Long> e1 = Pipeline.from(parquet).shuffle().flux(ctx.nextEpoch()).map(Example::index).collectList().block();
    assertNotEquals(e0, e1, "the split order and buffer reshuffle every epoch");
    assertEquals(LongStream.range(0, n).boxed().toList(), e1.stream().sorted().toList());
  }
}
