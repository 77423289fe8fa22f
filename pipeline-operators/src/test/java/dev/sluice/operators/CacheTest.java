package dev.sluice.operators;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.core.Batch;
import dev.sluice.core.DType;
import dev.sluice.core.Datasets;
import dev.sluice.core.Example;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.RandomAccessDataset;
import dev.sluice.core.Shape;
import dev.sluice.core.Tensor;
import dev.sluice.core.testing.NoLeaks;
import dev.sluice.operators.internal.cache.CacheAdmin;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** The cache in one process: transparency, counts, keys, refusals, budget, space, permissions, corruption, cancel. */
@ExtendWith(NoLeaks.class)
class CacheTest {
  @TempDir Path dir;

  /** Every batch as its rows' indices and values, in order. */
  private static List<String> render(Pipeline<Batch> p, PipelineContext ctx) {
    List<String> out = new ArrayList<>();
    p.flux(ctx).doOnNext(b -> {
      try (b) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < b.size(); i++) {
          sb.append(row(b.copyRow(i))).append(' ');
        }
        out.add(sb.toString());
      }
    }).blockLast();
    return out;
  }

  /** An example as its index and, per field, its dtype, shape and bytes (or null). */
  private static String row(Example e) {
    StringBuilder sb = new StringBuilder().append(e.index());
    for (String name : e.names()) {
      sb.append(':').append(name).append('=');
      if (e.isNull(name)) {
        sb.append("null");
        continue;
      }
      Tensor t = e.tensor(name);
      ByteBuffer b = ByteBuffer.wrap(t.toByteArray());
      sb.append(t.dtype()).append(t.shape());
      while (b.hasRemaining()) {
        sb.append(String.format("%02x", b.get() & 0xff));
      }
    }
    return sb.toString();
  }

  private static List<String> elements(Pipeline<Example> p, PipelineContext ctx) {
    return p.flux(ctx).map(CacheTest::row).collectList().block();
  }

  private CacheSpec spec(CacheMonitor m) {
    CacheSpec s = CacheSpec.defaults().directory(dir.resolve("root")).blockRows(500);
    return m == null ? s : s.monitor(m);
  }

  @Test
  void randomAccessUpstreamStaysRandomAccessAndLaterPassesReadOnlyTheCache() {
    RandomAccessDataset<Example> src = Datasets.synthetic(3000, 8, 7);
    CacheMonitor m = new CacheMonitor();
    Pipeline<Example> cached = Pipeline.from(src).cache(spec(m));
    assertTrue(cached.shuffle().batch(8).explain().contains("index"), cached.shuffle().batch(8).explain());
    for (int rank = 0; rank < 2; rank++) {
      PipelineContext ctx = PipelineContext.defaults().withSeed(3).withRank(rank, 2);
      List<String> plain = render(Pipeline.from(src).shuffle().shard(2, rank).batch(64), ctx);
      assertEquals(plain, render(cached.shuffle().shard(2, rank).batch(64), ctx), "rank " + rank);
    }
    // rank 0 filled every block it touched (the shuffle touches them all); rank 1 only read
    assertEquals(new CacheStats(1500, 0, 0, 0, 0, 0), m.lastPass());
    assertEquals(1500, m.total().misses());
    assertEquals(6, m.total().blocksWritten());
    for (long epoch = 0; epoch < 2; epoch++) {
      PipelineContext ctx = PipelineContext.defaults().withEpoch(epoch);
      assertEquals(elements(Pipeline.from(src), ctx), elements(cached, ctx));
      assertEquals(render(Pipeline.from(src).batch(100, false, 2), ctx), render(cached.batch(100, false, 2), ctx));
    }
    assertEquals(0, m.lastPass().misses());
    assertEquals(3000, m.lastPass().hits());
  }

  @Test
  void splitUpstreamStaysASplitSourceOnTheElementPath() {
    MemorySplits src = new MemorySplits(true, 700, 0, 1300, 5);
    CacheMonitor m = new CacheMonitor();
    Pipeline<Example> cached = Pipeline.from(src).cache(spec(m).name("memory").blockRows(256));
    assertTrue(cached.shuffle().shard(2, 1).batch(32).explain().contains("element"),
        cached.shuffle().shard(2, 1).batch(32).explain());
    for (long epoch = 0; epoch < 3; epoch++) {
      for (int rank = 0; rank < 2; rank++) {
        PipelineContext ctx = PipelineContext.defaults().withSeed(5).withEpoch(epoch).withRank(rank, 2);
        assertEquals(render(Pipeline.from(src).shuffle().shard(2, rank).batch(32), ctx),
            render(cached.shuffle().shard(2, rank).batch(32), ctx), "epoch " + epoch + " rank " + rank);
        assertEquals(elements(Pipeline.from(src).shuffle().shard(2, rank), ctx),
            elements(cached.shuffle().shard(2, rank), ctx), "epoch " + epoch + " rank " + rank);
      }
    }
    assertEquals(0, m.lastPass().misses());
    assertEquals(2005 - 1002, m.lastPass().hits());
    assertEquals(10, m.total().blocksWritten(), "every block filled once: " + m.total());
  }

  /**
   * Through the cache, a source whose blocks align to its chunks keeps them: a shuffled pass gives
   * the batches it gives without the cache, and the pass that fills the cache (its blocks a whole
   * number of chunks) reads each chunk of the upstream once.
   */
  @Test
  void anAlignedUpstreamKeepsItsBlocksThroughTheCache() {
    ChunkedBatchSplits src = ChunkedBatchSplits.of(300, 2, 5_000);
    Pipeline<Example> cached = Pipeline.from(src).cache(CacheSpec.defaults().directory(dir.resolve("root")).name("chunked"));
    for (long epoch = 0; epoch < 2; epoch++) {
      PipelineContext ctx = PipelineContext.defaults().withSeed(5).withEpoch(epoch);
      src.decodes.clear();
      List<String> through = render(cached.shuffle().batch(32), ctx);
      if (epoch == 0) {
        assertEquals(src.chunks(), src.decodes.size(), "every chunk read: " + src.decodes);
        src.decodes.forEach((chunk, reads) -> assertEquals(1, reads, "chunk " + chunk + " read once"));
      }
      assertEquals(render(Pipeline.from(src).shuffle().batch(32), ctx), through, "epoch " + epoch);
    }
  }

  @Test
  void aSplitUpstreamThatDecodesIntoBatchesStaysOnTheColumnarPath() {
    MemoryBatchSplits src = new MemoryBatchSplits(700, 0, 1300, 5);
    CacheMonitor m = new CacheMonitor();
    Pipeline<Example> cached = Pipeline.from(src).cache(spec(m).name("memory-batches").blockRows(256));
    Pipeline<Batch> columnar = cached.shuffle().shard(2, 1).batch(32);
    assertTrue(columnar.explain().contains("columnar"), columnar.explain());
    for (long epoch = 0; epoch < 3; epoch++) {
      for (int rank = 0; rank < 2; rank++) {
        PipelineContext ctx = PipelineContext.defaults().withSeed(5).withEpoch(epoch).withRank(rank, 2);
        assertEquals(render(Pipeline.from(src).shuffle().shard(2, rank).batch(32), ctx),
            render(cached.shuffle().shard(2, rank).batch(32), ctx), "epoch " + epoch + " rank " + rank);
        assertEquals(render(Pipeline.from(src).shard(2, rank).batch(100, true, 2), ctx),
            render(cached.shard(2, rank).batch(100, true, 2), ctx), "epoch " + epoch + " rank " + rank);
      }
    }
    assertEquals(0, m.lastPass().misses());
    assertEquals(10, m.total().blocksWritten(), "every block filled once: " + m.total());
  }

  @Test
  void aMapBeforeTheCacheRunsOncePerElementAcrossPasses() {
    AtomicLong calls = new AtomicLong();
    Function<Example, Example> twice = e -> {
      calls.incrementAndGet();
      return e.with("value", Tensor.scalar(e.tensor("value").getLong(0) * 2));
    };
    RandomAccessDataset<Example> src = Datasets.range(1200);
    Pipeline<Example> cached = Pipeline.from(src).map(twice).cache(spec(null).name("twice"));
    List<String> expected = elements(Pipeline.from(src).map(twice), PipelineContext.defaults());
    calls.set(0);
    assertEquals(expected, elements(cached, PipelineContext.defaults()));
    assertEquals(1201, calls.get(), "every element once, and the first once more to infer the fields");
    assertEquals(expected, elements(cached, PipelineContext.defaults()));
    assertEquals(1201, calls.get(), "the second pass reads the cache only");
  }

  @Test
  void operatorsThatDependOnEpochOrRankOrAnUnnamedFunctionAreRefused() {
    RandomAccessDataset<Example> src = Datasets.range(10);
    CacheSpec spec = spec(null);
    IllegalArgumentException unnamed = assertThrows(IllegalArgumentException.class,
        () -> Pipeline.from(src).map(e -> e).cache(spec));
    assertTrue(unnamed.getMessage().contains("CacheSpec.named"), unnamed.getMessage());
    assertTrue(assertThrows(IllegalArgumentException.class, () -> Pipeline.from(src).shuffle().cache(spec))
        .getMessage().contains("before the shuffle"));
    assertTrue(assertThrows(IllegalArgumentException.class, () -> Pipeline.from(src).shard(2, 0).cache(spec))
        .getMessage().contains("rank"));
    assertTrue(assertThrows(IllegalArgumentException.class,
        () -> Pipeline.from(src).mapWithContext((e, c) -> e, 1, true).cache(spec.name("x")))
        .getMessage().contains("mapWithContext"));
    assertThrows(UnsupportedOperationException.class, () -> Pipeline.from(src).filter(e -> true).cache(spec.name("x")));
    assertThrows(UnsupportedOperationException.class,
        () -> Pipeline.from(TestSources.streaming(src)).cache(spec.name("x")));
  }

  @Test
  void aChangedUpstreamIsAnotherCache() throws IOException {
    Pipeline.from(Datasets.synthetic(100, 4, 1)).cache(spec(null)).flux().blockLast();
    Pipeline.from(Datasets.synthetic(100, 4, 1)).cache(spec(null)).flux().blockLast();
    assertEquals(1, caches().size());
    Pipeline.from(Datasets.synthetic(100, 4, 2)).cache(spec(null)).flux().blockLast();
    assertEquals(2, caches().size());
    Pipeline.from(Datasets.range(100)).map(e -> e).cache(spec(null).name("v1")).flux().blockLast();
    Pipeline.from(Datasets.range(100)).map(e -> e).cache(spec(null).name("v2")).flux().blockLast();
    assertEquals(4, caches().size());
    Pipeline.from(Datasets.range(100)).map(e -> e).cache(spec(null).name("v2").blockRows(50)).flux().blockLast();
    assertEquals(5, caches().size());
  }

  /** The cache directories under the test's root. */
  private List<Path> caches() throws IOException {
    List<Path> out = new ArrayList<>();
    try (DirectoryStream<Path> d = Files.newDirectoryStream(dir.resolve("root"), "cache-*")) {
      d.forEach(out::add);
    }
    return out;
  }

  /** The only cache directory under the test's root. */
  private Path onlyCache() throws IOException {
    List<Path> all = caches();
    assertEquals(1, all.size(), all.toString());
    return all.get(0);
  }

  @Test
  void beyondTheBudgetBlocksAreServedUncachedAndCounted() {
    RandomAccessDataset<Example> src = Datasets.synthetic(3000, 8, 7); // 6 blocks of about 20 KB
    CacheMonitor m = new CacheMonitor();
    Pipeline<Example> cached = Pipeline.from(src).cache(spec(m).maxBytes(50_000));
    List<String> expected = render(Pipeline.from(src).batch(128), PipelineContext.defaults());
    assertEquals(expected, render(cached.batch(128), PipelineContext.defaults()));
    CacheStats first = m.lastPass();
    assertEquals(2, first.blocksWritten(), first.toString());
    assertTrue(first.bytesWritten() <= 50_000, first.toString());
    assertEquals(2000, first.uncached(), first.toString());
    assertEquals(expected, render(cached.batch(128), PipelineContext.defaults()));
    assertEquals(new CacheStats(1000, 2000, 2000, 0, 0, 0), m.lastPass());
  }

  @Test
  void aBudgetBeyondTheFreeSpaceIsRefusedWithTheFigures() {
    long free = dir.toFile().getUsableSpace();
    // after a map the cache's size is unknown: the budget is what must fit
    CacheException e = assertThrows(CacheException.class, () -> Pipeline.from(Datasets.range(10)).map(x -> x)
        .cache(spec(null).name("big").maxBytes(free + (1L << 40))));
    assertTrue(e.getMessage().contains("free, but the cache needs"), e.getMessage());
    assertTrue(e.getMessage().contains("CacheSpec.maxBytes"), e.getMessage());
    // a known size smaller than the budget is what is compared
    Pipeline.from(Datasets.synthetic(100, 4, 1)).cache(spec(null).maxBytes(free + (1L << 40)));
  }

  @Test
  void directoriesArePrivateAndOthersDirectoriesAreRefused() throws IOException {
    Path root = dir.resolve("root");
    Pipeline<Example> cached = Pipeline.from(Datasets.synthetic(600, 4, 1)).cache(spec(null));
    assertEquals(600, cached.flux().count().block());
    assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(root)));
    Path cacheDir = onlyCache();
    assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(cacheDir)));
    try (DirectoryStream<Path> files = Files.newDirectoryStream(cacheDir)) {
      for (Path f : files) {
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(f)), f.toString());
      }
    }
    Files.setPosixFilePermissions(root, PosixFilePermissions.fromString("rwxr-xr-x"));
    CacheException open = assertThrows(CacheException.class,
        () -> Pipeline.from(Datasets.synthetic(600, 4, 1)).cache(spec(null)));
    assertTrue(open.getMessage().contains("open to other users (mode 0755)"), open.getMessage());
    Files.setPosixFilePermissions(root, PosixFilePermissions.fromString("rwx------"));
    Path foreign = foreignDirectory();
    CacheException owner = assertThrows(CacheException.class,
        () -> Pipeline.from(Datasets.synthetic(600, 4, 1)).cache(CacheSpec.defaults().directory(foreign)));
    assertTrue(owner.getMessage().contains("belongs to user"), owner.getMessage());
  }

  /** A directory of another user: made for nobody (uid 65534) when the tests run as root, else root's. */
  private Path foreignDirectory() throws IOException {
    boolean root = Files.getOwner(Path.of("/proc/self")).getName().equals("root");
    if (!root) {
      return Path.of("/proc/1"); // root's, whoever runs the tests
    }
    Path d = Files.createDirectory(dir.resolve("foreign"), PosixFilePermissions.asFileAttribute(
        PosixFilePermissions.fromString("rwx------")));
    Files.setAttribute(d, "unix:uid", 65534);
    return d;
  }

  @Test
  void aCorruptSegmentIsReportedAndRebuiltFromUpstream() throws IOException {
    RandomAccessDataset<Example> src = Datasets.synthetic(1000, 8, 7);
    CacheMonitor m = new CacheMonitor();
    Pipeline<Example> cached = Pipeline.from(src).cache(spec(m));
    List<String> expected = elements(Pipeline.from(src), PipelineContext.defaults());
    assertEquals(expected, elements(cached, PipelineContext.defaults()));
    Path cacheDir = onlyCache();
    CacheAdmin.closeInThisProcess(cacheDir); // the next pass opens (and checks) the segments afresh
    Path segment;
    try (DirectoryStream<Path> s = Files.newDirectoryStream(cacheDir, "block-*.shard")) {
      segment = s.iterator().next();
    }
    try (FileChannel ch = FileChannel.open(segment, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
      ByteBuffer b = ByteBuffer.allocate(1);
      ch.read(b, 200);
      b.put(0, (byte) (b.get(0) ^ 0x5a)).clear();
      ch.write(b, 200);
    }
    assertEquals(expected, elements(cached, PipelineContext.defaults()));
    CacheStats rebuilt = m.lastPass();
    assertEquals(1, rebuilt.fallbacks(), rebuilt.toString());
    assertEquals(1, rebuilt.blocksWritten(), rebuilt.toString());
    assertEquals(500, rebuilt.misses(), rebuilt.toString());
    assertFalse(Files.exists(segment), "the corrupt segment is deleted");
    assertEquals(expected, elements(cached, PipelineContext.defaults()));
    assertEquals(0, m.lastPass().misses());
  }

  @Test
  void aCancelledFillEndsItsClaimAndReturnsItsMemory() throws IOException {
    CacheMonitor m = new CacheMonitor();
    // a split source's blocks are filled through a flux: cancelled while the first block fills
    MemorySplits splits = new MemorySplits(true, 900, 1100);
    Pipeline<Example> cached = Pipeline.from(splits).map(e -> e).cache(spec(m).name("memory"));
    assertEquals(10, cached.flux().take(10).count().block());
    assertEquals(1, cached.batch(7).flux().take(1).doOnNext(Batch::close).count().block());
    TestSources.awaitNoOutstanding();
    List<String> expected = elements(Pipeline.from(splits), PipelineContext.defaults());
    assertEquals(expected, elements(cached, PipelineContext.defaults()));
    assertEquals(0, m.lastPass().fallbacks(), "no claim was left behind: " + m.lastPass());
    Path cacheDir = onlyCache();
    CacheAdmin.Index index = CacheAdmin.index(cacheDir, 5_000_000_000L);
    assertEquals(index.blocks(), index.published());
    assertEquals(0, index.claimed());
    assertEquals(0, index.orphans());
  }

  @Test
  void aTensorCacheKeepsShapesAndDtypes() {
    float[] v = new float[60];
    for (int i = 0; i < v.length; i++) {
      v[i] = i * 0.5f;
    }
    ByteBuffer b = ByteBuffer.allocate(v.length * 4).order(ByteOrder.LITTLE_ENDIAN);
    b.asFloatBuffer().put(v);
    RandomAccessDataset<Example> src = Datasets.fromTensors("m", Tensor.wrap(DType.FLOAT32, Shape.of(10, 2, 3), b));
    Pipeline<Example> cached = Pipeline.from(src).cache(spec(null).name("tensors"));
    assertEquals(elements(Pipeline.from(src), PipelineContext.defaults()), elements(cached, PipelineContext.defaults()));
    assertEquals(Shape.of(2, 3), cached.flux().blockFirst().tensor("m").shape());
  }
}
