package dev.sluice.io.parquet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.core.Batch;
import dev.sluice.core.DatasetException;
import dev.sluice.core.DatasetFormatException;
import dev.sluice.core.MemoryManager;
import dev.sluice.core.Options.NullPolicy;
import dev.sluice.core.Shape;
import dev.sluice.core.UnsupportedFormatException;
import dev.sluice.core.testing.NoLeaks;
import dev.sluice.io.parquet.ParquetTestFiles.Config;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.apache.parquet.column.ParquetProperties.WriterVersion;
import org.apache.parquet.conf.PlainParquetConfiguration;
import org.apache.parquet.crypto.FileEncryptionProperties;
import org.apache.parquet.example.data.Group;
import org.apache.parquet.example.data.simple.SimpleGroupFactory;
import org.apache.parquet.format.CompressionCodec;
import org.apache.parquet.format.FileMetaData;
import org.apache.parquet.format.Util;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.hadoop.ParquetWriter;
import org.apache.parquet.hadoop.example.ExampleParquetWriter;
import org.apache.parquet.hadoop.metadata.ColumnChunkMetaData;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;
import org.apache.parquet.io.LocalInputFile;
import org.apache.parquet.io.LocalOutputFile;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.MessageTypeParser;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import reactor.test.StepVerifier;

/** Bad files are refused with typed errors naming the file and position; nothing leaks or hangs. */
@ExtendWith(NoLeaks.class)
class ParquetBadInputTest {
  private static final MessageType SIMPLE = MessageTypeParser.parseMessageType("""
      message simple {
        required int64 id;
        optional group x (LIST) { repeated group list { required float element; } }
        optional binary s (STRING);
      }
      """);
  private static final Config PLAIN_V1 =
      new Config(CompressionCodecName.UNCOMPRESSED, WriterVersion.PARQUET_1_0, false, false, true);
  private static final Config SNAPPY =
      new Config(CompressionCodecName.SNAPPY, WriterVersion.PARQUET_1_0, false, false, true);

  @TempDir
  Path dir;

  private static void assertContains(String message, String... parts) {
    for (String p : parts) {
      assertTrue(message.contains(p), "expected '" + p + "' in: " + message);
    }
  }

  @AfterEach
  void quiesce() {
    // discards of asynchronously decoded row groups may land after the error reached the test
    Awaitility.await().atMost(Duration.ofSeconds(20)).until(() -> MemoryManager.shared().outstandingBytes() == 0);
  }

  private Path simpleFile(String name, Config c, int rows) throws IOException {
    Path f = dir.resolve(name);
    ParquetTestFiles.write(f, SIMPLE, Map.of(), c, rows, 100, 25, 42);
    return f;
  }

  private static DatasetException readAll(ParquetDataset ds) {
    return assertThrows(DatasetException.class, () -> ds.batches(16).doOnNext(Batch::close).blockLast(Duration.ofSeconds(60)));
  }

  @Test
  void aChunkWhosePagesHoldMoreValuesThanItsMetadataSaysIsAFormatError() throws IOException {
    Path f = dir.resolve("miscounted.parquet");
    MiscountedChunk.write(f);
    DatasetFormatException e = assertThrows(DatasetFormatException.class,
        () -> dev.sluice.io.Checksums.sha256(Parquet.open(f)));
    assertContains(e.getMessage(), f.toString(), "row group 0");
    e = assertThrows(DatasetFormatException.class, () -> Parquet.open(f).flux().blockLast(Duration.ofSeconds(60)));
    assertContains(e.getMessage(), f.toString(), "row group 0");
  }

  @Test
  void wrongMagicIsNotParquet() throws IOException {
    Path f = dir.resolve("bad.parquet");
    Files.writeString(f, "this is certainly not a parquet file");
    DatasetFormatException e = assertThrows(DatasetFormatException.class, () -> Parquet.open(f));
    assertContains(e.getMessage(), f.toString(), "not a Parquet file", "PAR1");
    assertTrue(!new ParquetFormat().probe(f));
  }

  @Test
  void truncatedFileIsRefused() throws IOException {
    Path f = simpleFile("t.parquet", PLAIN_V1, 300);
    byte[] all = Files.readAllBytes(f);
    Files.write(f, Arrays.copyOf(all, all.length / 2));
    DatasetFormatException e = assertThrows(DatasetFormatException.class, () -> Parquet.open(f));
    assertContains(e.getMessage(), f.toString(), "truncated");
    Files.write(f, Arrays.copyOf(all, 6));
    assertContains(assertThrows(DatasetFormatException.class, () -> Parquet.open(f)).getMessage(), "truncated");
  }

