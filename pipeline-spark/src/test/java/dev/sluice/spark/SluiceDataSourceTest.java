package dev.sluice.spark;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.expr;

import dev.sluice.core.Example;
import dev.sluice.core.MemoryManager;
import dev.sluice.io.shards.ShardSet;
import dev.sluice.io.shards.Shards;
import java.io.File;
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

class SluiceDataSourceTest {
  private static SparkSession spark;

  @BeforeAll
  static void start() {
    // local[2,2]: two threads, a failed task is retried once
    spark = LocalSpark.start("local[2,2]", "sluice-test");
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

  private static Dataset<Row> everyType(long n, int partitions) {
    return mixed(n, partitions).select(col("*"),
        expr("CASE WHEN id % 3 = 0 THEN NULL ELSE id % 2 = 0 END").as("flag"),
        expr("CAST(id % 120 - 60 AS TINYINT)").as("small"),
        expr("CASE WHEN id % 9 = 0 THEN NULL ELSE CAST(id * 3 - 500 AS SMALLINT) END").as("short"),
        expr("CAST(id AS DOUBLE) / 7").as("ratio"),
        expr("CASE WHEN id % 6 = 0 THEN NULL ELSE unhex(hex(id * 31)) END").as("blob"),
        expr("transform(sequence(1, CAST(id % 3 AS INT)), i -> CAST(id * i AS DOUBLE))").as("dlist"),
        expr("transform(sequence(0, 5), i -> CAST(id + i AS INT))").as("grid"),
        expr("CASE WHEN id % 4 = 0 THEN NULL ELSE array(id, -id) END").as("pair"),
        expr("array(id % 2 = 0, id % 3 = 0)").as("bits"));
  }

  /** The rows as text, the binary column as hex (a byte array prints as its identity). */
  private static List<String> text(Dataset<Row> df) {
    return df.withColumn("blob", expr("hex(blob)")).collectAsList().stream().map(Row::toString).toList();
  }

  @Test
  void columnarReadsOfEveryTypeGiveTheRowsOfTheRowPath(@TempDir Path dir) {
    Path out = dir.resolve("types");
    Dataset<Row> df = everyType(700, 2);
    df.write().format("sluice").mode("overwrite").option("shardRows", "256").option("shape.vec", "3")
        .option("shape.grid", "2,3").option("shape.pair", "2").option("shape.bits", "2")
        .save(out.toUri().toString());

    Dataset<Row> columnar = spark.read().format("sluice").load(out.toUri().toString());
    Dataset<Row> rows = spark.read().format("sluice").option("columnar", "false").load(out.toUri().toString());
    assertThat(columnar.queryExecution().executedPlan().toString()).contains("ColumnarToRow");
    assertThat(rows.queryExecution().executedPlan().toString()).doesNotContain("ColumnarToRow");
    assertThat(columnar.schema()).isEqualTo(rows.schema());

    List<String> fromColumns = text(columnar);
    assertThat(fromColumns).hasSize(700).isEqualTo(text(rows)).isEqualTo(text(df.orderBy("id")));

    Dataset<Row> some = columnar.select("tokens", "blob", "id").where("id % 2 = 1");
    assertThat(some.queryExecution().executedPlan().toString()).contains("ColumnarToRow");
    assertThat(text(some)).hasSize(350).isEqualTo(text(rows.select("tokens", "blob", "id").where("id % 2 = 1")));
    assertThat(columnar.limit(3).collectAsList()).hasSize(3);
    assertThat(columnar.count()).isEqualTo(700);
    MemoryManager.shared().awaitNoOutstanding(Duration.ofSeconds(20));
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
  void anAbortedOverwriteLeavesTheOldDatasetIntactAndASuccessfulOneReplacesIt(@TempDir Path dir) throws Exception {
    Path out = dir.resolve("replaced");
    spark.range(0, 300, 1, 2).write().format("sluice").mode("overwrite").option("shardRows", "40")
        .save(out.toUri().toString());
    String old = checksum(out);
    List<Path> oldFiles = listing(out);
    spark.udf().register("failAt77", (org.apache.spark.sql.api.java.UDF1<Long, Long>) id -> {
      if (id == 77) {
        throw new IllegalStateException("overwrite fails");
      }
      return id;
    }, org.apache.spark.sql.types.DataTypes.LongType);

    assertThatThrownBy(() -> spark.range(0, 400, 1, 2).selectExpr("failAt77(id) + 1000 AS id").write()
        .format("sluice").mode("overwrite").option("shardRows", "50").save(out.toUri().toString()))
        .hasStackTraceContaining("overwrite fails");
    assertThat(checksum(out)).isEqualTo(old);
    assertThat(listing(out)).isEqualTo(oldFiles);
    assertThat(spark.read().format("sluice").load(out.toUri().toString()).count()).isEqualTo(300);

    spark.range(0, 400, 1, 2).selectExpr("id + 1000 AS id").write().format("sluice").mode("overwrite")
        .option("shardRows", "50").save(out.toUri().toString());
    try (ShardSet set = Shards.open(out)) {
      assertThat(set.size()).isEqualTo(400);
      assertThat(listing(out).stream().filter(p -> p.toString().endsWith(".shard")).count())
          .as("only the new set's shards are left").isEqualTo(set.shards().size());
    }
    assertThat(spark.read().format("sluice").load(out.toUri().toString()).where("id < 1000").count()).isZero();
    assertThat(stagingLeft(out)).isEmpty();
  }

  private static String checksum(Path set) {
    try (ShardSet s = Shards.open(set)) {
      return dev.sluice.io.Checksums.sha256(s);
    }
  }

  private static List<Path> listing(Path dir) throws java.io.IOException {
    try (Stream<Path> s = Files.list(dir)) {
      return s.sorted().toList();
    }
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
