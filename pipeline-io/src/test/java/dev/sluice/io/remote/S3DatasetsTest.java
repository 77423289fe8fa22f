package dev.sluice.io.remote;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.sluice.core.DatasetIOException;
import dev.sluice.core.MemoryManager;
import dev.sluice.io.Checksums;
import dev.sluice.io.Formats;
import dev.sluice.io.RemoteCache;
import dev.sluice.io.WriteOptions;
import dev.sluice.io.arrow.Arrow;
import dev.sluice.io.arrow.ArrowDataset;
import dev.sluice.io.arrow.ArrowOptions;
import dev.sluice.io.arrow.ArrowWriteOptions;
import dev.sluice.io.internal.RemoteFiles;
import dev.sluice.io.internal.hadoop.HadoopFileSystems;
import dev.sluice.io.npy.Npy;
import dev.sluice.io.npy.NpyDataset;
import dev.sluice.io.parquet.Parquet;
import dev.sluice.io.parquet.ParquetDataset;
import dev.sluice.io.parquet.ParquetOptions;
import dev.sluice.io.parquet.internal.ParquetWriting;
import dev.sluice.io.shards.ShardSet;
import dev.sluice.io.shards.Shards;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.hadoop.fs.CommonPathCapabilities;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.LocatedFileStatus;
import org.apache.hadoop.fs.RemoteIterator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every cacheable format written to a real S3 server (s3proxy over a local directory, started from
 * its own jar in a child JVM: its Jetty, Guava and Jackson would clash with Hadoop's on one class
 * path) through Hadoop's {@code s3a://} (hadoop-aws, AWS SDK v2, path-style access, fake
 * credentials), then read back with and without the node-local remote cache: the same rows as the
 * local files, and through a pipeline with shuffle, 4 shards, batches and a resumed checkpoint
 * every row once per epoch. Datasets get there as {@code generate} and {@code convert} put them
 * there ({@code RemoteFiles.publish}, the object-store commit without a rename): new, replaced with
 * {@code force}, and a write that fails midway, which leaves the old set as it was.
 */
class S3DatasetsTest {
  static final String BUCKET = "sluice-test";

  @TempDir
  static Path local;
  static Process s3proxy;

