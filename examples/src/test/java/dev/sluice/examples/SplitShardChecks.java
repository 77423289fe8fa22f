package dev.sluice.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.core.Example;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.Split;
import dev.sluice.core.SplitDataset;
import dev.sluice.operators.EqualLength;
import dev.sluice.operators.Pipeline;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.ToLongFunction;
import java.util.stream.LongStream;
import reactor.core.publisher.Flux;

/** Checks shared by the split-sharding tests on real split sources (npy stacks, Parquet). */
final class SplitShardChecks {
  private SplitShardChecks() {}

  /** The split side of a source, with a record of the row ranges read. */
  record SplitView(SplitDataset<Example> source, List<String> reads) implements SplitDataset<Example> {
    SplitView(SplitDataset<Example> source) {
      this(source, Collections.synchronizedList(new ArrayList<>()));
    }

    @Override
    public List<Split> splits() {
      return source.splits();
    }

    @Override
    public Flux<Example> read(Split split, long fromRow, long toRow) {
      reads.add(split.id() + "[" + fromRow + "," + Math.min(toRow, split.rowCount()) + ")");
      return source.read(split, fromRow, toRow);
    }

    long rowsRead() {
      long rows = 0;
      for (String read : reads) {
        String[] ab = read.substring(read.indexOf('[') + 1, read.length() - 1).split(",");
        rows += Long.parseLong(ab[1]) - Long.parseLong(ab[0]);
      }
      return rows;
    }
  }

  /**
   * For each world size in {@code worlds} and each policy: every rank of {@code shuffle → shard}
   * gets the index path's count, reads only its own rows, and together the ranks cover the
   * {@code n} ids (PAD, UNEVEN) and are disjoint (DROP, UNEVEN).
   */
  static void assertRanksPartition(SplitDataset<Example> source, long n, int[] worlds, PipelineContext ctx,
      ToLongFunction<Example> id) {
    for (int k : worlds) {
      for (EqualLength policy : EqualLength.values()) {
        Map<Long, Integer> seen = new HashMap<>();
        for (int r = 0; r < k; r++) {
          SplitView view = new SplitView(source);
          List<Long> mine = Pipeline.from(view).shuffle().shard(k, r, policy).flux(ctx)
              .map(id::applyAsLong).collectList().block();
          assertEquals(policy.count(n, k, r), mine.size(), "k " + k + " " + policy + " rank " + r);
          assertEquals(mine.size(), view.rowsRead(), "rank reads only its rows: " + view.reads());
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
  }
}
