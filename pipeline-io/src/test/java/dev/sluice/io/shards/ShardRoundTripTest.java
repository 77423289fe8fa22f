package dev.sluice.io.shards;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.core.Batch;
import dev.sluice.core.Column;
import dev.sluice.core.DType;
import dev.sluice.core.Dataset;
import dev.sluice.core.DatasetClosedException;
import dev.sluice.core.Datasets;
import dev.sluice.core.Example;
import dev.sluice.core.MemoryManager;
import dev.sluice.core.Schema;
import dev.sluice.core.Shape;
import dev.sluice.core.Split;
import dev.sluice.core.Tensor;
import dev.sluice.core.TensorSpec;
import dev.sluice.core.spi.BatchBuilder;
import dev.sluice.core.spi.BufferPool;
import dev.sluice.core.testing.NoLeaks;
import dev.sluice.io.Checksums;
import dev.sluice.io.Formats;
import dev.sluice.io.WriteOptions;
import dev.sluice.io.shards.ShardTestData.ExampleList;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import reactor.core.publisher.Flux;

/** Writing a dataset into shards and reading it back: every field kind, every source kind, any worker count. */
@ExtendWith(NoLeaks.class)
class ShardRoundTripTest {
  @TempDir Path dir;

  private static final BufferPool POOL = MemoryManager.shared().pool("test.shards");

  private static void assertSameRow(Example expected, Example actual) {
    assertEquals(expected.index(), actual.index());
    assertEquals(expected.names(), actual.names(), "field order");
    for (String name : expected.names()) {
      assertEquals(expected.isNull(name), actual.isNull(name), "null-ness of '" + name + "' in row " + expected.index());
      if (!expected.isNull(name)) {
        Tensor e = expected.tensor(name);
        Tensor a = actual.tensor(name);
        assertTrue(e.contentEquals(a), "field '" + name + "' of row " + expected.index() + ": " + e + " vs " + a);
      }
    }
  }

  /** The batch of {@code indices} built by appending the source's examples one by one. */
  private static Batch appended(ExampleList source, long[] indices) {
    try (BatchBuilder b = BatchBuilder.create(source.schema(), indices.length, POOL)) {
      for (long i : indices) {
        b.append(source.get(i));
      }
      return b.build();
    }
  }

  private static Batch gathered(ShardSet set, long[] indices) {
    try (BatchBuilder b = BatchBuilder.create(set.schema(), indices.length, POOL)) {
      set.gather(indices, 0, indices.length, b);
      return b.build();
    }
  }

  private static void assertSameBatch(Batch expected, Batch actual) {
    assertArrayEquals(expected.indices(), actual.indices());
    for (int f = 0; f < expected.schema().size(); f++) {
      Column e = expected.column(f);
      Column a = actual.column(f);
      for (int r = 0; r < expected.size(); r++) {
        assertEquals(e.isValid(r), a.isValid(r), e.name() + " row " + r);
      }
      assertEquals(e.values().data(), a.values().data(), "values of " + e.name());
      for (int d = 0; d < e.offsetLevels(); d++) {
        assertEquals(e.offsets(d).data(), a.offsets(d).data(), "offsets " + d + " of " + e.name());
      }
      for (int d = 0; d <= e.spec().raggedRank(); d++) {
        assertEquals(e.hasValidity(d), a.hasValidity(d), "validity " + d + " of " + e.name());
        if (e.hasValidity(d)) {
          assertEquals(e.validity(d).data(), a.validity(d).data(), "validity " + d + " of " + e.name());
        }
      }
    }
  }

  @Test
  void everyFieldKindReadsBackByGetGatherAndChecksum() {
    ExampleList source = ShardTestData.mixed(200, 1);
    List<ShardInfo> written = Shards.write(source, dir, WriteOptions.defaults().withNumShards(3).withWorkers(2));
    assertEquals(3, written.size());
    assertEquals(List.of(67L, 67L, 66L), written.stream().map(ShardInfo::rows).toList());
    try (ShardSet set = Shards.open(dir)) {
      assertEquals(source.schema(), set.schema());
      assertEquals(200, set.size());
      assertEquals(written, set.shards());
      for (long i = 0; i < 200; i++) {
        assertSameRow(source.get(i), set.get(i));
      }
      long[] shuffled = new SplittableRandom(7).longs(150, 0, 200).toArray();
      long[] inOrder = new long[120];
      for (int i = 0; i < inOrder.length; i++) {
        inOrder[i] = 40 + i; // crosses the boundaries of shards 0 / 1 and 1 / 2
      }
      for (long[] indices : new long[][] {shuffled, inOrder}) {
        try (Batch e = appended(source, indices); Batch a = gathered(set, indices)) {
          assertSameBatch(e, a);
        }
      }
      assertEquals(Checksums.sha256(source), Checksums.sha256(set));
      set.verify();
      assertEquals(3, set.splits().size());
      assertEquals(new Split(dir.getFileName() + "/shard-00001.shard", 67), set.splits().get(1));
    }
  }

