package dev.sluice.io.remote;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import dev.sluice.core.Batch;
import dev.sluice.core.DatasetIOException;
import dev.sluice.core.MemoryManager;
import dev.sluice.io.Checksums;
import dev.sluice.io.internal.hadoop.HadoopFile;
import dev.sluice.io.internal.RemoteFiles;
import dev.sluice.io.npy.Npy;
import dev.sluice.io.npy.NpyDataset;
import dev.sluice.operators.Pipeline;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Remote reads through a Hadoop {@code FileSystem} whose reads fail: transient failures are retried
 * and give the exact result; a read that keeps failing is one error naming the URI and the offset,
 * and nothing hangs.
 */
class FlakyRemoteReadsTest {
  @TempDir
  Path dir;

  @BeforeAll
  static void register() {
    RemoteFiles.configure(Map.of("fs." + FlakyFileSystem.SCHEME + ".impl", FlakyFileSystem.class.getName(),
        "fs." + FlakyFileSystem.SCHEME + ".impl.disable.cache", "true",
        FlakyFileSystem.SECRET_KEY, "hunter2-s3cr3t"));
  }

  @AfterEach
  void noFailuresLeft() {
    FlakyFileSystem.FAILURES.set(0);
    MemoryManager.shared().checkNoOutstanding();
  }

  static URI flaky(Path p) {
    return URI.create(FlakyFileSystem.SCHEME + "://" + p.toAbsolutePath().toUri().getPath());
  }

  @Test
  void transientFailuresAreRetriedAndTheResultIsExact() throws Exception {
    Path x = HdfsDatasetsTest.writeNpy(dir.resolve("x.npy"), 1);
    String expected;
    try (NpyDataset l = Npy.open(x)) {
      expected = Checksums.sha256(l);
    }
    FlakyFileSystem.FAILED.set(0);
    FlakyFileSystem.FAILURES.set(HadoopFile.ATTEMPTS - 1);
    try (NpyDataset r = Npy.open(flaky(x))) {
      FlakyFileSystem.FAILURES.set(HadoopFile.ATTEMPTS - 1);
      assertEquals(expected, Checksums.sha256(r));
    }
    assertEquals(2 * (HadoopFile.ATTEMPTS - 1), FlakyFileSystem.FAILED.get());
  }

  @Test
  void aReadThatKeepsFailingIsOneErrorNamingTheUriAndTheOffset() throws Exception {
    Path x = HdfsDatasetsTest.writeNpy(dir.resolve("x.npy"), 1);
    URI u = flaky(x);
    try (NpyDataset r = Npy.open(u)) {
      FlakyFileSystem.FAILURES.set(Integer.MAX_VALUE);
      assertTimeoutPreemptively(Duration.ofSeconds(30), () ->
          assertThatThrownBy(() -> Pipeline.from(r).batch(16).flux().doOnNext(Batch::close).blockLast())
              .isInstanceOf(DatasetIOException.class)
              .hasMessageContaining(u.toString())
              .hasMessageContaining("cannot read bytes [")
              .hasMessageContaining("failed " + HadoopFile.ATTEMPTS + " attempts")
              .hasMessageContaining("connection reset by peer")
              .hasMessageContaining("signed with ****")
              .hasMessageNotContaining("hunter2-s3cr3t"));
    }
    FlakyFileSystem.FAILURES.set(Integer.MAX_VALUE);
    assertThatThrownBy(() -> Npy.open(u)).isInstanceOf(DatasetIOException.class)
        .hasMessageContaining(u.toString()).hasMessageContaining("failed " + HadoopFile.ATTEMPTS + " attempts")
        .hasMessageNotContaining("hunter2-s3cr3t");
  }

  @Test
  void credentialSettingsAreMaskedAndOthersShown() {
    assertEquals("****", RemoteFiles.masked("fs.s3a.secret.key", "abc"));
    assertEquals("****", RemoteFiles.masked("fs.azure.account.Password", "abc"));
    assertEquals("****", RemoteFiles.masked("dfs.client.TOKEN", "abc"));
    assertEquals("s3.example.com", RemoteFiles.masked("fs.s3a.endpoint", "s3.example.com"));
  }

  @Test
  void aFileUriIsTheLocalPathAndIsMapped() throws Exception {
    Path x = HdfsDatasetsTest.writeNpy(dir.resolve("x.npy"), 1);
    try (NpyDataset l = Npy.open(x.toUri())) {
      assertEquals(x, l.path());
      assertThat(l.toString()).contains(x.toString());
    }
  }
}
