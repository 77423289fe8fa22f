package dev.sluice.spark;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.io.Checksums;
import dev.sluice.io.parquet.Parquet;
import dev.sluice.io.parquet.ParquetDataset;
import dev.sluice.io.shards.ShardSet;
import dev.sluice.io.shards.Shards;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ParquetToShardsTest {
  private static SparkSession spark;

  @BeforeAll
  static void start() {
    spark = SparkSession.builder().master("local[2]").appName("sluice-parquet-test")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.driver.host", "127.0.0.1")
        .getOrCreate();
  }

  @AfterAll
  static void stop() {
    if (spark != null) {
      spark.stop();
    }
  }

  @Test
  void aMillionRowsFromParquetHaveTheChecksumOfTheParquetFile(@TempDir Path dir) throws Exception {
    Path parquetDir = dir.resolve("parquet");
    spark.range(0, 1_000_000, 1, 1).selectExpr(
        "CASE WHEN id % 1000 = 999 THEN NULL ELSE id END AS id",
        "CASE WHEN id % 13 = 0 THEN NULL ELSE CAST(id * 0.5 AS FLOAT) END AS x",
        "CASE WHEN id % 17 = 0 THEN NULL ELSE CAST(id % 100 AS INT) END AS label")
        .coalesce(1).write().parquet(parquetDir.toUri().toString());
    Path file;
    try (Stream<Path> s = Files.list(parquetDir)) {
      file = s.filter(p -> p.getFileName().toString().endsWith(".parquet")).findFirst().orElseThrow();
    }
    Dataset<Row> df = spark.read().parquet(file.toUri().toString());
    Path out = dir.resolve("shards");
    df.write().format("sluice").mode("overwrite").option("shardRows", "100000").save(out.toUri().toString());

    assertThat(spark.read().format("sluice").load(out.toUri().toString()).count()).isEqualTo(1_000_000);
    assertThat(spark.read().format("sluice").load(out.toUri().toString()).where("id IS NULL").count())
        .isEqualTo(1000);
    List<String> columns = List.of("id", "label", "x");
    try (ShardSet set = Shards.open(out)) {
      assertThat(set.size()).isEqualTo(1_000_000);
      ParquetDataset parquet = Parquet.open(file);
      assertThat(Checksums.sha256(set, columns)).isEqualTo(Checksums.sha256(parquet, columns));
    }
  }
}