  @Test
  void theBytesDependOnTheRowsAndTheShardCountOnly() throws Exception {
    ExampleList source = ShardTestData.mixed(300, 2);
    Map<String, byte[]> reference = null;
    int run = 0;
    for (Dataset<Example> input : List.of(source, source.streaming(), source.splits(37))) {
      for (int workers : new int[] {1, 3}) {
        Path out = dir.resolve("run" + run++);
        Shards.write(input, out, WriteOptions.defaults().withNumShards(5).withWorkers(workers));
        Map<String, byte[]> files = ShardTestData.files(out);
        assertEquals(6, files.size(), "five shards and metadata.json, no temporary files: " + files.keySet());
        if (reference == null) {
          reference = files;
        } else {
          assertEquals(reference.keySet(), files.keySet());
          for (String f : reference.keySet()) {
            assertArrayEquals(reference.get(f), files.get(f), f + " of run " + (run - 1) + " (" + input + ", "
                + workers + " workers)");
          }
        }
      }
    }
  }

  @Test
  void moreShardsThanRowsAndAnEmptyDataset() {
    ExampleList three = new ExampleList(ShardTestData.MIXED, ShardTestData.mixed(3, 3).rows);
    Shards.write(three, dir.resolve("a"), WriteOptions.defaults().withNumShards(5));
    try (ShardSet set = Shards.open(dir.resolve("a"))) {
      assertEquals(List.of(1L, 1L, 1L, 0L, 0L), set.shards().stream().map(ShardInfo::rows).toList());
      for (long i = 0; i < 3; i++) {
        assertSameRow(three.get(i), set.get(i));
      }
      try (Batch a = gathered(set, new long[] {2, 0, 1}); Batch e = appended(three, new long[] {2, 0, 1})) {
        assertSameBatch(e, a);
      }
      assertThrows(IndexOutOfBoundsException.class, () -> set.get(3));
      set.verify();
    }
    ExampleList none = new ExampleList(ShardTestData.MIXED, List.of());
    Shards.write(none, dir.resolve("b"), WriteOptions.defaults().withNumShards(2));
    try (ShardSet set = Shards.open(dir.resolve("b"))) {
      assertEquals(0, set.size());
      assertEquals(ShardTestData.MIXED, set.schema());
      assertEquals(Checksums.sha256(none), Checksums.sha256(set));
      set.verify();
    }
  }

  @Test
  void tinyMappingChunksGiveTheSameRows() {
    ExampleList source = ShardTestData.mixed(120, 4);
    Shards.write(source, dir, WriteOptions.defaults().withNumShards(2));
    try (ShardSet whole = Shards.open(dir); ShardSet chunked = Shards.open(dir, 24)) {
      for (long i = 0; i < 120; i++) {
        assertSameRow(whole.get(i), chunked.get(i));
      }
      long[] indices = new SplittableRandom(3).longs(100, 0, 120).toArray();
      try (Batch e = gathered(whole, indices); Batch a = gathered(chunked, indices)) {
        assertSameBatch(e, a);
      }
      long[] run = new long[60];
      for (int i = 0; i < run.length; i++) {
        run[i] = 30 + i;
      }
      try (Batch e = appended(source, run); Batch a = gathered(chunked, run)) {
        assertSameBatch(e, a);
      }
      chunked.verify();
    }
  }

  @Test
  void splitsReadAsExamplesAndAsBatches() {
    ExampleList source = ShardTestData.mixed(50, 5);
    Shards.write(source, dir, WriteOptions.defaults().withNumShards(2));
    try (ShardSet set = Shards.open(dir)) {
      Split second = set.splits().get(1);
      List<Example> rows = set.read(second, 5, 20).collectList().block();
      assertEquals(15, rows.size());
      for (Example e : rows) {
        assertSameRow(source.get(e.index()), e);
      }
      assertEquals(30, rows.get(0).index());
      List<Integer> sizes = new ArrayList<>();
      set.readBatches(second, 0, Long.MAX_VALUE, 10).doOnNext(b -> {
        try (b) {
          sizes.add(b.size());
          long[] idx = b.indices();
          try (Batch e = appended(source, idx)) {
            assertSameBatch(e, b);
          }
        }
      }).blockLast();
      assertEquals(List.of(10, 10, 5), sizes);
      assertEquals(source.rows, set.flux().collectList().block().stream().map(e -> source.get(e.index())).toList());
    }
  }

