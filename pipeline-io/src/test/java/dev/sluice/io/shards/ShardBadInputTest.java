package dev.sluice.io.shards;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sluice.core.DatasetException;
import dev.sluice.core.DatasetFormatException;
import dev.sluice.core.Datasets;
import dev.sluice.core.MemoryManager;
import dev.sluice.core.UnsupportedFormatException;
import dev.sluice.core.internal.shardfile.FieldLayout;
import dev.sluice.core.internal.shardfile.ShardFile;
import dev.sluice.core.spi.BatchBuilder;
import dev.sluice.core.testing.NoLeaks;
import dev.sluice.io.WriteOptions;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.function.Consumer;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.io.TempDir;

/** Every bad shard set gives a typed error naming the file, the position and expected versus found. */
@ExtendWith(NoLeaks.class)
class ShardBadInputTest {
  @TempDir Path dir;
  private Path set;
  private Path blobs;

  @BeforeEach
  void write() {
    set = dir.resolve("set");
    Shards.write(Datasets.synthetic(200, 8, 1), set, WriteOptions.defaults().withNumShards(3));
    blobs = dir.resolve("blobs");
    Shards.write(ShardTestData.blobs(30, 5, 20, 2), blobs, WriteOptions.defaults().withNumShards(2));
  }

  private static <T extends DatasetException> T fails(Class<T> type, Executable open, String... fragments) {
    T e = assertThrows(type, open);
    for (String f : fragments) {
      assertTrue(e.getMessage().contains(f), "'" + f + "' in: " + e.getMessage());
    }
    return e;
  }

  private <T extends DatasetException> T failsToOpen(Class<T> type, Path shardSet, String... fragments) {
    return fails(type, () -> Shards.open(shardSet).close(), fragments);
  }

  private static void editMetadata(Path shardSet, Consumer<ObjectNode> edit) throws IOException {
    ObjectMapper json = new ObjectMapper();
    Path meta = shardSet.resolve("metadata.json");
    ObjectNode root = (ObjectNode) json.readTree(meta.toFile());
    edit.accept(root);
    json.writeValue(meta.toFile(), root);
  }

  private static ObjectNode shard(ObjectNode root, int k) {
    return (ObjectNode) ((ArrayNode) root.get("shards")).get(k);
  }

  /** The frame of a shard, read with the format's own reader. */
  private static ShardFile.Frame frame(Path shard) throws IOException {
    try (FileChannel ch = FileChannel.open(shard)) {
      return ShardFile.read(shard.toString(), ch, ch.size());
    }
  }