  @Test
  void corruptFooterIsRefused() throws IOException {
    Path f = simpleFile("c.parquet", PLAIN_V1, 50);
    byte[] all = Files.readAllBytes(f);
    int footerLen = ByteBuffer.wrap(all, all.length - 8, 4).order(ByteOrder.LITTLE_ENDIAN).getInt();
    for (int i = all.length - 8 - footerLen; i < all.length - 8; i++) {
      all[i] = (byte) 0xEE;
    }
    Files.write(f, all);
    DatasetFormatException e = assertThrows(DatasetFormatException.class, () -> Parquet.open(f));
    assertContains(e.getMessage(), f.toString(), "footer");
  }

  /** Rewrites the footer of {@code f} after {@code edit}. */
  private static void rewriteFooter(Path f, Consumer<FileMetaData> edit) throws IOException {
    byte[] all = Files.readAllBytes(f);
    int footerLen = ByteBuffer.wrap(all, all.length - 8, 4).order(ByteOrder.LITTLE_ENDIAN).getInt();
    int start = all.length - 8 - footerLen;
    FileMetaData md = Util.readFileMetaData(new ByteArrayInputStream(all, start, footerLen));
    edit.accept(md);
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    out.write(all, 0, start);
    ByteArrayOutputStream footer = new ByteArrayOutputStream();
    Util.writeFileMetaData(md, footer);
    out.write(footer.toByteArray());
    out.write(ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(footer.size()).array());
    out.write("PAR1".getBytes(StandardCharsets.US_ASCII));
    Files.write(f, out.toByteArray());
  }

  @Test
  void unsupportedCodecNamesTheCodecAndWhatToAdd() throws IOException {
    Path f = simpleFile("codec.parquet", PLAIN_V1, 50);
    rewriteFooter(f, md -> md.getRow_groups().get(0).getColumns().get(2).getMeta_data().setCodec(CompressionCodec.LZO));
    UnsupportedFormatException e = assertThrows(UnsupportedFormatException.class, () -> Parquet.open(f));
    assertContains(e.getMessage(), f.toString(), "LZO", "column 's'", "BROTLI", "re-write the file");
    // a projection without the column reads fine
    ParquetDataset ds = Parquet.open(f, ParquetOptions.builder().columns("id").build());
    assertEquals(50, ds.batches(7).map(b -> { try (b) { return b.size(); } }).reduce(0, Integer::sum).block());
  }

  @Test
  void encryptedFilesWithoutKeysAreRefused() throws IOException {
    byte[] key = new byte[16];
    Arrays.fill(key, (byte) 7);
    for (boolean plaintextFooter : new boolean[] {false, true}) {
      Path f = dir.resolve("enc-" + plaintextFooter + ".parquet");
      FileEncryptionProperties.Builder props = FileEncryptionProperties.builder(key);
      if (plaintextFooter) {
        props.withPlaintextFooter();
      }
      SimpleGroupFactory gf = new SimpleGroupFactory(SIMPLE);
      try (ParquetWriter<Group> w = ExampleParquetWriter.builder(new LocalOutputFile(f))
          .withConf(new PlainParquetConfiguration()).withType(SIMPLE).withEncryption(props.build()).build()) {
        w.write(gf.newGroup().append("id", 1L));
      }
      UnsupportedFormatException e = assertThrows(UnsupportedFormatException.class, () -> Parquet.open(f));
      assertContains(e.getMessage(), f.toString(), "encrypted");
    }
  }

  /** Overwrites bytes inside the data of column {@code column} of row group {@code rg}. */
  private static void damageColumn(Path f, int rg, String column, int fromEnd, int count) throws IOException {
    ColumnChunkMetaData c;
    try (ParquetFileReader r = ParquetFileReader.open(new LocalInputFile(f))) {
      c = r.getRowGroups().get(rg).getColumns().stream()
          .filter(x -> x.getPath().toDotString().equals(column)).findFirst().orElseThrow();
    }
    byte[] all = Files.readAllBytes(f);
    long end = c.getStartingPos() + c.getTotalSize();
    for (int i = 0; i < count; i++) {
      int pos = (int) (end - fromEnd - i);
      all[pos] = (byte) (all[pos] ^ 0x5A);
    }
    Files.write(f, all);
  }

