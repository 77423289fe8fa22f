package dev.sluice.io.remote;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import dev.sluice.core.Batch;
import dev.sluice.core.Dataset;
import dev.sluice.core.DatasetFormatException;
import dev.sluice.core.DatasetIOException;
import dev.sluice.core.Example;
import dev.sluice.core.IoMode;
import dev.sluice.core.MemoryManager;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.PipelineState;
import dev.sluice.core.Positioned;
import dev.sluice.core.UnsupportedFormatException;
import dev.sluice.core.internal.shardfile.ShardFile;
import dev.sluice.io.Checksums;
import dev.sluice.io.Formats;
import dev.sluice.io.RemoteCache;
import dev.sluice.io.WriteOptions;
import dev.sluice.io.arrow.Arrow;
import dev.sluice.io.arrow.ArrowWriteOptions;
import dev.sluice.io.directory.Directory;
import dev.sluice.io.directory.DirectoryDataset;
import dev.sluice.io.directory.SampleFiles;
import dev.sluice.io.hdf5.Hdf5;
import dev.sluice.io.internal.RemoteFiles;
import dev.sluice.io.npy.Npy;
import dev.sluice.io.npy.NpyDataset;
import dev.sluice.io.npy.NpyFiles;
import dev.sluice.io.npy.NpyStack;
import dev.sluice.io.parquet.Parquet;
import dev.sluice.io.parquet.ParquetOptions;
import dev.sluice.io.parquet.internal.ParquetWriting;
import dev.sluice.io.shards.ShardInfo;
import dev.sluice.io.shards.ShardSet;
import dev.sluice.io.shards.Shards;
import dev.sluice.operators.EqualLength;
import io.jhdf.HdfFile;
import io.jhdf.WritableHdfFile;
import dev.sluice.operators.Pipeline;
import java.io.IOException;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.hdfs.MiniDFSCluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every format read from a real HDFS (one {@link MiniDFSCluster} for the class): the same bytes as
 * the local files, and through a pipeline with shuffle, 4 shards, batches and a checkpoint resumed
 * half-way, every row exactly once per epoch.
 */
class HdfsDatasetsTest {
  static final int ROWS = 203;
  static final int WIDTH = 4;

  @TempDir
  static Path local;
  static MiniDFSCluster cluster;
  static FileSystem hdfs;
  static URI root;

  @BeforeAll
  static void startHdfs() throws IOException {
    Configuration conf = new Configuration();
    conf.set(MiniDFSCluster.HDFS_MINIDFS_BASEDIR, local.resolve("dfs").toString());
    cluster = new MiniDFSCluster.Builder(conf).numDataNodes(1).build();
    cluster.waitActive();
    hdfs = cluster.getFileSystem();
    root = URI.create(cluster.getURI() + "/data/");
  }

  @AfterAll
  static void stopHdfs() {
    if (cluster != null) {
      cluster.shutdown(true);
    }
    MemoryManager.shared().checkNoOutstanding();
  }

  /** A C-order int64 array of {@code ROWS} rows, row i = [i*WIDTH + k] for k in [0, WIDTH). */
  static Path writeNpy(Path file, long scale) throws IOException {
    return NpyFiles.int64Matrix(file, ROWS, WIDTH, i -> i * scale);
  }

  /** A C-order int64 array of {@code rows} rows, row i = [(first + i)*WIDTH + k] for k in [0, WIDTH). */
  static Path writeNpyRows(Path file, long first, int rows) throws IOException {
    return NpyFiles.int64Matrix(file, rows, WIDTH, i -> first * WIDTH + i);
  }

  /** Uploads every file of local directory {@code dir} into remote directory {@code name}. */
  static URI uploadDir(Path dir, String name) throws IOException {
    hdfs.mkdirs(new org.apache.hadoop.fs.Path(root.resolve(name + "/")));
    try (var files = Files.list(dir)) {
      for (Path f : files.toList()) {
        upload(f, name + "/" + f.getFileName());
      }
    }
    return root.resolve(name + "/");
  }

  static URI upload(Path file, String name) throws IOException {
    URI to = root.resolve(name);
    hdfs.copyFromLocalFile(new org.apache.hadoop.fs.Path(file.toUri()), new org.apache.hadoop.fs.Path(to));
    return to;
  }

