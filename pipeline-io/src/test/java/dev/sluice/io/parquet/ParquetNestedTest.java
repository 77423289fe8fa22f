package dev.sluice.io.parquet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.core.Batch;
import dev.sluice.core.DType;
import dev.sluice.core.Example;
import dev.sluice.core.Shape;
import dev.sluice.core.Split;
import dev.sluice.core.TensorSpec;
import dev.sluice.core.testing.NoLeaks;
import dev.sluice.io.Checksums;
import dev.sluice.io.parquet.ParquetTestFiles.Config;
import dev.sluice.io.parquet.internal.ColumnPlan;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.parquet.column.ParquetProperties.WriterVersion;
import org.apache.parquet.example.data.Group;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.MessageTypeParser;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Nested columns in the list and map layouts real writers produce, written by parquet-java and
 * checked value by value (nulls at every level included) against parquet-java's own Group reader,
 * on the columnar path, the row path and through the canonical bytes of a checksum.
 */
@ExtendWith(NoLeaks.class)
class ParquetNestedTest {
  /**
   * pyarrow / DuckDB (3-level {@code list}/{@code element}, all optional), required at every
   * level, three levels of lists, Spark's legacy {@code bag}/{@code array}, Impala's
   * {@code item}, parquet-avro's 2-level {@code array} (primitive and struct) and {@code _tuple},
   * a list of structs with string and list-of-string leaves, maps of strings and of lists, the
   * legacy MAP_KEY_VALUE annotation, a bare repeated group and a repeated field inside a struct.
   */
  static final MessageType LAYOUTS = MessageTypeParser.parseMessageType("""
      message layouts {
        required int64 id;
        optional group tags (LIST) { repeated group list { optional binary element (STRING); } }
        required group req_tags (LIST) { repeated group list { required binary element (STRING); } }
        optional group grid (LIST) { repeated group list { optional group element (LIST) {
          repeated group list { optional group element (LIST) { repeated group list { optional int32 element; } } } } } }
        optional group spark_legacy (LIST) { repeated group bag { optional double array; } }
        optional group impala (LIST) { repeated group list { optional int64 item; } }
        required group avro (LIST) { repeated int32 array; }
        optional group avro_rec (LIST) { repeated group array { required binary s (STRING); optional int32 n; } }
        optional group tup (LIST) { repeated group tup_tuple { required float v; } }
        optional group people (LIST) { repeated group list { optional group element {
          optional binary name (STRING);
          optional group nicks (LIST) { repeated group list { optional binary element (STRING); } } } } }
        optional group attrs (MAP) { repeated group key_value { required binary key (STRING); optional binary value (STRING); } }
        optional group scores (MAP) { repeated group key_value { required binary key (STRING);
          optional group value (LIST) { repeated group list { optional int32 element; } } } }
        optional group legacy_map (MAP) { repeated group map (MAP_KEY_VALUE) { required int32 key; optional int64 value; } }
        repeated group pts { required float px; optional float py; }
        optional group st { repeated int32 r; optional binary label (STRING); }
      }
      """);

  @TempDir
  Path dir;

  @Test
  void everyLayoutHasTheShapeAndNullabilityOfItsLevels() throws Exception {
    Path f = dir.resolve("schema.parquet");
    ParquetTestFiles.write(f, LAYOUTS, Map.of(), config(0), 3, 100, 100, 1);
    var s = Parquet.open(f).schema();
    assertEquals(new TensorSpec("tags", DType.STRING, Shape.of(-1), true, 0b1), s.field("tags"));
    assertEquals(new TensorSpec("req_tags", DType.STRING, Shape.of(-1), false, 0), s.field("req_tags"));
    assertEquals(new TensorSpec("grid", DType.INT32, Shape.of(-1, -1, -1), true, 0b111), s.field("grid"));
    assertEquals(new TensorSpec("spark_legacy", DType.FLOAT64, Shape.of(-1), true, 0b1), s.field("spark_legacy"));
    assertEquals(new TensorSpec("impala", DType.INT64, Shape.of(-1), true, 0b1), s.field("impala"));
    assertEquals(new TensorSpec("avro", DType.INT32, Shape.of(-1), false, 0), s.field("avro"));
    assertEquals(new TensorSpec("avro_rec.s", DType.STRING, Shape.of(-1), true, 0), s.field("avro_rec.s"));
    assertEquals(new TensorSpec("avro_rec.n", DType.INT32, Shape.of(-1), true, 0b1), s.field("avro_rec.n"));
    assertEquals(new TensorSpec("tup.v", DType.FLOAT32, Shape.of(-1), true, 0), s.field("tup.v"));
    assertEquals(new TensorSpec("people.name", DType.STRING, Shape.of(-1), true, 0b1), s.field("people.name"));
    assertEquals(new TensorSpec("people.nicks", DType.STRING, Shape.of(-1, -1), true, 0b11), s.field("people.nicks"));
    assertEquals(new TensorSpec("attrs.key", DType.STRING, Shape.of(-1), true, 0), s.field("attrs.key"));
    assertEquals(new TensorSpec("attrs.value", DType.STRING, Shape.of(-1), true, 0b1), s.field("attrs.value"));
    assertEquals(new TensorSpec("scores.value", DType.INT32, Shape.of(-1, -1), true, 0b11), s.field("scores.value"));
    assertEquals(new TensorSpec("legacy_map.value", DType.INT64, Shape.of(-1), true, 0b1), s.field("legacy_map.value"));
    assertEquals(new TensorSpec("pts.px", DType.FLOAT32, Shape.of(-1), false, 0), s.field("pts.px"));
    assertEquals(new TensorSpec("pts.py", DType.FLOAT32, Shape.of(-1), false, 0b1), s.field("pts.py"));
    assertEquals(new TensorSpec("st.r", DType.INT32, Shape.of(-1), true, 0), s.field("st.r"));
  }

