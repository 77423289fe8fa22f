package dev.sluice.examples;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.core.Example;
import dev.sluice.core.MemoryManager;
import dev.sluice.core.testing.NoLeaks;
import dev.sluice.io.shards.ShardSet;
import dev.sluice.io.shards.Shards;
import java.nio.file.Path;
import java.util.BitSet;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** SparkToShards on a few thousand rows: Spark writes the shard set, every rank trains on its part. */
@Tag("spark") // runs in the surefire execution whose class path has Spark's Hadoop client
@ExtendWith(NoLeaks.class)
class SparkToShardsTest {
  private static final Pattern EPOCH = Pattern.compile(
      "epoch (\\d): rank 0: (\\d+) rows in (\\d+) steps, rank 1: (\\d+) rows in (\\d+) steps;"
          + " each of the (\\d+) rows once, mean loss (\\d+\\.\\d{4})");

  @TempDir Path dir;

  @Test
  void sparkWritesTheParquetRowsAsShardsAndEachEpochTrainsOnEveryRowOnce() throws Exception {
    int rows = 3000;
    int dim = 8;
    String out = ExampleMainsTest.stdout(() -> SparkToShards.main(new String[] {"--rows", Integer.toString(rows),
        "--dim", Integer.toString(dim), "--out", dir.toString(), "--shard-rows", "500", "--world", "2",
        "--epochs", "2", "--batch", "64"}));
    List<String> lines = out.lines().toList();
    assertThat(lines.get(0)).isEqualTo("generated 3000 rows (id bigint, x array<float>[8], label int) as Parquet in "
        + dir.resolve("parquet"));
    Matcher wrote = Pattern.compile("Spark \\(local\\[2\\]\\) wrote \\S+ as (\\d+) shards to (\\S+) in \\d+\\.\\d{3} s")
        .matcher(lines.get(1));
    assertThat(wrote.matches()).as(lines.get(1)).isTrue();
    assertThat(wrote.group(2)).isEqualTo(dir.resolve("shards").toString());

    // the set holds each generated row once, with the generated values
    try (ShardSet set = Shards.open(dir.resolve("shards"))) {
      assertThat(set.size()).isEqualTo(rows);
      assertThat(set.schema().field("x").isFixedLength()).isTrue();
      assertThat(set.schema().field("x").shape().numElements()).isEqualTo(dim);
      BitSet ids = new BitSet();
      for (long i = 0; i < set.size(); i++) {
        Example e = set.get(i);
        long id = e.tensor("id").getLong(0);
        assertThat(ids.get((int) id)).as("id %d written twice", id).isFalse();
        ids.set((int) id);
        assertThat(e.tensor("label").getInt(0)).isEqualTo(e.tensor("x").getFloat(0) > 0 ? 1 : 0);
        for (int j = 0; j < dim; j++) {
          assertThat(e.tensor("x").getFloat(j)).isEqualTo((float) Math.sin(id * (j + 1) / 1000.0));
        }
      }
      assertThat(ids.cardinality()).isEqualTo(rows);
      assertThat(ids.nextClearBit(0)).isEqualTo(rows);
      assertThat(Long.parseLong(wrote.group(1))).isEqualTo(set.shards().size());
    }

    List<String> epochs = lines.stream().filter(l -> l.startsWith("epoch ")).toList();
    assertThat(epochs).hasSize(2);
    for (int epoch = 0; epoch < 2; epoch++) {
      Matcher m = EPOCH.matcher(epochs.get(epoch));
      assertThat(m.matches()).as(epochs.get(epoch)).isTrue();
      assertThat(Integer.parseInt(m.group(1))).isEqualTo(epoch);
      long rank0 = Long.parseLong(m.group(2));
      long rank1 = Long.parseLong(m.group(4));
      assertThat(rank0 + rank1).isEqualTo(rows);
      assertThat(rank0).isEqualTo(rows / 2);
      assertThat(Long.parseLong(m.group(3))).isEqualTo((rank0 + 63) / 64);
      assertThat(Long.parseLong(m.group(5))).isEqualTo((rank1 + 63) / 64);
      assertThat(Long.parseLong(m.group(6))).isEqualTo(rows);
    }
    assertThat(out).endsWith("off-heap bytes outstanding: 0" + System.lineSeparator());

    // the Parquet written above as input, a world of 7 that does not divide the 3000 rows: every
    // rank gets 429 rows, 3 of them repeated from the start of the epoch's order
    Path second = dir.resolve("second");
    String again = ExampleMainsTest.stdout(() -> SparkToShards.main(new String[] {"--parquet",
        dir.resolve("parquet").toString(), "--out", second.toString(), "--world", "7", "--epochs", "1"}));
    assertThat(again).doesNotContain("generated");
    String epoch = again.lines().filter(l -> l.startsWith("epoch 0: ")).findFirst().orElseThrow();
    for (int rank = 0; rank < 7; rank++) {
      assertThat(epoch).contains("rank " + rank + ": 429 rows in 7 steps");
    }
    assertThat(epoch).contains("; each of the 3000 rows once (and 3 again, to give every rank 429 rows), mean loss ");
    try (ShardSet set = Shards.open(second.resolve("shards"))) {
      assertThat(set.size()).isEqualTo(rows);
    }
    MemoryManager.shared().checkNoOutstanding();
  }

  @Test
  void refusesBothOrNeitherInput() {
    assertThatThrownBy(() -> SparkToShards.main(new String[] {"--out", dir.toString()}))
        .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("usage: SparkToShards --out DIR");
    assertThatThrownBy(() -> SparkToShards.main(new String[] {"--out", dir.toString(), "--rows", "10",
        "--parquet", dir.toString()})).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> SparkToShards.main(new String[] {"--out", dir.toString(), "--rows", "0"}))
        .isInstanceOf(IllegalArgumentException.class).hasMessage("--rows must be > 0 but it was 0");
  }
}