  private static void putLong(Path file, long position, long value) throws IOException {
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
      ch.write(ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(0, value), position);
    }
  }

  private static long getLong(Path file, long position) throws IOException {
    try (FileChannel ch = FileChannel.open(file)) {
      return ShardFile.readAt(ch, position, 8).getLong(0);
    }
  }

  private static void flipByte(Path file, long position) throws IOException {
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
      ByteBuffer b = ShardFile.readAt(ch, position, 1);
      b.put(0, (byte) (b.get(0) ^ 0x5a));
      ch.write(b, position);
    }
  }

  /** Where row {@code row}'s end offset of the blob field of {@code shard} is stored. */
  private static long offsetPosition(Path shard, long row) throws IOException {
    FieldLayout data = FieldLayout.of(ShardTestData.blobs(1, 1, 1, 1).schema().fields()).get(0);
    return frame(shard).blocks().get(data.block(FieldLayout.Buffer.OFFSETS)).offset() + 8 * row;
  }

  @Test
  void missingShard() throws IOException {
    Files.delete(set.resolve("shard-00001.shard"));
    DatasetFormatException e = failsToOpen(DatasetFormatException.class, set, "missing", "shard 1 of 3");
    assertTrue(e.resource().endsWith("shard-00001.shard"), e.resource());
  }

  @Test
  void metadataRowsDisagreeWithTheShard() throws IOException {
    editMetadata(set, root -> {
      shard(root, 1).put("rows", 70);
      root.put("dataset_len", 203);
    });
    failsToOpen(DatasetFormatException.class, set, "shard-00001.shard", "holds 67 rows but metadata.json says 70");
  }

  @Test
  void metadataFieldsDisagreeWithTheShard() throws IOException {
    editMetadata(set, root -> {
      ObjectNode x = (ObjectNode) root.get("fields").get(0);
      assertEquals("x", x.get("name").asText());
      x.putArray("shape").add(4);
    });
    failsToOpen(DatasetFormatException.class, set, "shard-00000.shard", "field 'x' values holds 2144 bytes",
        "need 1072", "metadata.json disagrees with the shard");
  }

  @Test
  void metadataChecksumDisagreesWithTheShard() throws IOException {
    String[] real = new String[1];
    editMetadata(set, root -> {
      real[0] = shard(root, 2).get("checksum").asText();
      shard(root, 2).put("checksum", "crc32c:00000000");
    });
    failsToOpen(DatasetFormatException.class, set, "shard-00002.shard",
        "checksum mismatch (expected crc32c:00000000 as metadata.json says, found " + real[0] + ")");
  }

  @Test
  void truncatedShard() throws IOException {
    Path shard = set.resolve("shard-00000.shard");
    long size = Files.size(shard);
    try (FileChannel ch = FileChannel.open(shard, StandardOpenOption.WRITE)) {
      ch.truncate(size - 10);
    }
    failsToOpen(DatasetFormatException.class, set, "shard-00000.shard",
        "truncated: metadata.json says " + size + " bytes but the file has " + (size - 10));
    editMetadata(set, root -> shard(root, 0).put("bytes", size - 10));
    failsToOpen(DatasetFormatException.class, set, "shard-00000.shard",
        "truncated: the header says " + size + " bytes but the file has " + (size - 10));
  }

  @Test
  void extendedShard() throws IOException {
    Path shard = set.resolve("shard-00002.shard");
    long size = Files.size(shard);
    Files.write(shard, new byte[] {1, 2, 3}, StandardOpenOption.APPEND);
    failsToOpen(DatasetFormatException.class, set, "shard-00002.shard",
        "extended: metadata.json says " + size + " bytes but the file has " + (size + 3));
    editMetadata(set, root -> shard(root, 2).put("bytes", size + 3));
    failsToOpen(DatasetFormatException.class, set, "shard-00002.shard",
        "extended: the header says " + size + " bytes but the file has " + (size + 3) + " (3 bytes after the footer)");
  }

  @Test
  void corruptDataIsAChecksumMismatchFoundByVerify() throws IOException {
    Path shard = set.resolve("shard-00001.shard");
    FieldLayout x = FieldLayout.of(((dev.sluice.core.HasSchema) Datasets.synthetic(1, 8, 1)).schema().fields()).get(0);
    int block = x.block(FieldLayout.Buffer.VALUES);
    ShardFile.Block values = frame(shard).blocks().get(block);
    flipByte(shard, values.offset() + 100);
    try (ShardSet s = Shards.open(set)) { // opening checks only headers and footers
      fails(DatasetFormatException.class, s::verify, "shard-00001.shard", "block " + block + " (field 'x' values, bytes "
          + values.offset() + ".." + values.end() + ")", "checksum mismatch (expected "
          + ShardFile.checksumText(values.crc()) + ", found crc32c:");
    }
  }

  @Test
  void corruptDataIsAChecksumMismatchOnEveryReadPath() throws IOException {
    Path shard = set.resolve("shard-00001.shard"); // rows 67..133
    FieldLayout x = FieldLayout.of(((dev.sluice.core.HasSchema) Datasets.synthetic(1, 8, 1)).schema().fields()).get(0);
    int block = x.block(FieldLayout.Buffer.VALUES);
    ShardFile.Block values = frame(shard).blocks().get(block);
    flipByte(shard, values.offset() + 100);
    String[] names = {"shard-00001.shard", "block " + block + " (field 'x' values, bytes " + values.offset() + ".."
        + values.end() + ")", "checksum mismatch (expected " + ShardFile.checksumText(values.crc()) + ", found crc32c:"};
    try (ShardSet s = Shards.open(set)) {
      s.get(0); // other shards read
      fails(DatasetFormatException.class, () -> s.get(130), names); // a row far from the changed one
      fails(DatasetFormatException.class, () -> s.get(130), names); // and again: the mismatch is remembered
      try (BatchBuilder b = BatchBuilder.create(s.schema(), 4, MemoryManager.shared().pool("test.bad"))) {
        fails(DatasetFormatException.class, () -> s.gather(new long[] {3, 150, 70, 199}, 0, 4, b), names);
        fails(DatasetFormatException.class, () -> s.gather(new long[] {70, 71, 72}, 0, 3, b), names);
        s.gather(new long[] {0, 1, 150, 199}, 0, 4, b); // rows of the intact shards still read
        assertEquals(4, b.size());
      }
      dev.sluice.core.Split split = s.splits().get(1);
      fails(DatasetFormatException.class, () -> s.readBatches(split, 0, split.rowCount(), 16).blockLast(), names);
      fails(DatasetFormatException.class, () -> s.read(split, 0, split.rowCount()).blockLast(), names);
    }
  }

  @Test
  void firstReadsFromSeveralThreadsAtOnceEachSeeTheMismatchOrTheRows() throws Exception {
    Path shard = set.resolve("shard-00002.shard"); // rows 134..199
    FieldLayout x = FieldLayout.of(((dev.sluice.core.HasSchema) Datasets.synthetic(1, 8, 1)).schema().fields()).get(0);
    flipByte(shard, frame(shard).blocks().get(x.block(FieldLayout.Buffer.VALUES)).offset() + 7);
    java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(4);
    try (ShardSet s = Shards.open(set)) {
      java.util.concurrent.CountDownLatch start = new java.util.concurrent.CountDownLatch(1);
      java.util.List<java.util.concurrent.Future<String>> results = new java.util.ArrayList<>();
      for (int t = 0; t < 8; t++) {
        long[] rows = t % 2 == 0 ? new long[] {150, 3, 90} : new long[] {10, 70, 100};
        results.add(pool.submit(() -> {
          start.await();
          try (BatchBuilder b = BatchBuilder.create(s.schema(), 3, MemoryManager.shared().pool("test.bad"))) {
            s.gather(rows, 0, 3, b);
            b.build().close();
            return "rows";
          } catch (DatasetFormatException e) {
            return e.getMessage();
          }
        }));
      }
      start.countDown();
      for (int t = 0; t < results.size(); t++) {
        String r = results.get(t).get();
        if (t % 2 == 0) {
          assertTrue(r.contains("shard-00002.shard") && r.contains("checksum mismatch"), r);
        } else {
          assertEquals("rows", r);
        }
      }
    } finally {
      pool.shutdown();
    }
  }

  @Test
  void nonZeroBytesBetweenBlocksAreFoundByVerify() throws IOException {
    Path shard = set.resolve("shard-00000.shard");
    ShardFile.Frame f = frame(shard);
    long gap = f.blocks().get(0).end(); // x's 67 rows of 32 bytes end inside a 64-byte line
    flipByte(shard, gap);
    try (ShardSet s = Shards.open(set)) {
      fails(DatasetFormatException.class, s::verify, "shard-00000.shard", "byte " + gap,
          "the bytes between blocks must be zero");
    }
  }

  @Test
  void corruptHeaderOrFooter() throws IOException {
    Path shard = set.resolve("shard-00001.shard");
    flipByte(shard, 20);
    failsToOpen(DatasetFormatException.class, set, "shard-00001.shard", "header checksum mismatch (expected crc32c:");
    flipByte(shard, 20);
    ShardFile.Frame f = frame(shard);
    flipByte(shard, f.footerOffset() + 9);
    failsToOpen(DatasetFormatException.class, set, "shard-00001.shard", "footer checksum mismatch (expected crc32c:");
  }

  @Test
  void notAShardAndAnUnknownVersion() throws IOException {
    Path shard = set.resolve("shard-00000.shard");
    long size = Files.size(shard);
    Files.write(shard, new byte[(int) size]);
    failsToOpen(DatasetFormatException.class, set, "shard-00000.shard", "not a Sluice shard",
        "expected magic \"SLUICESH\"");
    editMetadata(blobs, root -> root.put("version", 7));
    failsToOpen(UnsupportedFormatException.class, blobs, "metadata.json", "key version", "version 7 is not supported");
  }

  @Test
  void metadataSizesThatOverflowAreFormatErrorsNamingTheKey() throws IOException {
    editMetadata(set, root -> ((ObjectNode) root.get("fields").get(0)).putArray("shape").add(4611686018427387904L).add(8));
    failsToOpen(DatasetFormatException.class, set, "metadata.json", "key fields[0].shape",
        "shape [4611686018427387904, 8] of float32 makes values of 147573952589676412928 bytes");
    editMetadata(blobs, root -> {
      shard(root, 0).put("rows", Long.MAX_VALUE);
      root.remove("dataset_len");
    });
    failsToOpen(DatasetFormatException.class, blobs, "metadata.json", "key shards[1].rows",
        "more rows than a dataset can index");
  }

  @Test
  void aHeaderWhoseRowsOverflowTheirBlockIsAFormatError() throws IOException {
    Path shard = set.resolve("shard-00000.shard");
    ShardFile.Frame f = frame(shard);
    ByteBuffer header = ShardFile.header(1L << 62, f.blocks().size(), f.footerOffset(), f.length());
    ByteBuffer footer = ShardFile.footer(1L << 62, f.length(), f.blocks());
    try (FileChannel ch = FileChannel.open(shard, StandardOpenOption.WRITE)) {
      ch.write(header, 0);
      ch.write(footer, f.footerOffset());
    }
    String checksum = ShardFile.checksumText(ShardFile.footerChecksum(footer));
    editMetadata(set, root -> {
      shard(root, 0).put("rows", 1L << 62).put("checksum", checksum);
      root.remove("dataset_len");
    });
    failsToOpen(DatasetFormatException.class, set, "shard-00000.shard", "rows 4611686018427387904",
        "more bytes than a file can hold");
  }

  @Test
  void malformedMetadata() throws IOException {
    Files.writeString(set.resolve("metadata.json"), "{\"format\": \"sluice-shards\", \"version\": 1, ");
    failsToOpen(DatasetFormatException.class, set, "metadata.json", "malformed JSON");
    editMetadata(blobs, root -> root.put("num_shards", 3));
    failsToOpen(DatasetFormatException.class, blobs, "metadata.json", "key num_shards", "says 3 but 2 shards are listed");
  }

  @Test
  void anOffsetPointingOutsideItsShardNamesTheRecord() throws IOException {
    Path shard = blobs.resolve("shard-00001.shard"); // rows 15..29
    putLong(shard, offsetPosition(shard, 4), 1L << 40);
    try (ShardSet s = Shards.open(blobs)) {
      fails(DatasetFormatException.class, () -> s.get(17), "shard-00001.shard", "block 0 (field 'data' offsets",
          "checksum mismatch");
    }
    reseal(blobs, shard, 0); // as a writer with a bug would have written it
    try (ShardSet s = Shards.open(blobs)) {
      s.get(17);
      fails(DatasetFormatException.class, () -> s.get(18), "shard-00001.shard", "field 'data', record 18 (row 3 of"
          + " shard-00001.shard)", "offsets [", ", 1099511627776) point outside the values block of");
      try (BatchBuilder b = BatchBuilder.create(s.schema(), 3, MemoryManager.shared().pool("test.bad"))) {
        fails(DatasetFormatException.class, () -> s.gather(new long[] {2, 19, 18}, 0, 3, b), "record 19");
      }
    }
  }

  @Test
  void aNestedOffsetOutsideItsLevelNamesTheRecordAndTheDepth() throws IOException {
    Path nested = dir.resolve("nested");
    ShardTestData.ExampleList source = ShardTestData.mixed(30, 4);
    Shards.write(source, nested, WriteOptions.defaults());
    FieldLayout matrix = FieldLayout.of(ShardTestData.MIXED.fields()).get(ShardTestData.MIXED.indexOf("matrix"));
    Path shard = nested.resolve("shard-00000.shard");
    long depth1 = frame(shard).blocks().get(matrix.offsetsBlock(1)).offset();
    putLong(shard, depth1 + 8, 1L << 30); // the end of the first inner list
    reseal(nested, shard, matrix.offsetsBlock(1));
    long row = 0;
    while (source.get(row).tensor("matrix").shape().dim(0) == 0) {
      row++; // the row holding that list: the first with a non-empty matrix
    }
    long r = row;
    try (ShardSet s = Shards.open(nested)) {
      fails(DatasetFormatException.class, () -> s.get(r), "shard-00000.shard", "field 'matrix', record " + r
          + " (item 0 at depth 1 of shard-00000.shard)", "offsets [0, 1073741824) point outside the values block of");
      try (BatchBuilder b = BatchBuilder.create(s.schema(), 1, MemoryManager.shared().pool("test.bad"))) {
        fails(DatasetFormatException.class, () -> s.gather(new long[] {r}, 0, 1, b), "field 'matrix', record " + r);
      }
    }
  }

  @Test
  void decreasingOffsetsNameTheRecord() throws IOException {
    Path shard = blobs.resolve("shard-00000.shard");
    long start = getLong(shard, offsetPosition(shard, 5));
    putLong(shard, offsetPosition(shard, 6), start - 3);
    try (ShardSet s = Shards.open(blobs)) {
      // the offsets were edited without their block checksum: reads and verify say so first
      fails(DatasetFormatException.class, () -> s.get(5), "field 'data' offsets", "checksum mismatch");
      fails(DatasetFormatException.class, s::verify, "field 'data' offsets", "checksum mismatch");
    }
    reseal(blobs, shard, 0);
    try (ShardSet s = Shards.open(blobs)) {
      fails(DatasetFormatException.class, () -> s.get(5), "shard-00000.shard", "field 'data', record 5",
          "offsets decrease: offset[5] = " + start + " > offset[6] = " + (start - 3));
    }
  }

  /**
   * Recomputes the checksums of {@code shard} after an edit of block {@code block}: its CRC32C, the
   * footer checksum and the checksum metadata.json lists, as a writer with a bug would have written them.
   */
  private static void reseal(Path shardSet, Path shard, int block) throws IOException {
    ShardFile.Frame f = frame(shard);
    java.util.List<ShardFile.Block> blocks = new java.util.ArrayList<>(f.blocks());
    ShardFile.Block b = blocks.get(block);
    java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
    try (FileChannel ch = FileChannel.open(shard, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
      crc.update(ShardFile.readAt(ch, b.offset(), (int) b.length()));
      blocks.set(block, new ShardFile.Block(b.offset(), b.length(), (int) crc.getValue()));
      ByteBuffer footer = ShardFile.footer(f.rows(), f.length(), blocks);
      ch.write(footer, f.footerOffset());
      String checksum = ShardFile.checksumText(ShardFile.footerChecksum(footer));
      String name = shard.getFileName().toString();
      editMetadata(shardSet, root -> root.get("shards").forEach(s -> {
        if (s.get("file").asText().equals(name)) {
          ((ObjectNode) s).put("checksum", checksum);
        }
      }));
    }
  }

  @Test
  void verifyChecksEveryOffsetEvenWhenTheChecksumsAgree() throws IOException {
    Path shard = blobs.resolve("shard-00000.shard");
    long start = getLong(shard, offsetPosition(shard, 8));
    putLong(shard, offsetPosition(shard, 9), start - 1);
    reseal(blobs, shard, 0);
    try (ShardSet s = Shards.open(blobs)) {
      s.get(7);
      fails(DatasetFormatException.class, s::verify, "shard-00000.shard", "field 'data', record 8",
          "offsets decrease: offset[8] = " + start + " > offset[9] = " + (start - 1));
    }
  }

  @Test
  void offsetsThatDoNotSpanTheValuesAreRefusedOnOpen() throws IOException {
    Path shard = blobs.resolve("shard-00000.shard");
    long last = getLong(shard, offsetPosition(shard, 15));
    putLong(shard, offsetPosition(shard, 15), last - 1);
    failsToOpen(DatasetFormatException.class, blobs, "shard-00000.shard", "block 0 (field 'data' offsets",
        "checksum mismatch");
    reseal(blobs, shard, 0);
    failsToOpen(DatasetFormatException.class, blobs, "shard-00000.shard", "field 'data' offsets",
        "run from 0 to " + (last - 1) + " but must run from 0 to " + last);
  }

  @Test
  void aShardTruncatedBeforeItsFirstReadIsATypedErrorNamingTheFileNotACrash() throws IOException {
    Path big = dir.resolve("unread");
    Shards.write(Datasets.synthetic(20_000, 16, 3), big, WriteOptions.defaults().withNumShards(1));
    Path shard = big.resolve("shard-00000.shard");
    try (ShardSet s = Shards.open(big)) {
      try (FileChannel ch = FileChannel.open(shard, StandardOpenOption.WRITE)) {
        ch.truncate(4096);
      }
      fails(DatasetException.class, () -> s.get(15_000).tensor("x").getFloat(0), "shard-00000.shard");
      fails(DatasetException.class, s::verify, "shard-00000.shard");
    }
  }

  @Test
  void aShardTruncatedBeforeItsFirstReadStatesTheSizeFoundAndTheSizeTheReadNeeds() throws IOException {
    Path big = dir.resolve("unread-sizes");
    Shards.write(Datasets.synthetic(20_000, 16, 3), big, WriteOptions.defaults().withNumShards(1));
    Path shard = big.resolve("shard-00000.shard");
    long size = Files.size(shard);
    try (ShardSet s = Shards.open(big)) {
      try (FileChannel ch = FileChannel.open(shard, StandardOpenOption.WRITE)) {
        ch.truncate(4096);
      }
      DatasetException e = fails(DatasetException.class, () -> s.get(15_000).tensor("x").getFloat(0),
          "shard-00000.shard", "the file has 4096 bytes but the mapping needs ", "truncated after it was opened");
      long needs = Long.parseLong(e.getMessage().replaceAll("(?s).*the mapping needs (\\d+).*", "$1"));
      assertTrue(needs > 4096 && needs <= size, "needs " + needs + " of the " + size + " bytes written");
    }
  }

  @Test
  void aShardTruncatedAfterOpenIsADataErrorNotACrash() throws IOException {
    Path big = dir.resolve("big");
    Shards.write(Datasets.synthetic(20_000, 16, 3), big, WriteOptions.defaults().withNumShards(1));
    Path shard = big.resolve("shard-00000.shard");
    try (ShardSet s = Shards.open(big)) {
      for (int i = 0; i < 20_000; i++) {
        assertEquals(i % 1000, s.get(i % 1000).tensor("label").getLong(0));
      }
      try (FileChannel ch = FileChannel.open(shard, StandardOpenOption.WRITE)) {
        ch.truncate(4096);
      }
      for (long row : new long[] {15_000, 19_999}) {
        fails(DatasetFormatException.class, () -> s.get(row).tensor("x").getFloat(0), "shard-00000.shard changed"
            + " while mapped");
      }
      try (BatchBuilder b = BatchBuilder.create(s.schema(), 2, MemoryManager.shared().pool("test.trunc"))) {
        fails(DatasetFormatException.class, () -> s.gather(new long[] {12_000, 18_000}, 0, 2, b), "changed while mapped");
      }
    }
  }
}