  /** The rows (by their first value) each of 4 ranks reads in one epoch, checkpointed half-way and resumed. */
  static void everyRowOncePerEpoch(Dataset<Example> ds, String column, long scale) {
    everyRowOncePerEpoch(ds, column, scale, ROWS);
  }

  /** {@link #everyRowOncePerEpoch(Dataset, String, long)} of a dataset of {@code rows} rows. */
  static void everyRowOncePerEpoch(Dataset<Example> ds, String column, long scale, int rows) {
    List<Long> seen = new ArrayList<>();
    for (int rank = 0; rank < 4; rank++) {
      Pipeline<Batch> p = Pipeline.from(ds).shuffle(64, 11, true).shard(4, rank, EqualLength.UNEVEN).batch(8);
      PipelineContext ctx = new PipelineContext(11, 0, rank, 4, 0);
      List<Positioned<Batch>> firstHalf = p.withState(ctx).take(3).collectList().block();
      PipelineState state = firstHalf.get(firstHalf.size() - 1).state();
      for (Positioned<Batch> b : firstHalf) {
        collect(b.element(), column, scale, seen);
      }
      p.resume(state).doOnNext(b -> collect(b, column, scale, seen)).blockLast();
    }
    assertThat(seen).hasSize(rows).doesNotHaveDuplicates();
    assertThat(seen).allSatisfy(r -> assertThat(r).isBetween(0L, rows - 1L));
  }

  /** Opens a dataset, local or remote. */
  @FunctionalInterface
  interface Opener<D> {
    D open() throws Exception;
  }

  /** Assertions on a dataset's local and remote copy while both are open. */
  @FunctionalInterface
  interface Checks<L, R> {
    void check(L local, R remote) throws Exception;
  }

  /**
   * Opens a dataset's local and remote copy, runs {@code also} on them, checks that both have the
   * same checksum and that the remote one, through a pipeline, gives each of its {@code rows} rows
   * once per epoch ({@link #everyRowOncePerEpoch(Dataset, String, long, int)}); closes both.
   */
  static <L extends Dataset<Example> & AutoCloseable, R extends Dataset<Example> & AutoCloseable> void readsLikeTheLocal(
      Opener<L> local, Opener<R> remote, String column, long scale, int rows, Checks<L, R> also) throws Exception {
    try (L l = local.open(); R r = remote.open()) {
      also.check(l, r);
      assertEquals(Checksums.sha256(l), Checksums.sha256(r));
      everyRowOncePerEpoch(r, column, scale, rows);
    }
  }

  /** {@link #readsLikeTheLocal(Opener, Opener, String, long, int, Checks)} with no other assertion. */
  static <L extends Dataset<Example> & AutoCloseable, R extends Dataset<Example> & AutoCloseable> void readsLikeTheLocal(
      Opener<L> local, Opener<R> remote, String column, long scale, int rows) throws Exception {
    readsLikeTheLocal(local, remote, column, scale, rows, (l, r) -> { });
  }

  static void collect(Batch b, String column, long scale, List<Long> seen) {
    try (b) {
      for (int r = 0; r < b.size(); r++) {
        ByteBuffer data = b.copyRow(r).tensor(column).data().order(ByteOrder.LITTLE_ENDIAN);
        seen.add(data.getLong(0) / scale / WIDTH);
      }
    }
  }

  @Test
  void npyFileAndAlignedDirectoryReadLikeTheLocalFiles() throws Exception {
    Path x = writeNpy(local.resolve("aligned/x.npy"), 1);
    writeNpy(local.resolve("aligned/y.npy"), 3);
    URI xr = upload(x, "x.npy");
    hdfs.mkdirs(new org.apache.hadoop.fs.Path(root.resolve("aligned/")));
    upload(x, "aligned/x.npy");
    upload(local.resolve("aligned/y.npy"), "aligned/y.npy");
    readsLikeTheLocal(() -> Npy.open(x), () -> Npy.open(xr), "x", 1, ROWS, (l, r) -> {
      assertNull(r.path());
      assertEquals(xr.toString(), r.location());
    });
    readsLikeTheLocal(() -> Npy.open(local.resolve("aligned")), () -> Npy.open(root.resolve("aligned/")), "y", 3, ROWS,
        (l, r) -> assertEquals(l.schema(), r.schema()));
    assertThatThrownBy(() -> Npy.open(xr, IoMode.MMAP)).isInstanceOf(UnsupportedFormatException.class)
        .hasMessageContaining(xr.toString()).hasMessageContaining("cannot be memory-mapped");
    // a file: URI is the local path, mapped as before
    try (NpyDataset l = Npy.open(x.toUri())) {
      assertEquals(x, l.path());
    }
  }

