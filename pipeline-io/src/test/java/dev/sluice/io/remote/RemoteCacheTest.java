package dev.sluice.io.remote;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.sluice.core.Batch;
import dev.sluice.core.Dataset;
import dev.sluice.core.DatasetFormatException;
import dev.sluice.core.DatasetIOException;
import dev.sluice.core.Example;
import dev.sluice.core.MemoryManager;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.PipelineState;
import dev.sluice.core.Positioned;
import dev.sluice.io.Checksums;
import dev.sluice.io.Formats;
import dev.sluice.io.RemoteCache;
import dev.sluice.io.WriteOptions;
import dev.sluice.io.arrow.Arrow;
import dev.sluice.io.arrow.ArrowDataset;
import dev.sluice.io.arrow.ArrowOptions;
import dev.sluice.io.arrow.ArrowWriteOptions;
import dev.sluice.io.internal.RemoteFiles;
import dev.sluice.io.npy.Npy;
import dev.sluice.io.npy.NpyDataset;
import dev.sluice.io.parquet.Parquet;
import dev.sluice.io.parquet.ParquetDataset;
import dev.sluice.io.parquet.ParquetOptions;
import dev.sluice.io.parquet.internal.ParquetWriting;
import dev.sluice.io.shards.ShardInfo;
import dev.sluice.io.shards.ShardSet;
import dev.sluice.io.shards.Shards;
import dev.sluice.operators.EqualLength;
import dev.sluice.operators.Pipeline;
import java.io.IOException;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Remote datasets read through the node-local file cache, in one process, over the test file
 * system {@code counted://} (local files whose reads are counted): the same rows as the local
 * files, one download per file, downloads ahead of the reader, the budget, and copies that are
 * never served when incomplete or damaged.
 */
class RemoteCacheTest {
  static final int ROWS = 4000;
  static final int WIDTH = 4;

  @TempDir
  Path dir;
  Path cacheDir;

  @BeforeAll
  static void register() {
    RemoteFiles.configure(CountedFileSystem.settings());
  }

  @BeforeEach
  void reset() {
    cacheDir = dir.resolve("cache");
    CountedFileSystem.BYTES.clear();
    CountedFileSystem.FULL_READS.clear();
  }

  @AfterEach
  void noLeaks() {
    MemoryManager.shared().checkNoOutstanding();
  }

  /** A C-order int64 array of {@code rows} rows, row i = [i*WIDTH + k] for k in [0, WIDTH). */
  static Path writeNpy(Path file, int rows) throws IOException {
    String dict = "{'descr': '<i8', 'fortran_order': False, 'shape': (" + rows + ", " + WIDTH + "), }";
    int pad = 64 - (10 + dict.length() + 1) % 64;
    String header = dict + " ".repeat(pad == 64 ? 0 : pad) + "\n";
    ByteBuffer b = ByteBuffer.allocate(10 + header.length() + rows * WIDTH * 8).order(ByteOrder.LITTLE_ENDIAN);
    b.put(new byte[] {(byte) 0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0}).putShort((short) header.length());
    b.put(header.getBytes(StandardCharsets.US_ASCII));
    for (long i = 0; i < (long) rows * WIDTH; i++) {
      b.putLong(i);
    }
    Files.createDirectories(file.getParent());
    Files.write(file, b.array());
    return file;
  }

  /** A shard set of {@code shards} shards of the rows {@link #writeNpy} makes. */
  static Path writeShards(Path set, int shards) throws IOException {
    Path x = writeNpy(set.resolveSibling(set.getFileName() + "-src/x.npy"), ROWS);
    try (NpyDataset src = Npy.open(x)) {
      Shards.write(src, set, WriteOptions.defaults().withNumShards(shards));
    }
    return set;
  }

  /** Every row once per epoch over 4 ranks, with shuffle, batches and a checkpoint resumed half-way. */
  static void everyRowOncePerEpoch(Dataset<Example> ds, long rows) {
    List<Long> seen = new ArrayList<>();
    for (int rank = 0; rank < 4; rank++) {
      Pipeline<Batch> p = Pipeline.from(ds).shuffle(256, 11, true).shard(4, rank, EqualLength.UNEVEN).batch(64);
      PipelineContext ctx = new PipelineContext(11, 0, rank, 4, 0);
      List<Positioned<Batch>> firstHalf = p.withState(ctx).take(4).collectList().block();
      PipelineState state = firstHalf.get(firstHalf.size() - 1).state();
      for (Positioned<Batch> b : firstHalf) {
        collect(b.element(), seen);
      }
      p.resume(state).doOnNext(b -> collect(b, seen)).blockLast();
    }
    assertThat(seen).hasSize((int) rows).doesNotHaveDuplicates();
    assertThat(seen).allSatisfy(r -> assertThat(r).isBetween(0L, rows - 1));
  }

  static void collect(Batch b, List<Long> seen) {
    try (b) {
      for (int r = 0; r < b.size(); r++) {
        ByteBuffer data = b.copyRow(r).tensor("x").data().order(ByteOrder.LITTLE_ENDIAN);
        seen.add(data.getLong(0) / WIDTH);
      }
    }
  }

  List<Path> copies() throws IOException {
    try (Stream<Path> s = Files.list(cacheDir)) {
      return s.filter(p -> !p.getFileName().toString().endsWith(".lock")).sorted().toList();
    }
  }

  Path copyOf(String remoteName) throws IOException {
    return copies().stream().filter(p -> p.getFileName().toString().endsWith("-" + remoteName)).findFirst()
        .orElseThrow(() -> new AssertionError("no copy of " + remoteName + " in " + cacheDir));
  }

  static long fullReads(Path file) {
    var n = CountedFileSystem.FULL_READS.get(file.toAbsolutePath().toString());
    return n == null ? 0 : n.get();
  }

  @Test
  void everyFormatReadsLikeItsLocalFilesAndIsDownloadedOnce() throws IOException {
    Path set = writeShards(dir.resolve("remote/set"), 4);
    Path x = writeNpy(dir.resolve("remote/src/x.npy"), ROWS);
    Path arrow = dir.resolve("remote/x.arrow");
    Path parquet = dir.resolve("remote/pq/x.parquet");
    Files.createDirectories(parquet.getParent());
    try (NpyDataset src = Npy.open(x)) {
      Arrow.write(src, arrow, ArrowWriteOptions.defaults());
      ParquetWriting.write(src, parquet, WriteOptions.defaults());
    }
    RemoteCache cache = RemoteCache.at(cacheDir, 64L << 20);
    for (int pass = 0; pass < 2; pass++) {
      try (ShardSet l = Shards.open(set); ShardSet r = Shards.open(CountedFileSystem.uri(set), cache)) {
        assertEquals(Checksums.sha256(l), Checksums.sha256(r));
        assertEquals(l.shards(), r.shards());
        everyRowOncePerEpoch(r, ROWS);
      }
      try (ArrowDataset l = Arrow.open(arrow);
          ArrowDataset r = Arrow.open(CountedFileSystem.uri(arrow), ArrowOptions.defaults(), cache)) {
        assertEquals(Checksums.sha256(l), Checksums.sha256(r));
        everyRowOncePerEpoch(r, ROWS);
      }
      try (ParquetDataset l = Parquet.open(parquet);
          ParquetDataset r = Parquet.open(CountedFileSystem.uri(parquet.getParent()), ParquetOptions.defaults(), cache)) {
        assertEquals(Checksums.sha256(l), Checksums.sha256(r));
        everyRowOncePerEpoch(r, ROWS);
      }
    }
    try (ShardSet l = Shards.open(set)) {
      for (ShardInfo s : l.shards()) {
        assertEquals(1, fullReads(set.resolve(s.file())), s.file() + " downloaded once in two passes");
        assertThat(copyOf(s.file())).hasSameBinaryContentAs(set.resolve(s.file()));
      }
    }
    assertEquals(1, fullReads(arrow));
    assertEquals(1, fullReads(parquet));
    assertThat(copyOf("x.arrow")).hasSameBinaryContentAs(arrow);
    assertThat(copyOf("x.parquet")).hasSameBinaryContentAs(parquet);
    assertThat(copies()).noneMatch(p -> p.toString().endsWith(".part"));
    // through Formats.openRemote, as the command line opens it
    try (ShardSet l = Shards.open(set);
        ShardSet r = (ShardSet) Formats.openRemote(CountedFileSystem.uri(set), null, List.of(), cache)) {
      assertEquals(Checksums.sha256(l), Checksums.sha256(r));
    }
  }

  @Test
  void theFirstReadOfAShardDownloadsTheNextOnesInTheBackground() throws IOException {
    Path set = writeShards(dir.resolve("remote/set"), 5);
    RemoteCache cache = RemoteCache.at(cacheDir, 64L << 20).withLookahead(2);
    try (ShardSet r = Shards.open(CountedFileSystem.uri(set), cache)) {
      assertThat(copies()).isEmpty(); // opening reads headers and footers only
      r.get(0);
      List<ShardInfo> shards = r.shards();
      await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
        for (int k = 0; k < 3; k++) {
          assertThat(cacheDir.resolve(copyOf(shards.get(k).file()).getFileName())).exists();
        }
      });
      assertThat(copies()).noneMatch(p -> p.getFileName().toString().endsWith("-" + shards.get(4).file()));
    }
  }

  @Test
  void closingADatasetFinishesOrStopsTheLookAheadDownloadsItStarted() throws IOException {
    Path set = writeShards(dir.resolve("remote/set"), 8);
    for (int round = 0; round < 10; round++) {
      cacheDir = dir.resolve("cache-" + round);
      RemoteCache cache = RemoteCache.at(cacheDir, 64L << 20).withLookahead(4);
      try (ShardSet r = Shards.open(CountedFileSystem.uri(set), cache)) {
        r.get(0); // starts the next four shards downloading in the background
      }
      assertThat(copies()).as("round %d", round).noneMatch(p -> p.getFileName().toString().endsWith(".part"));
      try (Stream<Path> all = Files.walk(cacheDir)) { // nothing writes into it for the closed dataset
        for (Path p : all.sorted(java.util.Comparator.reverseOrder()).toList()) {
          Files.delete(p);
        }
      }
    }
  }

  @Test
  void theBudgetEvictsTheLeastRecentlyUsedCopiesNoReaderHolds() throws IOException {
    Path set = writeShards(dir.resolve("remote/set"), 3);
    long shardBytes;
    List<ShardInfo> shards;
    try (ShardSet l = Shards.open(set)) {
      shards = l.shards();
      shardBytes = shards.stream().mapToLong(ShardInfo::bytes).max().orElseThrow();
    }
    long budget = 2 * shardBytes + shardBytes / 2;
    RemoteCache cache = RemoteCache.at(cacheDir, budget).withLookahead(0);
    URI uri = CountedFileSystem.uri(set);
    // shard 0 read and let go, then shard 1: both fit
    for (int k = 0; k < 2; k++) {
      try (ShardSet r = Shards.open(uri, cache)) {
        r.get(firstRow(shards, k));
      }
    }
    assertThat(copies()).hasSize(2);
    // shard 2 needs room: shard 0, the least recently used, goes
    try (ShardSet r = Shards.open(uri, cache)) {
      r.get(firstRow(shards, 2));
    }
    assertThat(copies()).hasSize(2).noneMatch(p -> p.getFileName().toString().endsWith("-" + shards.get(0).file()));
    // with shards 1 and 2 in use by two readers, shard 0 cannot be cached: a clear error
    try (ShardSet a = Shards.open(uri, cache); ShardSet b = Shards.open(uri, cache);
        ShardSet r = Shards.open(uri, cache)) {
      a.get(firstRow(shards, 1));
      b.get(firstRow(shards, 2));
      assertThatThrownBy(() -> r.get(0)).isInstanceOf(DatasetIOException.class)
          .hasMessageContaining(set.resolve(shards.get(0).file()).toString())
          .hasMessageContaining("budget of " + budget + " bytes")
          .hasMessageContaining("needs " + shards.get(0).bytes() + " bytes");
    }
  }

  static long firstRow(List<ShardInfo> shards, int k) {
    long row = 0;
    for (int i = 0; i < k; i++) {
      row += shards.get(i).rows();
    }
    return row;
  }

  @Test
  void aPartOrATruncatedOrDamagedCopyIsNeverServed() throws IOException {
    Path set = writeShards(dir.resolve("remote/set"), 2);
    Path arrow = dir.resolve("remote/x.arrow");
    try (NpyDataset src = Npy.open(writeNpy(dir.resolve("remote/src/x.npy"), ROWS))) {
      Arrow.write(src, arrow, ArrowWriteOptions.defaults());
    }
    RemoteCache cache = RemoteCache.at(cacheDir, 64L << 20).withLookahead(0);
    String expected;
    try (ShardSet l = Shards.open(set)) {
      expected = Checksums.sha256(l);
    }
    try (ShardSet r = Shards.open(CountedFileSystem.uri(set), cache)) {
      assertEquals(expected, Checksums.sha256(r));
    }
    List<Path> published = copies();
    assertThat(published).hasSize(2);
    // a killed download's .part holding garbage, a copy cut short, a copy with a flipped footer byte
    Path first = published.get(0);
    Path second = published.get(1);
    byte[] whole = Files.readAllBytes(first);
    Files.delete(first);
    Files.write(first.resolveSibling(first.getFileName() + ".part"), new byte[whole.length]);
    byte[] cut = Files.readAllBytes(second);
    byte[] flipped = cut.clone();
    flipped[flipped.length - 5] ^= 0x10;
    Files.write(second, java.util.Arrays.copyOf(cut, cut.length - 100));
    try (ShardSet r = Shards.open(CountedFileSystem.uri(set), cache)) {
      assertEquals(expected, Checksums.sha256(r));
    }
    assertThat(first).hasBinaryContent(whole);
    assertThat(second).hasBinaryContent(cut);
    assertThat(copies()).noneMatch(p -> p.toString().endsWith(".part"));
    Files.write(second, flipped);
    try (ShardSet r = Shards.open(CountedFileSystem.uri(set), cache)) {
      assertEquals(expected, Checksums.sha256(r));
    }
    assertThat(second).hasBinaryContent(cut);
    // an Arrow copy missing its end is downloaded again
    try (ArrowDataset l = Arrow.open(arrow);
        ArrowDataset r = Arrow.open(CountedFileSystem.uri(arrow), ArrowOptions.defaults(), cache)) {
      assertEquals(Checksums.sha256(l), Checksums.sha256(r));
    }
    Path arrowCopy = copyOf("x.arrow");
    byte[] arrowBytes = Files.readAllBytes(arrowCopy);
    Files.write(arrowCopy, java.util.Arrays.copyOf(arrowBytes, arrowBytes.length - 6));
    try (ArrowDataset l = Arrow.open(arrow);
        ArrowDataset r = Arrow.open(CountedFileSystem.uri(arrow), ArrowOptions.defaults(), cache)) {
      assertEquals(Checksums.sha256(l), Checksums.sha256(r));
    }
    assertThat(arrowCopy).hasBinaryContent(arrowBytes);
  }

  @Test
  void aRemoteShardThatDisagreesWithItsMetadataIsNamedAndNeverPublished() throws IOException {
    Path set = writeShards(dir.resolve("remote/set"), 2);
    ShardInfo first;
    try (ShardSet l = Shards.open(set)) {
      first = l.shards().get(0);
    }
    Path shard = set.resolve(first.file());
    byte[] bytes = Files.readAllBytes(shard);
    bytes[200] ^= 0x01; // a row byte: the footer still matches, the block's CRC does not
    Files.write(shard, bytes);
    URI uri = CountedFileSystem.uri(set);
    try (ShardSet r = Shards.open(uri, RemoteCache.at(cacheDir, 64L << 20))) {
      assertThatThrownBy(() -> Checksums.sha256(r)).isInstanceOf(DatasetFormatException.class)
          .hasMessageContaining("checksum mismatch");
    }
    assertThatThrownBy(() -> Shards.open(CountedFileSystem.uri(dir.resolve("remote/none")),
        RemoteCache.at(cacheDir, 64L << 20))).isInstanceOf(DatasetIOException.class)
        .hasMessageContaining("none/metadata.json").hasMessageContaining("no such file");
  }
}
