package dev.sluice.spark;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.core.Batch;
import dev.sluice.core.Column;
import dev.sluice.core.MemoryManager;
import dev.sluice.core.PipelineContext;
import dev.sluice.io.Checksums;
import dev.sluice.io.Formats;
import dev.sluice.io.WriteOptions;
import dev.sluice.io.parquet.Parquet;
import dev.sluice.io.parquet.ParquetDataset;
import dev.sluice.io.shards.ShardSet;
import dev.sluice.io.shards.Shards;
import dev.sluice.operators.Pipeline;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A million rows from a Parquet file written by Spark as a shard set (once for the class), then
 * checked against the Parquet file: by checksum, by a four-rank shuffled pipeline, and against the
 * shard set the io library's converter writes from the same file.
 */
class ParquetToShardsTest {
  private static final int ROWS = 1_000_000;
  private static final List<String> COLUMNS = List.of("id", "label", "x");

  @TempDir
  static Path dir;
  private static SparkSession spark;
  private static Path parquetFile;
  private static Path shards;

  @BeforeAll
  static void start() throws Exception {
    spark = LocalSpark.start("sluice-parquet-test");
    Path parquetDir = dir.resolve("parquet");
    spark.range(0, ROWS, 1, 1).selectExpr(
        "CASE WHEN id % 1000 = 999 THEN NULL ELSE id END AS id",
        "CASE WHEN id % 13 = 0 THEN NULL ELSE CAST(id * 0.5 AS FLOAT) END AS x",
        "CASE WHEN id % 17 = 0 THEN NULL ELSE CAST(id % 100 AS INT) END AS label")
        .coalesce(1).write().parquet(parquetDir.toUri().toString());
    try (Stream<Path> s = Files.list(parquetDir)) {
      parquetFile = s.filter(p -> p.getFileName().toString().endsWith(".parquet")).findFirst().orElseThrow();
    }
    Dataset<Row> df = spark.read().parquet(parquetFile.toUri().toString());
    shards = dir.resolve("shards");
    df.write().format("sluice").mode("overwrite").option("shardRows", "100000").save(shards.toUri().toString());
  }

  @AfterAll
  static void stop() {
    if (spark != null) {
      spark.stop();
    }
    MemoryManager.shared().awaitNoOutstanding(Duration.ofSeconds(20));
  }

  @Test
  void aMillionRowsFromParquetHaveTheChecksumOfTheParquetFile() {
    assertThat(spark.read().format("sluice").load(shards.toUri().toString()).count()).isEqualTo(ROWS);
    assertThat(spark.read().format("sluice").load(shards.toUri().toString()).where("id IS NULL").count())
        .isEqualTo(1000);
    try (ShardSet set = Shards.open(shards); ParquetDataset parquet = Parquet.open(parquetFile)) {
      assertThat(set.size()).isEqualTo(ROWS);
      assertThat(Checksums.sha256(set, COLUMNS)).isEqualTo(Checksums.sha256(parquet, COLUMNS));
    }
  }

  @Test
  void theSparkWrittenSetHasTheChecksumOfTheSetTheConverterWritesFromTheSameFile() {
    Path converted = dir.resolve("converted");
    try (ParquetDataset parquet = Parquet.open(parquetFile)) {
      Formats.named("shards").write(parquet, converted, WriteOptions.defaults().withNumShards(4).withWorkers(2));
    }
    try (ShardSet fromSpark = Shards.open(shards); ShardSet fromConvert = Shards.open(converted)) {
      assertThat(fromSpark.schema()).isEqualTo(fromConvert.schema());
      assertThat(Checksums.sha256(fromSpark)).isEqualTo(Checksums.sha256(fromConvert));
    }
  }

  /** The Parquet file's values, by row, with a null mask per column. */
  private record Expected(long[] id, float[] x, int[] label, boolean[] idNull, boolean[] xNull, boolean[] labelNull) {}

  private static Expected readParquet() {
    Expected e = new Expected(new long[ROWS], new float[ROWS], new int[ROWS], new boolean[ROWS], new boolean[ROWS],
        new boolean[ROWS]);
    try (ParquetDataset parquet = Parquet.open(parquetFile)) {
      for (Batch b : Pipeline.from(parquet).batch(65_536).flux().toIterable()) {
        try (b) {
          Column id = b.column("id");
          Column x = b.column("x");
          Column label = b.column("label");
          for (int i = 0; i < b.size(); i++) {
            int row = (int) b.index(i);
            e.idNull[row] = !id.isValid(i);
            e.id[row] = id.values().getLong(i);
            e.xNull[row] = !x.isValid(i);
            e.x[row] = x.values().getFloat(i);
            e.labelNull[row] = !label.isValid(i);
            e.label[row] = label.values().getInt(i);
          }
        }
      }
    }
    return e;
  }

  @Test
  void fourShuffledRanksReadEveryRowOnceWithTheParquetFilesValues() {
    Expected expected = readParquet();
    try (ShardSet set = Shards.open(shards)) {
      long[] firstOfRankZero = new long[2];
      for (int epoch = 0; epoch < 2; epoch++) {
        PipelineContext ctx = PipelineContext.defaults().withSeed(42).withEpoch(epoch);
        int[] seen = new int[ROWS];
        for (int rank = 0; rank < 4; rank++) {
          long rows = 0;
          for (Batch b : Pipeline.from(set).shuffle().shard(4, rank).batch(8192).flux(ctx).toIterable()) {
            try (b) {
              Column id = b.column("id");
              Column x = b.column("x");
              Column label = b.column("label");
              for (int i = 0; i < b.size(); i++) {
                int row = (int) b.index(i);
                if (rows == 0 && i == 0 && rank == 0) {
                  firstOfRankZero[epoch] = row;
                }
                seen[row]++;
                assertThat(!id.isValid(i)).isEqualTo(expected.idNull[row]);
                assertThat(!x.isValid(i)).isEqualTo(expected.xNull[row]);
                assertThat(!label.isValid(i)).isEqualTo(expected.labelNull[row]);
                if (!expected.idNull[row] && id.values().getLong(i) != expected.id[row]
                    || !expected.xNull[row] && x.values().getFloat(i) != expected.x[row]
                    || !expected.labelNull[row] && label.values().getInt(i) != expected.label[row]) {
                  throw new AssertionError("row " + row + " of rank " + rank + " differs from the Parquet file's");
                }
              }
              rows += b.size();
            }
          }
          assertThat(rows).as("rows of rank %d", rank).isEqualTo(ROWS / 4);
        }
        for (int row = 0; row < ROWS; row++) {
          if (seen[row] != 1) {
            throw new AssertionError("epoch " + epoch + ": row " + row + " read " + seen[row] + " times");
          }
        }
      }
      assertThat(firstOfRankZero[0]).as("each epoch has its own order").isNotEqualTo(firstOfRankZero[1]);
    }
  }
}