  @Test
  void pageChecksumMismatchIsCaughtWhenVerificationIsOn() throws IOException {
    Path f = simpleFile("crc.parquet", PLAIN_V1, 300);
    damageColumn(f, 1, "id", 3, 1);
    ParquetDataset ds = Parquet.open(f, ParquetOptions.builder()
        .pageChecksums(ParquetOptions.PageChecksums.VERIFY).decodeParallelism(2).build());
    DatasetException e = readAll(ds);
    assertContains(e.getMessage(), f.toString(), "row group 1", "checksum");
  }

  @Test
  void aPageThatFailsToDecodeNamesTheRowGroupAndColumn() throws IOException {
    Path f = simpleFile("page.parquet", SNAPPY, 300);
    damageColumn(f, 2, "s", 2, 24);
    ParquetDataset ds = Parquet.open(f, ParquetOptions.builder().decodeParallelism(2).build());
    DatasetException e = readAll(ds);
    assertContains(e.getMessage(), f.toString(), "row group 2");
    // single-threaded path too
    DatasetException e2 = assertThrows(DatasetException.class,
        () -> ds.readBatches(ds.splits().get(2), 0, Long.MAX_VALUE, 8).doOnNext(Batch::close).blockLast());
    assertContains(e2.getMessage(), "row group 2");
  }

  @Test
  void nullPolicyFailNamesTheRow() throws IOException {
    Path f = simpleFile("n.parquet", PLAIN_V1, 300);
    ParquetDataset fill = Parquet.open(f);
    long nulls = fill.batches(50).map(b -> {
      try (b) {
        return b.column("s").hasValidity() ? 1L : 0L;
      }
    }).reduce(0L, Long::sum).block();
    assertTrue(nulls > 0, "the file should have nulls");
    ParquetDataset strict = Parquet.open(f, ParquetOptions.builder().nullPolicy(NullPolicy.FAIL).build());
    DatasetFormatException e = assertThrows(DatasetFormatException.class,
        () -> strict.batches(50).doOnNext(Batch::close).blockLast());
    assertContains(e.getMessage(), f.toString(), "row ", "null");
  }

  @Test
  void footerSizesThatOverflowAreFormatErrorsNamingTheFileAndTheField() throws IOException {
    Path f = dir.resolve("huge-shape.parquet");
    ParquetTestFiles.write(f, SIMPLE, Map.of("sluice.shape.x", "[4611686018427387904, 8]"), PLAIN_V1, 20, 100, 25, 42);
    DatasetFormatException e = assertThrows(DatasetFormatException.class, () -> Parquet.open(f));
    assertContains(e.getMessage(), f.toString(), "column 'x'", "footer key 'sluice.shape.x'",
        "[4611686018427387904, 8] of float32, 147573952589676412928 bytes each");
    Path rows = simpleFile("rows.parquet", PLAIN_V1, 300); // 3 row groups
    rewriteFooter(rows, md -> md.getRow_groups().get(1).setNum_rows(Long.MAX_VALUE));
    e = assertThrows(DatasetFormatException.class, () -> Parquet.open(rows));
    assertContains(e.getMessage(), rows.toString(), "row group 1", "the footer says " + Long.MAX_VALUE + " rows after 100");
    rewriteFooter(rows, md -> md.getRow_groups().get(1).setNum_rows(-5));
    e = assertThrows(DatasetFormatException.class, () -> Parquet.open(rows));
    assertContains(e.getMessage(), rows.toString(), "row group 1", "-5 rows, fewer than 0");
  }

  @Test
  void aListLongerOrShorterThanItsDeclaredShapeIsAnError() throws IOException {
    Path f = simpleFile("shape.parquet", PLAIN_V1, 100);
    // x holds lists of 0..3 elements: declaring [3] makes the shorter ones an error
    ParquetDataset ds = Parquet.open(f, ParquetOptions.builder().shape("x", Shape.of(3)).build());
    DatasetFormatException e = assertThrows(DatasetFormatException.class,
        () -> ds.batches(10).doOnNext(Batch::close).blockLast());
    assertContains(e.getMessage(), "column 'x'", "row ", "[3]");
  }

