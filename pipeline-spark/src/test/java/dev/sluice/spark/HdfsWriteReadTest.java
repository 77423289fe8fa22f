package dev.sluice.spark;

import static org.assertj.core.api.Assertions.assertThat;
import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.expr;

import dev.sluice.core.MemoryManager;
import dev.sluice.io.Checksums;
import dev.sluice.io.shards.ShardSet;
import dev.sluice.io.shards.Shards;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.hdfs.MiniDFSCluster;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Writes to and reads from a real HDFS (one {@link MiniDFSCluster} and one Spark session for the
 * class): the set written to {@code hdfs://} has the checksum of the same rows written locally, read
 * back through Spark and through {@link Shards#open(URI)}, and an overwrite there replaces it.
 */
class HdfsWriteReadTest {
  @TempDir
  static Path local;
  static MiniDFSCluster cluster;
  static SparkSession spark;

  @BeforeAll
  static void start() throws IOException {
    Configuration conf = new Configuration();
    conf.set(MiniDFSCluster.HDFS_MINIDFS_BASEDIR, local.resolve("dfs").toString());
    cluster = new MiniDFSCluster.Builder(conf).numDataNodes(1).build();
    cluster.waitActive();
    spark = LocalSpark.start("sluice-hdfs-test");
  }

  @AfterAll
  static void stop() {
    if (spark != null) {
      spark.stop();
    }
    if (cluster != null) {
      cluster.shutdown(true);
    }
    MemoryManager.shared().awaitNoOutstanding(Duration.ofSeconds(20));
  }

  private static Dataset<Row> rows(long n) {
    return spark.range(0, n, 1, 3).select(
        col("id"),
        expr("CASE WHEN id % 7 = 0 THEN NULL ELSE concat('row-', CAST(id AS STRING)) END").as("text"),
        expr("transform(sequence(0, CAST(id % 4 AS INT)), i -> CAST(id + i AS FLOAT))").as("tokens"),
        expr("array(CAST(id AS FLOAT), CAST(id + 1 AS FLOAT))").as("vec"));
  }

  private static String checksum(ShardSet set) {
    return Checksums.sha256(set);
  }

  @Test
  void aSetWrittenToHdfsReadsBackWithTheChecksumOfTheLocalWrite() throws Exception {
    URI remote = URI.create(cluster.getURI() + "/data/ds");
    Path localSet = local.resolve("ds");
    Dataset<Row> df = rows(1000);
    df.write().format("sluice").mode("overwrite").option("shardRows", "150").option("shape.vec", "2")
        .save(remote.toString());
    df.write().format("sluice").mode("overwrite").option("shardRows", "150").option("shape.vec", "2")
        .save(localSet.toUri().toString());

    String expected;
    try (ShardSet set = Shards.open(localSet)) {
      expected = checksum(set);
    }
    try (ShardSet set = Shards.open(remote)) {
      assertThat(set.size()).isEqualTo(1000);
      assertThat(checksum(set)).isEqualTo(expected);
    }
    Dataset<Row> back = spark.read().format("sluice").load(remote.toString());
    List<String> remoteRows = back.collectAsList().stream().map(Row::toString).toList();
    List<String> localRows = spark.read().format("sluice").load(localSet.toUri().toString()).collectAsList().stream()
        .map(Row::toString).toList();
    assertThat(remoteRows).hasSize(1000).isEqualTo(localRows);
    assertThat(back.count()).isEqualTo(1000);

    rows(400).write().format("sluice").mode("overwrite").option("shardRows", "150").option("shape.vec", "2")
        .save(remote.toString());
    try (ShardSet set = Shards.open(remote); FileSystem fs = FileSystem.newInstance(remote, new Configuration())) {
      assertThat(set.size()).isEqualTo(400);
      long shardFiles = java.util.Arrays.stream(fs.listStatus(new org.apache.hadoop.fs.Path(remote)))
          .filter(s -> s.getPath().getName().endsWith(".shard")).count();
      assertThat(shardFiles).as("the replaced set's shards are deleted").isEqualTo(set.shards().size());
    }
  }
}
