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
}