  @Test
  void aColumnSluiceCannotReadIsRefusedNamingItUnlessProjectedAway() throws IOException {
    MessageType odd = MessageTypeParser.parseMessageType("""
        message n {
          required int32 id;
          optional group bad (LIST) { required int32 a; required int32 b; }
        }
        """);
    Path f = dir.resolve("odd.parquet");
    ParquetTestFiles.write(f, odd, Map.of(), PLAIN_V1, 20, 100, 100, 1);
    UnsupportedFormatException e = assertThrows(UnsupportedFormatException.class, () -> Parquet.open(f));
    assertContains(e.getMessage(), "'bad'", "LIST group without a single repeated field", "column projection");
    e = assertThrows(UnsupportedFormatException.class, () -> Parquet.open(f, ParquetOptions.builder().columns("bad").build()));
    assertContains(e.getMessage(), "'bad'");
    assertEquals(20, Parquet.open(f, ParquetOptions.builder().columns("id").build())
        .batches(8).doOnNext(Batch::close).map(Batch::size).reduce(0, Integer::sum).block());
  }

  @Test
  void aNullElementInADeclaredShapeListIsAnErrorNotAZero() throws IOException {
    MessageType t = MessageTypeParser.parseMessageType("""
        message t { optional group x (LIST) { repeated group list { optional float element; } } }
        """);
    Path f = dir.resolve("fixed-null.parquet");
    SimpleGroupFactory gf = new SimpleGroupFactory(t);
    try (ParquetWriter<Group> w = ParquetTestFiles.writer(f, t, Map.of("sluice.shape.x", "[2]"), PLAIN_V1, 100, 100)) {
      Group g = gf.newGroup();
      Group x = g.addGroup(0);
      x.addGroup(0).add(0, 1f);
      x.addGroup(0); // a null element
      w.write(g);
    }
    DatasetFormatException e = assertThrows(DatasetFormatException.class,
        () -> Parquet.open(f).batches(4).doOnNext(Batch::close).blockLast());
    assertContains(e.getMessage(), f.toString(), "row group 0, row 0", "'x'", "null element 1", "without a declared shape");
    // without the declared shape the null stays a null
    ParquetDataset ds = Parquet.open(f, ParquetOptions.builder().shape("x", ParquetOptions.VARIABLE).build());
    assertEquals(Arrays.asList(1.0, null), ParquetTestFiles.actual(ds.flux().blockFirst(), ds.schema().field("x")));
  }

  @Test
  void cancelMidFileReleasesEverything() throws Exception {
    Path f = simpleFile("cancel.parquet", SNAPPY, 1000);
    ParquetDataset ds = Parquet.open(f, ParquetOptions.builder().decodeParallelism(2).build());
    List<Batch> seen = new CopyOnWriteArrayList<>();
    CountDownLatch done = new CountDownLatch(1);
    StepVerifier.create(ds.batches(10).doFinally(s -> done.countDown()), 0)
        .thenRequest(3)
        .consumeNextWith(seen::add)
        .consumeNextWith(seen::add)
        .consumeNextWith(seen::add)
        .thenCancel()
        .verify(Duration.ofSeconds(30));
    assertTrue(done.await(10, TimeUnit.SECONDS));
    seen.forEach(Batch::close);
    // the single-split path
    CountDownLatch done2 = new CountDownLatch(1);
    StepVerifier.create(ds.readBatches(ds.splits().get(3), 0, Long.MAX_VALUE, 10).doFinally(s -> done2.countDown()), 1)
        .consumeNextWith(Batch::close)
        .thenCancel()
        .verify(Duration.ofSeconds(30));
    assertTrue(done2.await(10, TimeUnit.SECONDS));
  }

  @Test
  void emptyFilesHaveNoSplitsAndReadNothing() throws IOException {
    Path f = dir.resolve("empty.parquet");
    ParquetTestFiles.write(f, SIMPLE, Map.of(), PLAIN_V1, 0, 100, 100, 1);
    ParquetDataset ds = Parquet.open(f);
    assertEquals(0, ds.rowCount());
    assertEquals(0, ds.splits().size());
    assertEquals(3, ds.schema().size());
    StepVerifier.create(ds.batches(8)).verifyComplete();
    StepVerifier.create(ds.flux()).verifyComplete();
  }

