package dev.sluice.examples.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Dataset arguments given as URIs: a {@code file:} URI is the local path; {@code --io mmap} on a
 * remote URI and a remote URI without Hadoop's client on the class path (this module's tests have
 * only its API) each exit 2 with one line.
 */
class RemoteUriCommandsTest {
  @TempDir Path dir;

  @Test
  void aFileUriReadsTheLocalDataset() {
    Path out = dir.resolve("d.npy");
    assertEquals(0, CliRun.of("generate", "--rows", "50", "--dim", "3", out.toString()).exitCode());
    CliRun byPath = CliRun.of("checksum", out.toString());
    CliRun byUri = CliRun.of("checksum", out.toUri().toString());
    assertEquals(0, byUri.exitCode(), byUri.err());
    assertEquals(byPath.out(), byUri.out());
  }

  @Test
  void mmapOnARemoteUriAndAMissingHadoopExitTwoWithOneLine() {
    CliRun mmap = CliRun.of("read", "--io", "mmap", "hdfs://namenode:8020/data/x.npy");
    assertEquals(2, mmap.exitCode());
    assertThat(mmap.err().lines()).singleElement().asString().startsWith("sluice: ")
        .contains("hdfs://namenode:8020/data/x.npy").contains("cannot be memory-mapped");
    CliRun missing = CliRun.of("checksum", "--conf", "fs.s3a.secret.key=hunter2", "hdfs://namenode:8020/data/x.npy");
    assertEquals(2, missing.exitCode());
    assertThat(missing.err().lines()).singleElement().asString().startsWith("sluice: ")
        .contains("org.apache.hadoop:hadoop-client-runtime").doesNotContain("hunter2");
  }

  @Test
  void benchAndConvertTakeUrisForTheirInput() {
    Path src = dir.resolve("in.npy");
    assertEquals(0, CliRun.of("generate", "--rows", "40", "--dim", "3", src.toString()).exitCode());
    CliRun bench = CliRun.of("bench", "--epochs", "1", "--warmup", "0", "--batch", "8", src.toUri().toString());
    assertEquals(0, bench.exitCode(), bench.err());
    assertThat(bench.out()).contains("records/s");
    Path shards = dir.resolve("out");
    CliRun convert = CliRun.of("convert", src.toUri().toString(), shards.toString(), "--to", "shards");
    assertEquals(0, convert.exitCode(), convert.err());
    String expected = CliRun.of("checksum", src.toString()).out();
    assertThat(expected).isNotBlank();
    assertEquals(expected, CliRun.of("checksum", shards.toString()).out());
    for (String[] args : new String[][] {
        {"bench", "--conf", "fs.s3a.secret.key=hunter2", "hdfs://namenode:8020/data/set"},
        {"convert", "--conf", "fs.s3a.secret.key=hunter2", "hdfs://namenode:8020/data/set", shards + "2", "--to", "npy"},
        {"generate", "--conf", "fs.s3a.secret.key=hunter2", "--rows", "4", "--dim", "2", "hdfs://namenode:8020/data/g.npy"}}) {
      CliRun r = CliRun.of(args);
      assertEquals(2, r.exitCode(), r.err());
      assertThat(r.err().lines()).singleElement().asString().startsWith("sluice: ")
          .contains("org.apache.hadoop:hadoop-client-runtime").doesNotContain("hunter2");
    }
    CliRun mmap = CliRun.of("bench", "--io", "mmap", "hdfs://namenode:8020/data/set");
    assertEquals(2, mmap.exitCode());
    assertThat(mmap.err().lines()).singleElement().asString().contains("cannot be memory-mapped");
  }

  @Test
  void remoteCacheOptionsLeaveLocalReadsAloneAndAreCheckedTogether() {
    Path out = dir.resolve("d.npy");
    assertEquals(0, CliRun.of("generate", "--rows", "50", "--dim", "3", out.toString()).exitCode());
    String expected = CliRun.of("checksum", out.toString()).out();
    Path cache = dir.resolve("remote-cache");
    for (String cmd : new String[] {"checksum", "read", "head"}) {
      CliRun cached = CliRun.of(cmd, "--remote-cache", cache.toString(), "--remote-cache-max-bytes", "1g", out.toString());
      assertEquals(0, cached.exitCode(), cached.err());
      if (cmd.equals("checksum")) {
        assertEquals(expected, cached.out());
      }
      CliRun alone = CliRun.of(cmd, "--remote-cache-max-bytes", "1g", out.toString());
      assertEquals(2, alone.exitCode());
      assertThat(alone.err().lines()).singleElement().asString().startsWith("sluice: ")
          .contains("--remote-cache-max-bytes").contains("--remote-cache DIR");
    }
    CliRun bad = CliRun.of("checksum", "--remote-cache", cache.toString(), "--remote-cache-max-bytes", "lots",
        out.toString());
    assertEquals(2, bad.exitCode());
    assertThat(bad.err().lines()).singleElement().asString().startsWith("sluice: ").contains("lots");
    CliRun missing = CliRun.of("bench", "--remote-cache", cache.toString(), "hdfs://namenode:8020/data/set");
    assertEquals(2, missing.exitCode());
    assertThat(missing.err().lines()).singleElement().asString().contains("org.apache.hadoop:hadoop-client-runtime");
  }
}