  @Test
  void npyStackReadsLikeTheLocalStack() throws Exception {
    Path stack = local.resolve("stack");
    writeNpyRows(stack.resolve("0.npy"), 0, 70);
    writeNpyRows(stack.resolve("1.npy"), 70, 70);
    writeNpyRows(stack.resolve("2.npy"), 140, ROWS - 140);
    URI remote = uploadDir(stack, "stack");
    Dataset<Example> opened = Formats.openRemote(remote, null, List.of());
    assertThat(opened).isInstanceOf(NpyStack.class);
    readsLikeTheLocal(() -> Npy.open(stack), () -> (NpyStack) opened, "stack", 1, ROWS, (l, r) -> {
      assertEquals(3, r.chunkCount());
      assertNull(r.path());
      assertEquals(remote.toString(), r.location());
      assertEquals(l.schema(), r.schema());
    });
    Files.writeString(stack.resolve("metadata.json"), "{\"dataset_len\": " + ROWS + ", \"num_shards\": 3}");
    URI withMeta = uploadDir(stack, "stack-meta");
    try (NpyStack l = Npy.openStack(stack); NpyStack r = Npy.openStack(withMeta)) {
      assertEquals(ROWS, r.size());
      assertEquals(Checksums.sha256(l), Checksums.sha256(r));
      assertThat(r.fingerprint()).contains(withMeta + "0.npy").contains(withMeta + "metadata.json");
    }
  }

  @Test
  void aRemoteNpyStackWithAMissingOrBadChunkIsANamedError() throws IOException {
    Path gap = local.resolve("gap");
    writeNpyRows(gap.resolve("0.npy"), 0, 10);
    writeNpyRows(gap.resolve("2.npy"), 10, 10);
    URI gr = uploadDir(gap, "gap");
    assertThatThrownBy(() -> Npy.open(gr)).isInstanceOf(DatasetFormatException.class)
        .hasMessageContaining(gr + "1.npy").hasMessageContaining("missing chunk 1");
    Path bad = local.resolve("badstack");
    writeNpyRows(bad.resolve("0.npy"), 0, 10);
    Files.write(bad.resolve("1.npy"), "not an npy file at all".getBytes(StandardCharsets.US_ASCII));
    URI br = uploadDir(bad, "badstack");
    assertThatThrownBy(() -> Npy.openStack(br)).isInstanceOf(DatasetFormatException.class)
        .hasMessageContaining(br + "1.npy");
    Files.writeString(bad.resolve("1.npy"), "");
    writeNpyRows(bad.resolve("1.npy"), 10, 10);
    Files.writeString(bad.resolve("metadata.json"), "{\"num_shards\": 5}");
    URI mr = uploadDir(bad, "badmeta");
    assertThatThrownBy(() -> Npy.openStack(mr)).isInstanceOf(DatasetFormatException.class)
        .hasMessageContaining(mr + "metadata.json").hasMessageContaining("num_shards");
    URI none = root.resolve("nostack/");
    assertThatThrownBy(() -> Npy.openStack(none)).isInstanceOf(DatasetIOException.class)
        .hasMessageContaining(none.toString().replaceAll("/$", "")).hasMessageContaining("no such file");
  }