  @BeforeAll
  static void startS3() throws Exception {
    int port;
    try (ServerSocket s = new ServerSocket(0)) {
      port = s.getLocalPort();
    }
    Path store = local.resolve("s3");
    Files.createDirectories(store.resolve(BUCKET)); // the filesystem backend's containers are directories
    Path props = local.resolve("s3proxy.properties");
    Files.writeString(props, String.join("\n",
        "s3proxy.endpoint=http://127.0.0.1:" + port,
        "s3proxy.authorization=aws-v2-or-v4",
        "s3proxy.identity=test-identity",
        "s3proxy.credential=test-credential",
        "jclouds.provider=filesystem",
        "jclouds.filesystem.basedir=" + store, ""));
    Path jar = Path.of("target", "s3proxy", "s3proxy.jar").toAbsolutePath();
    s3proxy = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx256m",
        "-jar", jar.toString(), "--properties", props.toString())
        .redirectErrorStream(true).redirectOutput(local.resolve("s3proxy.log").toFile()).start();
    int p = port;
    await().atMost(Duration.ofSeconds(60)).until(() -> {
      if (!s3proxy.isAlive()) {
        throw new AssertionError("s3proxy exited: " + Files.readString(local.resolve("s3proxy.log")));
      }
      try (Socket c = new Socket()) {
        c.connect(new InetSocketAddress("127.0.0.1", p), 1000);
        return true;
      } catch (IOException e) {
        return false;
      }
    });
    RemoteFiles.configure(Map.of(
        "fs.s3a.endpoint", "http://127.0.0.1:" + port,
        "fs.s3a.endpoint.region", "us-east-1",
        "fs.s3a.path.style.access", "true",
        "fs.s3a.connection.ssl.enabled", "false",
        "fs.s3a.aws.credentials.provider", "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider",
        "fs.s3a.access.key", "test-identity",
        "fs.s3a.secret.key", "test-credential"));
  }

  @AfterAll
  static void stopS3() throws InterruptedException {
    if (s3proxy != null) {
      s3proxy.destroy();
      s3proxy.waitFor(30, TimeUnit.SECONDS);
    }
    MemoryManager.shared().checkNoOutstanding();
  }

  static URI s3(String key) {
    return URI.create("s3a://" + BUCKET + "/" + key);
  }

  @Test
  void shardsArrowAndParquetOnS3ReadLikeTheLocalFilesWithAndWithoutTheCache() throws IOException {
    int rows = RemoteCacheTest.ROWS;
    Path x = RemoteCacheTest.writeNpy(local.resolve("src/x.npy"), rows);
    Path set = local.resolve("set");
    Path arrow = local.resolve("x.arrow");
    Path parquet = local.resolve("pq/x.parquet");
    Files.createDirectories(parquet.getParent());
    try (NpyDataset src = Npy.open(x)) {
      Shards.write(src, set, WriteOptions.defaults().withNumShards(4));
      Arrow.write(src, arrow, ArrowWriteOptions.defaults());
      ParquetWriting.write(src, parquet, WriteOptions.defaults());
    }
    RemoteFiles.publish(set, s3("set"), false);
    RemoteFiles.publish(arrow, s3("x.arrow"), false);
    RemoteFiles.publish(parquet.getParent(), s3("pq"), false);
    assertEquals("shards", Formats.detectRemote(s3("set")));
    Path cacheDir = local.resolve("cache");
    RemoteCache cache = RemoteCache.at(cacheDir, 64L << 20);
    try (ShardSet l = Shards.open(set); ShardSet plain = Shards.open(s3("set")); ShardSet cached = Shards.open(s3("set"), cache)) {
      String sha = Checksums.sha256(l);
      assertEquals(sha, Checksums.sha256(plain));
      assertEquals(sha, Checksums.sha256(cached));
      RemoteCacheTest.everyRowOncePerEpoch(plain, rows);
      RemoteCacheTest.everyRowOncePerEpoch(cached, rows);
    }
    try (ArrowDataset l = Arrow.open(arrow); ArrowDataset plain = Arrow.open(s3("x.arrow"));
        ArrowDataset cached = Arrow.open(s3("x.arrow"), ArrowOptions.defaults(), cache)) {
      String sha = Checksums.sha256(l);
      assertEquals(sha, Checksums.sha256(plain));
      assertEquals(sha, Checksums.sha256(cached));
      RemoteCacheTest.everyRowOncePerEpoch(plain, rows);
      RemoteCacheTest.everyRowOncePerEpoch(cached, rows);
    }
    try (ParquetDataset l = Parquet.open(parquet); ParquetDataset plain = Parquet.open(s3("pq"), ParquetOptions.defaults());
        ParquetDataset cached = Parquet.open(s3("pq"), ParquetOptions.defaults(), cache)) {
      String sha = Checksums.sha256(l);
      assertEquals(sha, Checksums.sha256(plain));
      assertEquals(sha, Checksums.sha256(cached));
      RemoteCacheTest.everyRowOncePerEpoch(plain, rows);
      RemoteCacheTest.everyRowOncePerEpoch(cached, rows);
    }
    List<Path> copies;
    try (Stream<Path> s = Files.list(cacheDir)) {
      copies = s.filter(p -> !p.getFileName().toString().endsWith(".lock")).toList();
    }
    // 4 shards, the Arrow file and the Parquet file, complete
    assertThat(copies).hasSize(6).noneMatch(p -> p.toString().endsWith(".part"));
    assertThat(copies.stream().filter(p -> p.getFileName().toString().endsWith("-x.arrow")).findFirst().orElseThrow())
        .hasSameBinaryContentAs(arrow);
  }

  /** The names of the objects under {@code key}, relative to it, in name order. */
  static List<String> objects(String key) throws IOException {
    FileSystem fs = FileSystem.get(s3(key), HadoopFileSystems.conf());
    List<String> out = new ArrayList<>();
    RemoteIterator<LocatedFileStatus> it = fs.listFiles(new org.apache.hadoop.fs.Path(s3(key)), true);
    while (it.hasNext()) {
      out.add(it.next().getPath().getName());
    }
    out.sort(null);
    return out;
  }

  /** Writes {@code rows} rows of {@link RemoteCacheTest#writeNpy} in {@code format} to {@code out}, as the CLI does. */
  static Path writeLocally(String format, int rows, int shards, Path out) throws IOException {
    Path x = RemoteCacheTest.writeNpy(out.resolveSibling(out.getFileName() + "-src/x.npy"), rows);
    try (NpyDataset src = Npy.open(x)) {
      Formats.named(format).write(src, out, WriteOptions.defaults().withNumShards(shards));
    }
    return out;
  }

  static String sha(Path localSet) throws Exception {
    return closing(Formats.open(localSet));
  }

  static String sha(URI remote) throws Exception {
    return closing(Formats.openRemote(remote, null, List.of()));
  }

  private static String closing(dev.sluice.core.Dataset<dev.sluice.core.Example> d) throws Exception {
    try {
      return Checksums.sha256(d);
    } finally {
      if (d instanceof AutoCloseable c) {
        c.close();
      }
    }
  }

  @Test
  void aShardSetAndAFileWrittenToS3ReadBackWithTheChecksumsOfTheLocalWrite() throws Exception {
    assertThat(FileSystem.get(s3("w"), HadoopFileSystems.conf())
        .hasPathCapability(new org.apache.hadoop.fs.Path(s3("w")), CommonPathCapabilities.ABORTABLE_STREAM)).isTrue();
    Path set = writeLocally("shards", 300, 4, local.resolve("w/set"));
    Path arrow = writeLocally("arrow", 300, 1, local.resolve("w/x.arrow"));
    Path parquet = writeLocally("parquet", 300, 1, local.resolve("w/x.parquet"));
    RemoteFiles.publish(set, s3("w/set"), false);
    RemoteFiles.publish(arrow, s3("w/x.arrow"), false);
    RemoteFiles.publish(parquet, s3("w/x.parquet"), false);
    assertEquals(sha(set), sha(s3("w/set")));
    assertEquals(sha(arrow), sha(s3("w/x.arrow")));
    assertEquals(sha(parquet), sha(s3("w/x.parquet")));
    // the shards carry a name unique to the write; nothing temporary is left
    assertThat(objects("w/set")).hasSize(5).contains("metadata.json")
        .filteredOn(n -> !n.equals("metadata.json")).allMatch(n -> n.matches("shard-\\d{5}-[0-9a-f]+\\.shard"));
    assertThat(objects("w")).noneMatch(n -> n.contains(".tmp-"));
    assertThatThrownBy(() -> RemoteFiles.publish(set, s3("w/set"), false)).isInstanceOf(DatasetIOException.class)
        .hasMessageContaining("already exists");
    assertThatThrownBy(() -> RemoteFiles.publish(arrow, s3("w/x.arrow"), false)).isInstanceOf(DatasetIOException.class)
        .hasMessageContaining("already exists");
  }

  @Test
  void aForcedOverwriteOnS3ReadsBackTheNewDatasetAndRemovesTheOldShards() throws Exception {
    Path before = writeLocally("shards", 200, 4, local.resolve("o/before"));
    Path after = writeLocally("shards", 150, 3, local.resolve("o/after"));
    Path arrowBefore = writeLocally("arrow", 200, 1, local.resolve("o/before.arrow"));
    Path arrowAfter = writeLocally("arrow", 150, 1, local.resolve("o/after.arrow"));
    RemoteFiles.publish(before, s3("o/set"), false);
    RemoteFiles.publish(arrowBefore, s3("o/x.arrow"), false);
    List<String> old = objects("o/set");
    RemoteFiles.publish(after, s3("o/set"), true);
    RemoteFiles.publish(arrowAfter, s3("o/x.arrow"), true);
    assertEquals(sha(after), sha(s3("o/set")));
    assertThat(sha(after)).isNotEqualTo(sha(before));
    assertEquals(sha(arrowAfter), sha(s3("o/x.arrow")));
    List<String> now = objects("o/set");
    assertThat(now).hasSize(4).contains("metadata.json");
    assertThat(now).filteredOn(n -> !n.equals("metadata.json")).doesNotContainAnyElementsOf(old);
  }

  @Test
  void aWriteThatFailsMidwayLeavesTheOldSetReadableAndNothingOfItsOwn() throws Exception {
    Path before = writeLocally("shards", 200, 4, local.resolve("f/before"));
    RemoteFiles.publish(before, s3("f/set"), false);
    List<String> old = objects("f/set");
    Path after = writeLocally("shards", 160, 4, local.resolve("f/after"));
    // the third shard cannot be read: its upload starts and fails after the first two completed
    Path third = after.resolve("shard-00002.shard");
    Files.delete(third);
    Files.createDirectory(third);
    assertThatThrownBy(() -> RemoteFiles.publish(after, s3("f/set"), true)).isInstanceOf(DatasetIOException.class)
        .hasMessageContaining("s3a://" + BUCKET + "/f/set").hasMessageContaining("write failed");
    assertEquals(old, objects("f/set"), "the old set's files and nothing else");
    assertEquals(sha(before), sha(s3("f/set")));
  }

  @Test
  void aForcedWriteReplacesADamagedSetAndTheFilesBesideIt() throws Exception {
    FileSystem fs = FileSystem.get(s3("d"), HadoopFileSystems.conf());
    for (String name : List.of("metadata.json", "stray.bin")) {
      try (var out = fs.create(new org.apache.hadoop.fs.Path(s3("d/set/" + name)), true)) {
        out.write("{\"format\": \"sluice-shards\", \"version\": ".getBytes(java.nio.charset.StandardCharsets.UTF_8));
      }
    }
    Path set = writeLocally("shards", 120, 2, local.resolve("d/set"));
    RemoteFiles.publish(set, s3("d/set"), true);
    assertEquals(sha(set), sha(s3("d/set")));
    assertThat(objects("d/set")).hasSize(3).contains("metadata.json").doesNotContain("stray.bin");
  }

  @Test
  void aFilePublishedToS3ReadsBack() throws IOException {
    Path x = RemoteCacheTest.writeNpy(local.resolve("pub/x.npy"), 100);
    URI to = s3("published/x.npy");
    RemoteFiles.publish(x, to, false);
    try (NpyDataset l = Npy.open(x); NpyDataset r = Npy.open(to)) {
      assertEquals(Checksums.sha256(l), Checksums.sha256(r));
    }
  }
}