  @Test
  void everyLayoutMatchesTheGroupReaderOnBothPathsAndInItsChecksum() throws Exception {
    int seed = 11;
    for (int k = 0; k < 4; k++) {
      Config c = config(k);
      Path f = dir.resolve("layouts-" + k + ".parquet");
      int rows = 450;
      ParquetTestFiles.write(f, LAYOUTS, Map.of(), c, rows, 160, 35, seed++);
      List<Group> groups = ParquetTestFiles.readGroups(f);
      ParquetDataset ds = Parquet.open(f);
      List<ColumnPlan> plans = ParquetTestFiles.plans(ds, f);
      int row = 0;
      for (Split s : ds.splits()) {
        List<Batch> batches = ds.readBatches(s, 0, Long.MAX_VALUE, 61).collectList().block();
        try {
          row = ParquetTestFiles.assertBatchesMatch(batches, groups, row, plans, c + " " + s.id());
        } finally {
          batches.forEach(Batch::close);
        }
      }
      assertEquals(rows, row);
      // as the window shuffle reads: windows across row groups, a field at a time, gathered
      List<Batch> windows = ParquetTestFiles.gatherByColumns(ds, 97, false);
      try {
        assertEquals(rows, ParquetTestFiles.assertBatchesMatch(windows, groups, 0, plans, c + " by columns"));
      } finally {
        windows.forEach(Batch::close);
      }
      List<Example> examples = ds.flux().collectList().block();
      for (int r = 0; r < rows; r++) {
        for (int p = 0; p < plans.size(); p++) {
          TensorSpec spec = ds.schema().field(p);
          assertEquals(ParquetTestFiles.expected(groups.get(r), plans.get(p)),
              ParquetTestFiles.actual(examples.get(r), spec), c + " row path: row " + r + ", column " + spec.name());
        }
      }
      assertEquals(ParquetTestFiles.canonicalSha(groups, plans), Checksums.sha256(ds), c + ": checksum");
      // the file holds every case at every level of the three-level column
      ColumnPlan grid = plans.stream().filter(p -> p.name().equals("grid")).findFirst().orElseThrow();
      List<Object> values = groups.stream().map(g -> ParquetTestFiles.expected(g, grid)).toList();
      assertTrue(values.contains(null), "a null row");
      assertTrue(values.contains(List.of()), "an empty list");
      assertTrue(values.stream().anyMatch(v -> v != null && ((List<?>) v).contains(null)), "a null element");
      assertTrue(values.stream().anyMatch(v -> v != null && ((List<?>) v).stream()
          .anyMatch(e -> e != null && ((List<?>) e).stream().anyMatch(x -> x != null && ((List<?>) x).contains(null)))),
          "a null element three levels down");
    }
  }