  @Test
  void emptyRowGroupsBetweenFullOnesAreSkippedWithoutGaps() throws IOException {
    // parquet-java will not write an empty row group; other writers do, so put two into the footer
    Path f = dir.resolve("holes.parquet");
    ParquetTestFiles.write(f, SIMPLE, Map.of(), SNAPPY, 50, 30, 10, 9);
    List<Group> want = ParquetTestFiles.readGroups(f);
    rewriteFooter(f, md -> {
      org.apache.parquet.format.RowGroup empty = md.getRow_groups().get(0).deepCopy();
      empty.setNum_rows(0);
      empty.getColumns().forEach(c -> c.getMeta_data().setNum_values(0));
      md.getRow_groups().add(0, empty);
      md.getRow_groups().add(2, empty.deepCopy());
    });
    ParquetDataset ds = Parquet.open(f, ParquetOptions.builder().decodeParallelism(2).build());
    assertEquals(List.of(0L, 30L, 0L, 20L), ds.splits().stream().map(dev.sluice.core.Split::rowCount).toList());
    List<Batch> batches = ds.batches(7).collectList().block();
    try {
      assertEquals(50, ParquetTestFiles.assertBatchesMatch(batches, want, 0, ParquetTestFiles.plans(ds, f), "holes"));
    } finally {
      batches.forEach(Batch::close);
    }
    assertEquals(50, ds.flux().count().block());
  }

  @Test
  void aFileTruncatedWhileMappedFailsTheReadInsteadOfCrashing() throws IOException {
    Path f = simpleFile("shrinks.parquet", PLAIN_V1, 400);
    ParquetDataset ds = Parquet.open(f, ParquetOptions.builder().localFiles(ParquetOptions.LocalFiles.MAPPED).build());
    try (java.nio.channels.FileChannel ch = java.nio.channels.FileChannel.open(f, java.nio.file.StandardOpenOption.WRITE)) {
      ch.truncate(ch.size() / 3);
    }
    DatasetException e = assertThrows(DatasetException.class,
        () -> ds.batches(16).doOnNext(Batch::close).blockLast(Duration.ofSeconds(60)));
    assertContains(e.getMessage(), f.toString());
  }

  /** A file whose one column chunk is 2.4 MB: large enough for the default reads to map a window. */
  private Path bigChunkFile(String name) throws IOException {
    Path f = dir.resolve(name);
    MessageType schema = MessageTypeParser.parseMessageType("message big { required binary blob; }");
    java.util.Random rnd = new java.util.Random(11);
    SimpleGroupFactory groups = new SimpleGroupFactory(schema);
    try (ParquetWriter<Group> w = ParquetTestFiles.writer(f, schema, Map.of(), PLAIN_V1, 300, 50)) {
      for (int r = 0; r < 300; r++) {
        byte[] b = new byte[8192];
        rnd.nextBytes(b);
        w.write(groups.newGroup().append("blob", org.apache.parquet.io.api.Binary.fromConstantByteArray(b)));
      }
    }
    return f;
  }

  @Test
  void theDefaultReadOfALargeChunkIsExactAndAFileTruncatedUnderItFailsCleanly() throws IOException {
    Path f = bigChunkFile("big.parquet");
    List<Group> want = ParquetTestFiles.readGroups(f);
    ParquetDataset ds = Parquet.open(f); // default: a mapped window per column-chunk read
    List<dev.sluice.core.Example> rows = ds.flux().collectList().block(Duration.ofSeconds(60));
    assertEquals(300, rows.size());
    for (int r = 0; r < 300; r++) {
      byte[] expected = want.get(r).getBinary("blob", 0).getBytes();
      assertTrue(Arrays.equals(expected, rows.get(r).tensor("blob").toByteArray()), "row " + r);
    }
    ParquetDataset shrinking = Parquet.open(f);
    try (java.nio.channels.FileChannel ch = java.nio.channels.FileChannel.open(f, java.nio.file.StandardOpenOption.WRITE)) {
      ch.truncate(ch.size() / 3);
    }
    DatasetException e = assertThrows(DatasetException.class,
        () -> shrinking.batches(16).doOnNext(Batch::close).blockLast(Duration.ofSeconds(60)));
    assertContains(e.getMessage(), f.toString());
  }

  @Test
  void missingFilesAndEmptyDirectoriesAreIoErrorsNamingThePath() throws IOException {
    Path missing = dir.resolve("nope.parquet");
    assertContains(assertThrows(dev.sluice.core.DatasetIOException.class, () -> Parquet.open(missing)).getMessage(),
        missing.toString());
    assertContains(assertThrows(dev.sluice.core.DatasetIOException.class,
        () -> Parquet.open(missing.toUri().toString(), ParquetOptions.defaults())).getMessage(), "nope.parquet");
    Path empty = Files.createDirectory(dir.resolve("empty-dir"));
    assertContains(assertThrows(dev.sluice.core.DatasetIOException.class, () -> Parquet.open(empty)).getMessage(),
        empty.toString());
  }
}
