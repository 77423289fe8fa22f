package dev.sluice.io.remote;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.sluice.core.Example;
import dev.sluice.core.MemoryManager;
import dev.sluice.core.PipelineContext;
import dev.sluice.io.Checksums;
import dev.sluice.io.RemoteCache;
import dev.sluice.io.WriteOptions;
import dev.sluice.io.internal.RemoteFiles;
import dev.sluice.io.internal.cache.FileCache;
import dev.sluice.io.npy.Npy;
import dev.sluice.io.npy.NpyDataset;
import dev.sluice.io.npy.NpyFiles;
import dev.sluice.io.parquet.Parquet;
import dev.sluice.io.parquet.ParquetDataset;
import dev.sluice.io.parquet.ParquetOptions;
import dev.sluice.io.parquet.internal.ParquetWriting;
import dev.sluice.io.shards.ShardSet;
import dev.sluice.io.shards.Shards;
import dev.sluice.operators.Pipeline;
import dev.sluice.operators.RandomAccessShuffle;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The node cache follows the reader: a shuffled pass over a remote Parquet dataset downloads its
 * files in the order the pass reads them, and one process reads a dataset larger than the cache's
 * budget, letting go of the copies it no longer needs.
 */
class RemoteReadOrderTest {
  static final int FILES = 6;
  static final int ROWS = 1500;
  static final int WIDTH = 4;

  @TempDir
  Path dir;

  @BeforeAll
  static void register() {
    RemoteFiles.configure(CountedFileSystem.settings());
  }

  @AfterEach
  void noLeaks() {
    MemoryManager.shared().checkNoOutstanding();
  }

  /** {@code files} Parquet files of {@link #ROWS} rows each; row i of the dataset holds [i*WIDTH + k]. */
  Path writeParquet(Path set, int files) throws IOException {
    Files.createDirectories(set);
    for (int f = 0; f < files; f++) {
      Path npy = dir.resolve("src/" + f + "/x.npy");
      writeNpy(npy, (long) f * ROWS);
      try (NpyDataset src = Npy.open(npy)) {
        ParquetWriting.write(src, set.resolve(String.format("part-%02d.parquet", f)), WriteOptions.defaults());
      }
    }
    return set;
  }

  static void writeNpy(Path file, long firstRow) throws IOException {
    NpyFiles.int64Matrix(file, ROWS, WIDTH, i -> firstRow * WIDTH + i);
  }

  /** The rows of one shuffled pass, as their first value / WIDTH. */
  static List<Long> shuffledPass(ParquetDataset ds, long epoch) {
    PipelineContext ctx = PipelineContext.defaults().withSeed(7).withEpoch(epoch);
    return Pipeline.from(ds).shuffle().flux(ctx)
        .map((Example e) -> e.tensor("x").data().order(ByteOrder.LITTLE_ENDIAN).getLong(0) / WIDTH)
        .collectList().block();
  }

  /** What the cache reports, in order. */
  static final class Events implements FileCache.Listener {
    final List<String> reached = new CopyOnWriteArrayList<>();
    final List<String> downloaded = new CopyOnWriteArrayList<>();
    final Path cacheDir;
    final AtomicLong largest = new AtomicLong();

    Events(Path cacheDir) {
      this.cacheDir = cacheDir;
    }

    @Override
    public void reached(String resource) {
      reached.add(resource);
      sample();
    }

    @Override
    public void downloaded(String resource) {
      downloaded.add(resource);
      sample();
    }