  @Test
  void emptyAndSingleRowFilesReadExactly() throws Exception {
    Path empty = dir.resolve("empty.parquet");
    ParquetTestFiles.write(empty, LAYOUTS, Map.of(), config(1), 0, 100, 100, 3);
    ParquetDataset e = Parquet.open(empty);
    assertEquals(0, e.rowCount());
    assertEquals(LAYOUTS.getColumns().size(), e.schema().size());
    assertEquals(0L, e.flux().count().block());
    assertEquals(ParquetTestFiles.canonicalSha(List.of(), ParquetTestFiles.plans(e, empty)), Checksums.sha256(e));

    Path one = dir.resolve("one.parquet");
    ParquetTestFiles.write(one, LAYOUTS, Map.of(), config(2), 1, 100, 100, 4);
    List<Group> groups = ParquetTestFiles.readGroups(one);
    ParquetDataset ds = Parquet.open(one);
    List<Batch> batches = ds.batches(8).collectList().block();
    try {
      assertEquals(1, ParquetTestFiles.assertBatchesMatch(batches, groups, 0, ParquetTestFiles.plans(ds, one), "one"));
    } finally {
      batches.forEach(Batch::close);
    }
  }

  @Test
  void projectionOfAStructInAListSelectsItsLeaves() throws Exception {
    Path f = dir.resolve("proj.parquet");
    ParquetTestFiles.write(f, LAYOUTS, Map.of(), config(3), 120, 50, 20, 5);
    ParquetDataset ds = Parquet.open(f, ParquetOptions.builder().columns("people", "attrs.value", "id").build());
    assertEquals(List.of("people.name", "people.nicks", "attrs.value", "id"),
        ds.schema().fields().stream().map(TensorSpec::name).toList());
    List<Group> groups = ParquetTestFiles.readGroups(f);
    List<Batch> batches = ds.batches(50).collectList().block();
    try {
      assertEquals(120, ParquetTestFiles.assertBatchesMatch(batches, groups, 0, ParquetTestFiles.plans(ds, f), "proj"));
      assertTrue(batches.get(0).column("people.nicks").offsetLevels() == 3);
    } finally {
      batches.forEach(Batch::close);
    }
  }

