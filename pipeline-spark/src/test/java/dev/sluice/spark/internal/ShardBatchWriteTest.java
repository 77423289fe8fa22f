package dev.sluice.spark.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.core.MemoryManager;
import dev.sluice.io.Checksums;
import dev.sluice.io.shards.ShardSet;
import dev.sluice.io.shards.Shards;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.stream.Stream;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.connector.write.DataWriter;
import org.apache.spark.sql.connector.write.WriterCommitMessage;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The driver's commit of a write, driven without a Spark session: what a reader can see at each outcome. */
class ShardBatchWriteTest {
  private static final StructType SCHEMA = new StructType().add("id", DataTypes.LongType, false);

  @AfterEach
  void noMemoryLeft() {
    MemoryManager.shared().awaitNoOutstanding(Duration.ofSeconds(20));
  }

  /** Runs the tasks of a write: partition {@code p} writes ids {@code [first + 100 p, first + 100 p + 100)}. */
  private static WriterCommitMessage[] runTasks(ShardBatchWrite write, long first, int partitions) throws Exception {
    WriterCommitMessage[] out = new WriterCommitMessage[partitions];
    for (int p = 0; p < partitions; p++) {
      try (DataWriter<org.apache.spark.sql.catalyst.InternalRow> w =
          write.createBatchWriterFactory(null).createWriter(p, 10L + p)) {
        for (long id = first + 100L * p; id < first + 100L * (p + 1); id++) {
          w.write(new GenericInternalRow(new Object[] {id}));
        }
        out[p] = w.commit();
      }
    }
    return out;
  }

  private static String checksum(Path dir) {
    try (ShardSet set = Shards.open(dir)) {
      return Checksums.sha256(set);
    }
  }

  private static List<String> files(Path dir) throws Exception {
    try (Stream<Path> s = Files.list(dir)) {
      return s.map(p -> p.getFileName().toString()).sorted().toList();
    }
  }

  @Test
  void aCommitThatFailsBeforeTheRenameLeavesTheOldDatasetWhole(@TempDir Path tmp) throws Exception {
    Path dir = tmp.resolve("set");
    ShardBatchWrite first = new ShardBatchWrite(dir.toUri(), SCHEMA, new HashMap<>(), 40, false, "job-a");
    first.commit(runTasks(first, 0, 2));
    String old = checksum(dir);
    List<String> oldFiles = files(dir);

    ShardBatchWrite overwrite = new ShardBatchWrite(dir.toUri(), SCHEMA, new HashMap<>(), 30, true, "job-b");
    WriterCommitMessage[] messages = runTasks(overwrite, 1000, 2);
    ShardMessage second = (ShardMessage) messages[1];
    Files.delete(dir.resolve(ShardBatchWrite.STAGING_PREFIX + "job-b").resolve(second.files()[1]));

    assertThatThrownBy(() -> overwrite.commit(messages)).isInstanceOf(UncheckedIOException.class)
        .hasMessageContaining(second.files()[1]);
    assertThat(checksum(dir)).isEqualTo(old);
    overwrite.abort(messages);
    assertThat(files(dir)).isEqualTo(oldFiles);
    assertThat(checksum(dir)).isEqualTo(old);
  }

  @Test
  void anOverwriteReplacesMetadataThenDeletesOnlyTheReplacedShards(@TempDir Path tmp) throws Exception {
    Path dir = tmp.resolve("set");
    ShardBatchWrite first = new ShardBatchWrite(dir.toUri(), SCHEMA, new HashMap<>(), 40, false, "job-a");
    first.commit(runTasks(first, 0, 2));
    Files.writeString(dir.resolve("README.txt"), "not part of the set");

    ShardBatchWrite overwrite = new ShardBatchWrite(dir.toUri(), SCHEMA, new HashMap<>(), 30, true, "job-b");
    WriterCommitMessage[] messages = runTasks(overwrite, 1000, 2);
    overwrite.commit(messages);

    try (ShardSet set = Shards.open(dir)) {
      assertThat(set.size()).isEqualTo(200);
      assertThat(set.get(0).tensor("id").getLong(0)).isEqualTo(1000);
      List<String> listed = set.shards().stream().map(s -> s.file()).sorted().toList();
      assertThat(listed).hasSize(8).allMatch(f -> f.contains("job-b"));
      assertThat(files(dir)).containsExactlyInAnyOrderElementsOf(
          Stream.concat(listed.stream(), Stream.of("README.txt", "metadata.json")).toList());
    }
  }
}