    /**
     * Bytes of the copies and downloads in the cache directory now. A download renamed to its copy
     * while the directory is listed may be listed under both names: a name and its {@code .part}
     * count once.
     */
    void sample() {
      try (Stream<Path> s = Files.list(cacheDir)) {
        java.util.Map<String, Long> files = new java.util.HashMap<>();
        s.filter(p -> !p.getFileName().toString().endsWith(".lock")).forEach(p -> {
          long size;
          try {
            size = Files.size(p);
          } catch (IOException e) {
            size = 0; // evicted or renamed meanwhile
          }
          files.merge(p.getFileName().toString().replaceFirst("\\.part$", ""), size, Math::max);
        });
        long bytes = files.values().stream().mapToLong(Long::longValue).sum();
        largest.accumulateAndGet(bytes, Math::max);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
  }

  @Test
  void aShuffledPassDownloadsAheadTheFilesItReadsNextNotTheNextByName() throws IOException {
    Path set = writeParquet(dir.resolve("remote/pq"), FILES);
    assertDownloadsFollowTheReads(cache -> Parquet.open(CountedFileSystem.uri(set), ParquetOptions.defaults(), cache),
        r -> assertThat(shuffledPass(r, 0)).hasSize(FILES * ROWS).doesNotHaveDuplicates());
  }

  @Test
  void aBlockShuffledShardSetDownloadsAheadTheShardsItReadsNext() throws IOException {
    Path set = RemoteCacheTest.writeShards(dir.resolve("remote/set"), FILES);
    assertDownloadsFollowTheReads(cache -> Shards.open(CountedFileSystem.uri(set), cache), r -> {
      PipelineContext ctx = PipelineContext.defaults().withSeed(7);
      List<Long> rows = Pipeline.from(r).shuffle(RandomAccessShuffle.BLOCKS).flux(ctx)
          .map((Example e) -> e.tensor("x").data().order(ByteOrder.LITTLE_ENDIAN).getLong(0) / WIDTH)
          .collectList().block();
      assertThat(rows).hasSize(RemoteCacheTest.ROWS).doesNotHaveDuplicates();
    });
  }

  /**
   * Opens a remote dataset of {@link #FILES} files through a cache with look-ahead 1, runs one
   * shuffled {@code pass} over it and asserts that the pass read the files out of name order and
   * that each download ahead was of the next file in read order.
   */
  private <D extends dev.sluice.core.Dataset<Example> & AutoCloseable> void assertDownloadsFollowTheReads(
      java.util.function.Function<RemoteCache, D> open, java.util.function.Consumer<D> pass) throws IOException {
    Path cacheDir = dir.resolve("cache");
    RemoteCache cache = RemoteCache.at(cacheDir, 64L << 20).withLookahead(1);
    Events events = new Events(cacheDir);
    FileCache.of(cache).listen(events);
    D r = open.apply(cache);
    try {
      pass.accept(r);
    } finally {
      try {
        r.close();
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    }
    List<String> readOrder = new ArrayList<>(new LinkedHashSet<>(events.reached));
    assertThat(readOrder).hasSize(FILES);
    assertThat(readOrder).as("the shuffled pass reads the files out of name order")
        .isNotEqualTo(readOrder.stream().sorted().toList());
    // lookahead 1: when a file is first read, the one downloaded ahead is the next in read order
    assertThat(events.downloaded).containsExactlyElementsOf(readOrder);
  }

  @Test
  void aGlobalShuffleOverPublishedCopiesTakesEachCopyOnceNotOncePerRow() throws IOException {
    Path set = RemoteCacheTest.writeShards(dir.resolve("remote/set"), FILES);
    Path cacheDir = dir.resolve("cache");
    RemoteCache cache = RemoteCache.at(cacheDir, 64L << 20).withLookahead(1);
    Events events = new Events(cacheDir);
    FileCache.of(cache).listen(events);
    try (ShardSet r = Shards.open(CountedFileSystem.uri(set), cache)) {
      for (long epoch = 0; epoch < 2; epoch++) {
        PipelineContext ctx = PipelineContext.defaults().withSeed(7).withEpoch(epoch);
        List<Long> rows = Pipeline.from(r).shuffle(RandomAccessShuffle.GLOBAL).flux(ctx)
            .map((Example e) -> e.tensor("x").data().order(ByteOrder.LITTLE_ENDIAN).getLong(0) / WIDTH)
            .collectList().block();
        assertThat(rows).hasSize(RemoteCacheTest.ROWS).doesNotHaveDuplicates();
        if (epoch == 0) {
          events.reached.clear(); // every copy is published now
        }
      }
    }
    // the second epoch jumps between the shards row by row; with every copy published the reader
    // holds them, so each is taken at most once, not once per jump
    assertThat(events.reached).hasSizeLessThanOrEqualTo(FILES);
    assertThat(events.downloaded).hasSize(FILES);
  }

  @Test
  void aPassInTheFilesOwnOrderAfterAShuffledOneDownloadsAheadInThatOrder() throws IOException {
    int files = 8;
    Path set = writeParquet(dir.resolve("remote/pq"), files);
    long largestFile = 0;
    try (Stream<Path> s = Files.list(set)) {
      for (Path p : s.toList()) {
        largestFile = Math.max(largestFile, Files.size(p));
      }
    }
    Path cacheDir = dir.resolve("cache");
    RemoteCache cache = RemoteCache.at(cacheDir, largestFile * 3).withLookahead(1);
    Events events = new Events(cacheDir);
    FileCache.of(cache).listen(events);
    try (ParquetDataset r = Parquet.open(CountedFileSystem.uri(set), ParquetOptions.defaults(), cache)) {
      assertThat(shuffledPass(r, 0)).hasSize(files * ROWS);
      events.reached.clear();
      events.downloaded.clear();
      List<Long> rows = r.flux(PipelineContext.defaults())
          .map((Example e) -> e.tensor("x").data().order(ByteOrder.LITTLE_ENDIAN).getLong(0) / WIDTH)
          .collectList().block();
      assertThat(rows).hasSize(files * ROWS).isSorted();
    }
    // the plain pass announces the files' own order: nothing is downloaded ahead in the shuffled
    // pass's order, which would take the budget the reader needs
    assertThat(events.downloaded).as("downloads of the pass in the files' order").isNotEmpty().isSorted();
    assertThat(new ArrayList<>(new LinkedHashSet<>(events.reached))).isSorted();
  }

  @Test
  void oneProcessReadsADatasetLargerThanItsBudgetShuffledForTwoEpochs() throws IOException {
    int files = 8;
    Path set = writeParquet(dir.resolve("remote/pq"), files);
    long largestFile = 0;
    long total = 0;
    try (Stream<Path> s = Files.list(set)) {
      for (Path p : s.toList()) {
        largestFile = Math.max(largestFile, Files.size(p));
        total += Files.size(p);
      }
    }
    long budget = largestFile * 3;
    assertThat(total).as("the dataset is larger than the budget").isGreaterThan(budget);
    Path cacheDir = dir.resolve("cache");
    RemoteCache cache = RemoteCache.at(cacheDir, budget).withLookahead(1);
    Events events = new Events(cacheDir);
    FileCache.of(cache).listen(events);
    try (ParquetDataset local = Parquet.open(set);
        ParquetDataset r = Parquet.open(CountedFileSystem.uri(set), ParquetOptions.defaults(), cache)) {
      for (long epoch = 0; epoch < 2; epoch++) {
        List<Long> rows = shuffledPass(r, epoch);
        assertThat(rows).as("epoch " + epoch).hasSize(files * ROWS).doesNotHaveDuplicates()
            .allSatisfy(v -> assertThat(v).isBetween(0L, (long) files * ROWS - 1));
      }
      assertEquals(Checksums.sha256(local), Checksums.sha256(r));
    }
    assertThat(events.downloaded.size()).as("evicted files are downloaded again").isGreaterThan(files);
    assertThat(events.largest.get()).as("bytes in the cache directory at any download or first read")
        .isPositive().isLessThanOrEqualTo(budget);
  }
}