  @Test
  void aClosedSetRefusesReadsButEarlierViewsStayValid() {
    Shards.write(Datasets.synthetic(100, 8, 1), dir, WriteOptions.defaults().withNumShards(2));
    ShardSet set = Shards.open(dir);
    Tensor before = set.get(60).tensor("x");
    float first = before.getFloat(0);
    set.close();
    set.close();
    DatasetClosedException e = assertThrows(DatasetClosedException.class, () -> set.get(1));
    assertTrue(e.getMessage().startsWith("already closed: "), e.getMessage());
    try (BatchBuilder b = BatchBuilder.create(set.schema(), 1, POOL)) {
      assertThrows(DatasetClosedException.class, () -> set.gather(new long[] {1}, 0, 1, b));
    }
    assertEquals(first, before.getFloat(0));
  }

  @Test
  void aSecondWriteReplacesTheSetAndRemovesItsOtherShards() throws Exception {
    Shards.write(Datasets.synthetic(40, 2, 1), dir, WriteOptions.defaults().withNumShards(4));
    Shards.write(Datasets.synthetic(10, 3, 2), dir, WriteOptions.defaults().withNumShards(2));
    assertEquals(List.of("metadata.json", "shard-00000.shard", "shard-00001.shard"),
        List.copyOf(ShardTestData.files(dir).keySet()));
    try (ShardSet set = Shards.open(dir)) {
      assertEquals(Checksums.sha256(Datasets.synthetic(10, 3, 2)), Checksums.sha256(set));
    }
  }

  @Test
  void aFailingSourceLeavesNoShardSetAndNoTemporaryFiles() throws Exception {
    ExampleList good = ShardTestData.mixed(100, 6);
    Dataset<Example> failing = new ShardTestData.ExampleList(good.schema(), good.rows) {
      @Override
      public Example get(long index) {
        if (index == 73) {
          throw new IllegalStateException("row 73 is broken");
        }
        return super.get(index);
      }
    };
    for (int workers : new int[] {1, 3}) {
      Path out = dir.resolve("w" + workers);
      IllegalStateException e = assertThrows(IllegalStateException.class,
          () -> Shards.write(failing, out, WriteOptions.defaults().withNumShards(4).withWorkers(workers)));
      assertEquals("row 73 is broken", e.getMessage());
      assertFalse(Files.exists(out), "nothing at the shard set's path");
    }
    try (Stream<Path> s = Files.list(dir)) {
      assertEquals(List.of(), s.toList(), "no temporary left behind");
    }
  }

  @Test
  void rowsThatDoNotFitTheSchemaAreRefused() {
    Schema schema = Schema.of(new TensorSpec("x", DType.FLOAT32, Shape.of(2)));
    ExampleList wrong = new ExampleList(schema, List.of(Example.of(0, "x", Tensor.of(1f, 2f)),
        Example.of(1, "x", Tensor.of(1f, 2f, 3f))));
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> Shards.write(wrong, dir, WriteOptions.defaults()));
    assertTrue(e.getMessage().contains("field 'x' of example 1"), e.getMessage());
    assertFalse(Files.exists(dir.resolve("metadata.json")));
  }

  @Test
  void theRegistryRecognizesAShardSetAndWritesOne() throws Exception {
    Formats.named("shards").write(Datasets.synthetic(30, 4, 9), dir, WriteOptions.defaults().withNumShards(3));
    assertEquals("shards", Formats.detect(dir).name());
    Dataset<Example> ds = Formats.open(dir);
    try (ShardSet set = (ShardSet) ds) {
      assertEquals(Checksums.sha256(Datasets.synthetic(30, 4, 9)), Checksums.sha256(set));
    }
    List<Long> progress = new ArrayList<>();
    Shards.write(Datasets.synthetic(30, 4, 9), dir.resolve("p"),
        WriteOptions.defaults().withNumShards(2).withProgress(n -> {
          synchronized (progress) {
            progress.add(n);
          }
        }));
    assertEquals(30L, progress.stream().mapToLong(Long::longValue).sum());
    assertThrows(IllegalArgumentException.class, () -> Shards.write(Datasets.synthetic(3, 1, 1), dir.resolve("c"),
        WriteOptions.defaults().withCodec("zstd")));
  }

  @Test
  void aDatasetWithoutSchemaTakesItsFieldsFromTheFirstRow() {
    Dataset<Example> plain = ctx -> Flux.range(0, 20).map(i -> Example.of(i, "v", Tensor.of(i, -i)));
    Shards.write(plain, dir, WriteOptions.defaults().withNumShards(3).withWorkers(2));
    try (ShardSet set = Shards.open(dir)) {
      assertEquals(Schema.of(new TensorSpec("v", DType.INT32, Shape.of(2))), set.schema());
      assertEquals(-7, set.get(7).tensor("v").getInt(1));
    }
  }
}
