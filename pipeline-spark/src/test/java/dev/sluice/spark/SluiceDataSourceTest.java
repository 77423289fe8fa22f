package dev.sluice.spark;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.expr;

import dev.sluice.core.Example;
import dev.sluice.io.shards.ShardSet;
import dev.sluice.io.shards.Shards;
import java.io.File;
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

class SluiceDataSourceTest {
  private static SparkSession spark;

  @BeforeAll
  static void start() {
    // local[2,2]: two threads, a failed task is retried once
    spark = SparkSession.builder().master("local[2,2]").appName("sluice-test")
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

  private static Dataset<Row> mixed(long n, int partitions) {
    return spark.range(0, n, 1, partitions).select(
        col("id"),
        expr("CASE WHEN id % 5 = 0 THEN NULL ELSE CAST(id * 2 AS INT) END").as("label"),
        expr("CASE WHEN id % 7 = 0 THEN NULL ELSE concat('row-', CAST(id AS STRING)) END").as("text"),
        expr("CASE WHEN id % 11 = 0 THEN NULL ELSE transform(sequence(0, CAST(id % 4 AS INT)),"
            + " i -> CASE WHEN i = 2 THEN NULL ELSE CAST(id + i AS FLOAT) END) END").as("tokens"),
        expr("array(CAST(id AS FLOAT), CAST(id + 1 AS FLOAT), CAST(id + 2 AS FLOAT))").as("vec"));
  }

  @Test
  void nullsStringsVariableAndFixedArraysRoundTrip(@TempDir Path dir) {
    Path out = dir.resolve("set");
    Dataset<Row> df = mixed(1000, 3);
    df.write().format("sluice").mode("overwrite").option("shardRows", "150").option("shape.vec", "3")
        .save(out.toUri().toString());

    Dataset<Row> back = spark.read().format("sluice").load(out.toUri().toString());
    assertThat(back.count()).isEqualTo(1000);
    List<Row> expected = df.orderBy("id").collectAsList();
    List<Row> actual = back.orderBy("id").collectAsList();
    assertThat(actual).hasSize(expected.size());
    for (int i = 0; i < expected.size(); i++) {
      assertThat(actual.get(i).toString()).isEqualTo(expected.get(i).toString());
    }
    assertThat(back.select("text").where("text IS NULL").count()).isEqualTo(df.where("text IS NULL").count());

    try (ShardSet set = Shards.open(out)) {
      assertThat(set.size()).isEqualTo(1000);
      assertThat(set.schema().field("vec").isFixedLength()).isTrue();
      assertThat(set.schema().field("tokens").isFixedLength()).isFalse();
      long sum = 0;
      for (long i = 0; i < set.size(); i++) {
        Example e = set.get(i);
        sum += e.tensor("id").data().order(java.nio.ByteOrder.LITTLE_ENDIAN).getLong(0);
      }
      assertThat(sum).isEqualTo(999L * 1000 / 2);
    }
    assertThat(stagingLeft(out)).isEmpty();
  }

  @Test
  void aTaskThatFailsOnceIsRetriedAndOnlyItsCommittedAttemptIsListed(@TempDir Path dir) throws Exception {
    Path out = dir.resolve("retried");
    Path marker = dir.resolve("failed-once");
    String markerName = marker.toString();
    spark.udf().register("failOnce", (org.apache.spark.sql.api.java.UDF1<Long, Long>) id -> {
      if (id == 250 && new File(markerName).createNewFile()) {
        throw new IllegalStateException("first attempt fails");
      }
      return id;
    }, org.apache.spark.sql.types.DataTypes.LongType);
    spark.range(0, 400, 1, 2).selectExpr("failOnce(id) AS id").write().format("sluice").mode("overwrite")
        .option("shardRows", "50").save(out.toUri().toString());

    assertThat(Files.exists(marker)).isTrue();
    Dataset<Row> back = spark.read().format("sluice").load(out.toUri().toString());
    assertThat(back.count()).isEqualTo(400);
    assertThat(back.distinct().count()).isEqualTo(400);
    try (ShardSet set = Shards.open(out)) {
      assertThat(set.size()).isEqualTo(400);
    }
    try (Stream<Path> files = Files.list(out)) {
      assertThat(files.filter(p -> p.toString().endsWith(".shard")).count())
          .as("shard files in the directory are exactly those listed").isEqualTo(8);
    }
    assertThat(stagingLeft(out)).isEmpty();
  }

  @Test
  void anAbortedJobLeavesNoDataset(@TempDir Path dir) {
    Path out = dir.resolve("aborted");
    spark.udf().register("alwaysFail", (org.apache.spark.sql.api.java.UDF1<Long, Long>) id -> {
      if (id == 300) {
        throw new IllegalStateException("always fails");
      }
      return id;
    }, org.apache.spark.sql.types.DataTypes.LongType);
    assertThatThrownBy(() -> spark.range(0, 400, 1, 2).selectExpr("alwaysFail(id) AS id").write().format("sluice")
        .mode("overwrite").option("shardRows", "50").save(out.toUri().toString()))
        .hasStackTraceContaining("always fails");
    assertThat(Files.exists(out.resolve("metadata.json"))).isFalse();
    assertThat(stagingLeft(out)).isEmpty();
  }

  @Test
  void anUnmappableColumnIsRefusedAtWriteStartNamingIt(@TempDir Path dir) {
    Path out = dir.resolve("bad");
    assertThatThrownBy(() -> spark.range(3).selectExpr("id", "current_date() AS day").write().format("sluice")
        .mode("overwrite").save(out.toUri().toString()))
        .hasStackTraceContaining("column 'day'");
    assertThat(Files.exists(out.resolve("metadata.json"))).isFalse();
  }

  private static List<Path> stagingLeft(Path out) {
    if (!Files.exists(out)) {
      return List.of();
    }
    try (Stream<Path> s = Files.list(out)) {
      return s.filter(p -> p.getFileName().toString().startsWith("_sluice-staging")
          || p.getFileName().toString().startsWith(".")).toList();
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }
}