  @Test
  void cancelAndDamagedPagesInNestedColumnsReleaseEveryByte() throws Exception {
    Path f = dir.resolve("cancel.parquet");
    ParquetTestFiles.write(f, LAYOUTS, Map.of(), config(0), 400, 100, 25, 8);
    ParquetDataset ds = Parquet.open(f, ParquetOptions.builder().decodeParallelism(2).build());
    java.util.concurrent.CountDownLatch done = new java.util.concurrent.CountDownLatch(1);
    reactor.test.StepVerifier.create(ds.batches(16).doFinally(s -> done.countDown()), 0)
        .thenRequest(2)
        .consumeNextWith(Batch::close)
        .consumeNextWith(Batch::close)
        .thenCancel()
        .verify(java.time.Duration.ofSeconds(30));
    assertTrue(done.await(10, java.util.concurrent.TimeUnit.SECONDS));
    org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(20))
        .until(() -> dev.sluice.core.MemoryManager.shared().outstandingBytes() == 0);
    // damaged bytes in the pages: every read completes or fails with a typed error naming the file
    byte[] good = java.nio.file.Files.readAllBytes(f);
    int footerLen = ByteBuffer.wrap(good, good.length - 8, 4).order(ByteOrder.LITTLE_ENDIAN).getInt();
    int dataEnd = good.length - 8 - footerLen;
    java.util.Random rnd = new java.util.Random(3);
    for (int k = 0; k < 15; k++) {
      byte[] bad = good.clone();
      int at = 4 + rnd.nextInt(dataEnd - 4);
      for (int j = 0; j < 1 + rnd.nextInt(6) && at + j < dataEnd; j++) {
        bad[at + j] = (byte) rnd.nextInt(256);
      }
      Path b = dir.resolve("bad-" + k + ".parquet");
      java.nio.file.Files.write(b, bad);
      try {
        Parquet.open(b, ParquetOptions.builder().decodeParallelism(2).build())
            .batches(37).doOnNext(Batch::close).blockLast(java.time.Duration.ofSeconds(60));
        Parquet.open(b).flux().blockLast(java.time.Duration.ofSeconds(60));
      } catch (dev.sluice.core.DatasetException expected) {
        assertTrue(expected.getMessage().contains(b.toString()), expected.getMessage());
      }
      org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(20))
          .until(() -> dev.sluice.core.MemoryManager.shared().outstandingBytes() == 0);
    }
  }

  private record Rows(dev.sluice.core.Schema schema, List<Example> examples)
      implements dev.sluice.core.Dataset<Example>, dev.sluice.core.HasSchema {
    @Override
    public reactor.core.publisher.Flux<Example> flux(dev.sluice.core.PipelineContext context) {
      return reactor.core.publisher.Flux.fromIterable(examples);
    }
  }

  @Test
  void nestedFieldsWrittenBySluiceReadBackEqualAndTheGroupReaderAgrees() throws Exception {
    dev.sluice.core.Schema schema = dev.sluice.core.Schema.of(
        new TensorSpec("tags", DType.STRING, Shape.of(-1), true, 0b1),
        new TensorSpec("grid", DType.INT64, Shape.of(-1, -1), true, 0b11),
        new TensorSpec("req", DType.FLOAT32, Shape.of(-1, -1), false, 0),
        new TensorSpec("id", DType.INT64, Shape.scalar()));
    java.util.Random rnd = new java.util.Random(5);
    List<Example> rows = new ArrayList<>();
    for (int i = 0; i < 200; i++) {
      List<dev.sluice.core.Tensor> inner = new ArrayList<>();
      List<dev.sluice.core.Tensor> dense = new ArrayList<>();
      for (int j = rnd.nextInt(4); j > 0; j--) {
        List<dev.sluice.core.Tensor> v = new ArrayList<>();
        for (int k = rnd.nextInt(4); k > 0; k--) {
          v.add(rnd.nextInt(5) == 0 ? null : dev.sluice.core.Tensor.scalar(rnd.nextLong()));
        }
        inner.add(rnd.nextInt(5) == 0 ? null : dev.sluice.core.Tensor.listOf(DType.INT64, v));
        dense.add(dev.sluice.core.Tensor.of(rnd.nextFloat(), rnd.nextFloat()));
      }
      String[] tags = new String[rnd.nextInt(4)];
      for (int k = 0; k < tags.length; k++) {
        tags[k] = rnd.nextInt(4) == 0 ? null : "t" + rnd.nextInt(100);
      }
      Example.Builder b = Example.builder(i).put("id", dev.sluice.core.Tensor.scalar((long) i));
      if (rnd.nextInt(6) == 0) {
        b.putNull("tags").putNull("grid");
      } else {
        b.put("tags", dev.sluice.core.Tensor.ofStrings(tags));
        b.put("grid", inner.isEmpty() || inner.stream().allMatch(java.util.Objects::isNull)
            ? dev.sluice.core.Tensor.wrapRagged(DType.INT64, Shape.of(inner.size(), -1), ByteBuffer.allocate(0),
                List.of(ByteBuffer.allocate(8 * (inner.size() + 1))),
                inner.isEmpty() ? List.of() : java.util.Arrays.asList(ByteBuffer.allocate(inner.size()), null))
            : dev.sluice.core.Tensor.listOf(DType.INT64, inner));
      }
      b.put("req", dense.isEmpty()
          ? dev.sluice.core.Tensor.wrapRagged(DType.FLOAT32, Shape.of(0, -1), ByteBuffer.allocate(0),
              List.of(ByteBuffer.allocate(8)), List.of())
          : dev.sluice.core.Tensor.listOf(DType.FLOAT32, dense));
      rows.add(b.build());
    }
    Path f = dir.resolve("sluice-written.parquet");
    new ParquetFormat().write(new Rows(schema, rows), f, dev.sluice.io.WriteOptions.defaults().withCodec("zstd"));
    ParquetDataset ds = Parquet.open(f);
    assertEquals(schema, ds.schema());
    assertEquals(rows, ds.flux().collectList().block());
    assertEquals(Checksums.sha256(new Rows(schema, rows)), Checksums.sha256(ds));
    // parquet-java's own reader sees the same values
    List<Group> groups = ParquetTestFiles.readGroups(f);
    List<ColumnPlan> plans = ParquetTestFiles.plans(ds, f);
    for (int r = 0; r < rows.size(); r++) {
      for (int p = 0; p < plans.size(); p++) {
        assertEquals(ParquetTestFiles.expected(groups.get(r), plans.get(p)),
            ParquetTestFiles.actual(rows.get(r), schema.field(p)), "row " + r + ", " + schema.field(p).name());
      }
    }
  }

  private static Config config(int k) {
    return switch (k) {
      case 0 -> new Config(CompressionCodecName.SNAPPY, WriterVersion.PARQUET_1_0, true, false, true);
      case 1 -> new Config(CompressionCodecName.ZSTD, WriterVersion.PARQUET_2_0, false, false, true);
      case 2 -> new Config(CompressionCodecName.UNCOMPRESSED, WriterVersion.PARQUET_1_0, false, true, true);
      default -> new Config(CompressionCodecName.GZIP, WriterVersion.PARQUET_2_0, true, true, true);
    };
  }
}