  @Test
  void sampleDirectoriesReadLikeTheLocalOnes() throws Exception {
    Path npy = local.resolve("samples-npy");
    Path raw = local.resolve("samples-raw");
    Files.createDirectories(raw);
    java.util.Random random = new java.util.Random(7);
    int samples = 48; // each sample is one remote open: a few dozen keep the test quick
    for (int i = 0; i < samples; i++) {
      String name = String.format("s%04d", i);
      writeNpyRows(npy.resolve(name + ".npy"), i, 1);
      byte[] bytes = new byte[8 + random.nextInt(40)];
      random.nextBytes(bytes);
      ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN).putLong(0, (long) i * WIDTH);
      Files.write(raw.resolve(name + ".bin"), bytes);
    }
    Files.writeString(raw.resolve(".hidden"), "skipped");
    URI npyUri = uploadDir(npy, "samples-npy");
    URI rawUri = uploadDir(raw, "samples-raw");
    Dataset<Example> opened = Formats.openRemote(npyUri, "directory", List.of());
    assertThat(opened).isInstanceOf(DirectoryDataset.class);
    readsLikeTheLocal(() -> Directory.open(npy), () -> (DirectoryDataset) opened, Directory.NPY_FIELD, 1, samples,
        (l, r) -> {
          assertNull(r.path());
          assertEquals(npyUri.toString(), r.location());
          assertEquals(SampleFiles.NPY, r.content());
          assertEquals(l.schema(), r.schema());
          assertEquals(l.files().stream().map(f -> f.getFileName().toString()).toList(),
              r.uris().stream().map(RemoteFiles::name).toList());
        });
    readsLikeTheLocal(() -> Directory.open(raw), () -> Directory.open(rawUri), Directory.RAW_FIELD, 1, samples,
        (l, r) -> {
          assertEquals(SampleFiles.RAW, r.content());
          assertEquals(samples, r.size());
        });
  }

  /** Bytes the HDFS clients of this JVM have read so far. */
  @SuppressWarnings("deprecation")
  static long hdfsBytesRead() {
    return FileSystem.getAllStatistics().stream().filter(st -> "hdfs".equals(st.getScheme()))
        .mapToLong(FileSystem.Statistics::getBytesRead).sum();
  }

  /** The cache's complete copies and their file keys (a copy downloaded again is a new file). */
  static java.util.Map<String, Object> cacheCopies(Path cacheDir) throws IOException {
    java.util.Map<String, Object> out = new java.util.TreeMap<>();
    try (var s = Files.list(cacheDir)) {
      for (Path p : s.filter(p -> !p.getFileName().toString().endsWith(".lock")).toList()) {
        out.put(p.getFileName().toString(),
            Files.readAttributes(p, java.nio.file.attribute.BasicFileAttributes.class).fileKey());
      }
    }
    return out;
  }

  @Test
  void npyStacksAndSampleDirectoriesThroughTheRemoteCacheAreDownloadedOnce() throws Exception {
    Path stack = local.resolve("cached-stack");
    writeNpyRows(stack.resolve("0.npy"), 0, 70);
    writeNpyRows(stack.resolve("1.npy"), 70, 70);
    writeNpyRows(stack.resolve("2.npy"), 140, ROWS - 140);
    URI stackUri = uploadDir(stack, "cached-stack");
    Path samples = local.resolve("cached-samples");
    int count = 24;
    for (int i = 0; i < count; i++) {
      writeNpyRows(samples.resolve(String.format("s%04d.npy", i)), i, 1);
    }
    URI samplesUri = uploadDir(samples, "cached-samples");
    Path cacheDir = local.resolve("remote-cache");
    RemoteCache cache = RemoteCache.at(cacheDir, 64L << 20);
    java.util.Map<String, Object> afterFirst = null;
    for (int pass = 0; pass < 2; pass++) {
      long before = hdfsBytesRead();
      Dataset<Example> opened = Formats.openRemote(stackUri, null, List.of(), cache);
      assertThat(opened).isInstanceOf(NpyStack.class);
      readsLikeTheLocal(() -> Npy.open(stack), () -> (NpyStack) opened, "cached-stack", 1, ROWS,
          (l, r) -> assertEquals(l.schema(), r.schema()));
      readsLikeTheLocal(() -> Directory.open(samples),
          () -> (DirectoryDataset) Formats.openRemote(samplesUri, "directory", List.of(), cache), Directory.NPY_FIELD, 1,
          count, (l, r) -> assertEquals(l.schema(), r.schema()));
      long read = hdfsBytesRead() - before;
      if (pass == 0) {
        assertThat(read).as("the first pass downloads every file").isGreaterThanOrEqualTo(
            Files.size(stack.resolve("0.npy")) + (long) count * Files.size(samples.resolve("s0000.npy")));
        afterFirst = cacheCopies(cacheDir);
        assertThat(afterFirst).hasSize(3 + count);
        assertThat(afterFirst.keySet()).noneMatch(n -> n.endsWith(".part"));
      } else {
        // the stack's three headers (128 bytes each, their 12-byte prefix read first) and no data byte
        assertThat(read).as("remote bytes read by the second pass").isLessThanOrEqualTo(3 * (128 + 12));
        assertEquals(afterFirst, cacheCopies(cacheDir), "no copy downloaded again");
      }
    }
    MemoryManager.shared().checkNoOutstanding();
  }

  @Test
  void aRemoteSampleDirectoryWithAMissingOrBadFileIsANamedError() throws IOException {
    Path dir = local.resolve("samples-bad");
    writeNpyRows(dir.resolve("a.npy"), 0, 1);
    writeNpyRows(dir.resolve("b.npy"), 1, 1);
    URI good = uploadDir(dir, "samples-gone");
    try (DirectoryDataset r = Directory.open(good)) {
      hdfs.delete(new org.apache.hadoop.fs.Path(good.resolve("b.npy")), false);
      assertThatThrownBy(() -> Checksums.sha256(r)).isInstanceOf(DatasetIOException.class)
          .hasMessageContaining(good + "b.npy").hasMessageContaining("no such file");
    }
    Files.write(dir.resolve("b.npy"), "not an npy file".getBytes(StandardCharsets.US_ASCII));
    URI bad = uploadDir(dir, "samples-bad");
    try (DirectoryDataset r = Directory.open(bad)) { // the schema is the first file's: b.npy fails when read
      assertThatThrownBy(() -> Checksums.sha256(r)).isInstanceOf(DatasetFormatException.class)
          .hasMessageContaining(bad + "b.npy");
    }
    URI none = root.resolve("no-samples/");
    assertThatThrownBy(() -> Directory.open(none)).isInstanceOf(DatasetIOException.class)
        .hasMessageContaining("no-samples").hasMessageContaining("no such file");
  }

  @Test
  void arrowAndParquetReadLikeTheLocalFiles() throws Exception {
    Path x = writeNpy(local.resolve("src/x.npy"), 1);
    Path arrow = local.resolve("x.arrow");
    Path parquet = local.resolve("x.parquet");
    try (NpyDataset src = Npy.open(x)) {
      Arrow.write(src, arrow, ArrowWriteOptions.defaults());
      ParquetWriting.write(src, parquet, WriteOptions.defaults());
    }
    URI ar = upload(arrow, "x.arrow");
    URI pr = upload(parquet, "x.parquet");
    readsLikeTheLocal(() -> Arrow.open(arrow), () -> Arrow.open(ar), "x", 1, ROWS, (l, r) -> assertNull(r.path()));
    readsLikeTheLocal(() -> Parquet.open(parquet), () -> Parquet.open(pr, ParquetOptions.defaults()), "x", 1, ROWS);
  }

  @Test
  void shardSetsReadLikeTheLocalOnesWithTheirChecksumsChecked() throws Exception {
    Path x = writeNpy(local.resolve("forshards/x.npy"), 1);
    Path set = local.resolve("set3");
    try (NpyDataset src = Npy.open(x)) {
      Shards.write(src, set, WriteOptions.defaults().withNumShards(3));
    }
    URI sr = root.resolve("set3");
    hdfs.copyFromLocalFile(new org.apache.hadoop.fs.Path(set.toUri()), new org.apache.hadoop.fs.Path(sr));
    assertEquals("shards", Formats.detectRemote(sr));
    readsLikeTheLocal(() -> Shards.open(set), () -> Shards.open(sr), "x", 1, ROWS, (l, r) -> {
      assertEquals(l.schema(), r.schema());
      assertEquals(l.shards(), r.shards());
      assertThat(r.verify().files()).isEqualTo(3);
      assertThat(r.fingerprint()).contains(sr.toString());
    });
    // a shard whose bytes differ from its block table is refused before any row is delivered
    ShardInfo first;
    try (ShardSet l = Shards.open(set)) {
      first = l.shards().get(0);
    }
    Path shard = set.resolve(first.file());
    long at;
    try (FileChannel ch = FileChannel.open(shard)) {
      at = ShardFile.read(shard.toString(), ch, ch.size()).blocks().get(0).offset();
    }
    byte[] bytes = Files.readAllBytes(shard);
    bytes[(int) at + 1] ^= 0x40;
    Files.write(shard, bytes);
    URI bad = root.resolve("bad3");
    hdfs.copyFromLocalFile(new org.apache.hadoop.fs.Path(set.toUri()), new org.apache.hadoop.fs.Path(bad));
    try (ShardSet r = Shards.open(bad)) {
      assertThatThrownBy(() -> r.get(0)).isInstanceOf(DatasetFormatException.class)
          .hasMessageContaining(bad + "/" + first.file()).hasMessageContaining("block 0").hasMessageContaining("checksum mismatch");
    }
    assertThatThrownBy(() -> Shards.open(root.resolve("noset"))).isInstanceOf(DatasetIOException.class)
        .hasMessageContaining("noset/metadata.json").hasMessageContaining("no such file");
  }

  @Test
  void hdf5IsReadFromATemporaryCopyDeletedOnClose() throws Exception {
    Path h5 = local.resolve("x.h5");
    long[][] values = new long[ROWS][WIDTH];
    for (int i = 0; i < ROWS; i++) {
      for (int k = 0; k < WIDTH; k++) {
        values[i][k] = (long) i * WIDTH + k;
      }
    }
    try (WritableHdfFile w = HdfFile.write(h5)) {
      w.putDataset("x", values);
    }
    URI hr = upload(h5, "x.h5");
    assertEquals("hdf5", Formats.detectRemote(hr));
    Path tmp = Path.of(System.getProperty("java.io.tmpdir"));
    List<Path> before = copies(tmp);
    readsLikeTheLocal(() -> Hdf5.open(h5), () -> Hdf5.open(hr, List.of()), "x", 1, ROWS, (l, r) -> {
      assertThat(copies(tmp)).hasSize(before.size() + 1);
      assertEquals(l.schema(), r.schema());
      assertThat(r.fingerprint()).contains(hr.toString());
    });
    assertThat(copies(tmp)).containsExactlyInAnyOrderElementsOf(before);
    URI none = root.resolve("none.h5");
    assertThatThrownBy(() -> Hdf5.open(none, List.of())).isInstanceOf(DatasetIOException.class)
        .hasMessageContaining(none.toString());
    assertThat(copies(tmp)).containsExactlyInAnyOrderElementsOf(before);
  }

  static List<Path> copies(Path dir) throws IOException {
    try (var s = Files.list(dir)) {
      return s.filter(p -> p.getFileName().toString().startsWith("sluice-hdf5-")).toList();
    }
  }

  @Test
  void aMissingRemoteFileAndATruncatedOneAreNamedErrors() throws IOException {
    URI none = root.resolve("none.npy");
    assertThatThrownBy(() -> Npy.open(none)).isInstanceOf(DatasetIOException.class)
        .hasMessageContaining(none.toString()).hasMessageContaining("no such file");
    Path x = writeNpy(local.resolve("cut/x.npy"), 1);
    byte[] all = Files.readAllBytes(x);
    Path cut = local.resolve("cut/cut.npy");
    Files.write(cut, java.util.Arrays.copyOf(all, all.length - 100));
    URI cr = upload(cut, "cut.npy");
    assertThatThrownBy(() -> Npy.open(cr)).isInstanceOf(DatasetFormatException.class)
        .hasMessageContaining(cr.toString()).hasMessageContaining("truncated");
  }

  @Test
  void aPublishedDatasetAppearsWholeUnderItsNameWithNoTemporaryLeft() throws IOException {
    Path set = local.resolve("set");
    Files.createDirectories(set.resolve("part"));
    Files.writeString(set.resolve("metadata.json"), "{}");
    Files.writeString(set.resolve("part/shard-0.bin"), "rows");
    writeNpy(set.resolve("a.npy"), 1);
    URI to = root.resolve("published");
    RemoteFiles.publish(set, to, false);
    assertEquals("{}", read(to.resolve("published/metadata.json")));
    assertEquals("rows", read(to.resolve("published/part/shard-0.bin")));
    assertThat(hdfs.listStatus(new org.apache.hadoop.fs.Path(root))).noneMatch(s -> s.getPath().getName().contains(".tmp-"));
    assertThatThrownBy(() -> RemoteFiles.publish(set, to, false)).isInstanceOf(DatasetIOException.class)
        .hasMessageContaining(to.toString()).hasMessageContaining("already exists");
    Files.writeString(set.resolve("metadata.json"), "{\"v\": 2}");
    RemoteFiles.publish(set, to, true);
    assertEquals("{\"v\": 2}", read(to.resolve("published/metadata.json")));
    try (NpyDataset r = Npy.open(to.resolve("published/a.npy"))) {
      assertEquals(ROWS, r.size());
    }
  }

  static String read(URI file) throws IOException {
    try (var in = hdfs.open(new org.apache.hadoop.fs.Path(file))) {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
  }
}
