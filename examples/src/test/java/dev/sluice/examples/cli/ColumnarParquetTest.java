package dev.sluice.examples.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.core.Batch;
import dev.sluice.core.Example;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.testing.BatchContents;
import dev.sluice.core.testing.NoLeaks;
import dev.sluice.io.parquet.Parquet;
import dev.sluice.io.parquet.ParquetDataset;
import dev.sluice.io.parquet.internal.PageCodecs;
import dev.sluice.operators.EqualLength;
import dev.sluice.operators.Pipeline;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import org.apache.parquet.conf.PlainParquetConfiguration;
import org.apache.parquet.example.data.Group;
import org.apache.parquet.example.data.simple.SimpleGroupFactory;
import org.apache.parquet.hadoop.ParquetFileWriter;
import org.apache.parquet.hadoop.ParquetWriter;
import org.apache.parquet.hadoop.example.ExampleParquetWriter;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;
import org.apache.parquet.io.LocalOutputFile;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.MessageTypeParser;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import reactor.core.publisher.Flux;

/**
 * Parquet through a pipeline on the columnar path ({@code readBatches} re-cut into batches) equals
 * the element path over the same files: the same batches, indices and values for shuffle / shard /
 * take / skip / batch / dropRemainder plans over several files of several row groups with nulls and
 * strings; and {@code sluice read --batch --print-indices} prints what the element path reads.
 */
@ExtendWith(NoLeaks.class)
class ColumnarParquetTest {
  static final MessageType SCHEMA = MessageTypeParser.parseMessageType("""
      message t {
        required int64 id;
        optional float f;
        optional binary s (STRING);
        required double d;
        optional group x (LIST) { repeated group list { required float element; } }
      }
      """);
  static final int[] ROWS = {137, 1, 251, 64};

  @TempDir static Path dir;

  @BeforeAll
  static void write() throws IOException {
    long id = 0;
    for (int f = 0; f < ROWS.length; f++) {
      try (ParquetWriter<Group> w = ExampleParquetWriter.builder(new LocalOutputFile(dir.resolve("part-" + f + ".parquet")))
          .withConf(new PlainParquetConfiguration())
          .withCodecFactory(new PageCodecs()) // parquet-java's own codec factory needs Hadoop
          .withType(SCHEMA)
          .withExtraMetaData(Map.of("sluice.shape.x", "[3]"))
          .withWriteMode(ParquetFileWriter.Mode.OVERWRITE)
          .withCompressionCodec(CompressionCodecName.SNAPPY)
          .withRowGroupRowCountLimit(40)
          .withPageRowCountLimit(16)
          .build()) {
        SimpleGroupFactory groups = new SimpleGroupFactory(SCHEMA);
        for (int r = 0; r < ROWS[f]; r++, id++) {
          Group g = groups.newGroup().append("id", id).append("d", id * 0.5);
          if (id % 4 != 1) {
            g.append("f", id * 0.25f);
          }
          if (id % 5 != 2) {
            g.append("s", id % 7 == 0 ? "" : "s" + id + "-".repeat((int) (id % 9)));
          }
          Group x = g.addGroup("x");
          for (int k = 0; k < 3; k++) {
            x.addGroup("list").append("element", id + k / 10f);
          }
          w.write(g);
        }
      }
    }
  }

  static ParquetDataset open() {
    return Parquet.open(dir);
  }

  static List<List<String>> contents(Flux<Batch> batches) {
    return BatchContents.of(batches);
  }

  private record Plan(boolean shuffle, int k, int r, EqualLength policy, long[] cuts, int batch, boolean drop,
      long[] batchCuts, int parallel) {
    <T> Pipeline<Batch> apply(Pipeline<T> p) {
      if (shuffle) {
        p = p.shuffle();
      }
      if (k > 0) {
        p = p.shard(k, r, policy);
      }
      for (long c : cuts) {
        p = c >= 0 ? p.take(c) : p.skip(-c);
      }
      Pipeline<Batch> b = p.batch(batch, drop, parallel);
      for (long c : batchCuts) {
        b = c >= 0 ? b.take(c) : b.skip(-c);
      }
      return b;
    }
  }

  @Test
  void theColumnarPathEqualsTheElementPath() {
    ParquetDataset parquet = open();
    assertEquals(4 + 1 + 7 + 2, parquet.splits().size(), "row groups of 40 rows in every file");
    SplittableRandom random = new SplittableRandom(23);
    long[][] cutChoices = {{}, {100}, {-33}, {-7, 200}, {-500}};
    long[][] batchCutChoices = {{}, {3}, {-2}, {-1, 2}};
    int[] batches = {1, 16, 40, 64, 1000};
    for (int trial = 0; trial < 80; trial++) {
      int k = random.nextInt(4);
      boolean shuffle = random.nextInt(3) == 0;
      Plan plan = new Plan(shuffle, k, k == 0 ? 0 : random.nextInt(k), EqualLength.values()[random.nextInt(3)],
          cutChoices[random.nextInt(cutChoices.length)], batches[random.nextInt(batches.length)], random.nextBoolean(),
          batchCutChoices[random.nextInt(batchCutChoices.length)], random.nextInt(3) == 0 ? 2 : 1);
      PipelineContext ctx = PipelineContext.defaults().withSeed(trial).withEpoch(trial % 2);
      Pipeline<Batch> columnar = plan.apply(Pipeline.from(parquet));
      assertTrue(columnar.toString().contains("[columnar]"), columnar.toString());
      List<List<String>> got = contents(columnar.flux(ctx));
      List<List<String>> element = contents(plan.apply(Pipeline.from(BatchContents.rowsOnly(parquet))).flux(ctx));
      String what = plan + " " + Arrays.toString(plan.cuts) + " " + Arrays.toString(plan.batchCuts);
      if (!shuffle) {
        assertEquals(element, got, what);
      } else {
        // the window shuffle orders the rows of the rank differently from the buffer shuffle
        assertEquals(element.stream().map(List::size).toList(), got.stream().map(List::size).toList(), what);
        if (plan.cuts.length == 0 && plan.batchCuts.length == 0 && !plan.drop) {
          assertEquals(element.stream().flatMap(List::stream).sorted().toList(),
              got.stream().flatMap(List::stream).sorted().toList(), what);
        }
      }
    }
  }

  @Test
  void aWindowDecodedAColumnAtATimeEqualsOneDecodedInBatches() {
    ParquetDataset parquet = open();
    assertTrue(parquet.decodesColumns());
    SplittableRandom random = new SplittableRandom(31);
    int[] windows = {1, 7, 40, 50, 123, 10_000};
    long[][] cutChoices = {{}, {100}, {-33}, {-7, 200}, {-500}};
    long[][] batchCutChoices = {{}, {3}, {-2}, {-1, 2}};
    int[] batches = {1, 16, 40, 64, 1000};
    for (int trial = 0; trial < 60; trial++) {
      int k = random.nextInt(4);
      int r = k == 0 ? 0 : random.nextInt(k);
      EqualLength policy = EqualLength.values()[random.nextInt(3)];
      int window = windows[random.nextInt(windows.length)];
      boolean splitOrder = random.nextBoolean();
      long[] cuts = cutChoices[random.nextInt(cutChoices.length)];
      long[] batchCuts = batchCutChoices[random.nextInt(batchCutChoices.length)];
      int batch = batches[random.nextInt(batches.length)];
      boolean drop = random.nextBoolean();
      PipelineContext ctx = PipelineContext.defaults().withSeed(trial).withEpoch(trial % 3);
      List<List<List<String>>> both = new ArrayList<>();
      for (int parallel : new int[] {1, 3}) { // 1: a column at a time; 3: batches decoded on workers
        Pipeline<Example> p = Pipeline.from(parquet);
        if (splitOrder) {
          p = p.shuffle();
        }
        if (k > 0) {
          p = p.shard(k, r, policy);
        }
        p = p.shuffle(window);
        for (long c : cuts) {
          p = c >= 0 ? p.take(c) : p.skip(-c);
        }
        Pipeline<Batch> b = p.batch(batch, drop, parallel);
        for (long c : batchCuts) {
          b = c >= 0 ? b.take(c) : b.skip(-c);
        }
        assertEquals(parallel == 1, b.explain().contains("a column at a time"), b.explain());
        both.add(contents(b.flux(ctx)));
      }
      String what = "trial " + trial + ": window " + window + ", shard " + k + "/" + r + " " + policy + ", cuts "
          + Arrays.toString(cuts) + ", batch " + batch + (drop ? " drop" : "") + ", batch cuts " + Arrays.toString(batchCuts);
      assertEquals(both.get(1), both.get(0), what);
    }
  }

  /** {@code <epoch> <index> ...} per batch, as {@code sluice read --print-indices} prints it. */
  static Map<Long, List<String>> lines(String out) {
    Map<Long, List<String>> byEpoch = new TreeMap<>();
    for (String line : out.strip().split("\n")) {
      byEpoch.computeIfAbsent(Long.parseLong(line.substring(0, line.indexOf(' '))), e -> new ArrayList<>()).add(line);
    }
    return byEpoch;
  }

  @Test
  void sluiceReadPrintsTheElementPathsBatches() {
    ParquetDataset parquet = open();
    String[][] variants = {
        {"--batch", "16"},
        {"--batch", "40", "--world", "3", "--rank", "1", "--equal", "uneven"},
        {"--batch", "64", "--drop-remainder", "--world", "2", "--rank", "0", "--equal", "drop", "--parallelism", "3"},
        {"--batch", "7", "--world", "5", "--rank", "4"}};
    for (String[] v : variants) {
      List<String> args = new ArrayList<>(List.of("read", dir.toString(), "--epochs", "2", "--seed", "3", "--print-indices"));
      args.addAll(List.of(v));
      CliRun run = CliRun.of(args.toArray(String[]::new));
      assertEquals(0, run.exitCode(), run.err());
      assertEquals("", run.err());
      List<String> opts = List.of(v);
      int world = opts.contains("--world") ? Integer.parseInt(opts.get(opts.indexOf("--world") + 1)) : 1;
      int rank = opts.contains("--rank") ? Integer.parseInt(opts.get(opts.indexOf("--rank") + 1)) : 0;
      EqualLength policy = List.of(v).contains("uneven") ? EqualLength.UNEVEN
          : List.of(v).contains("drop") ? EqualLength.DROP : EqualLength.PAD;
      int batch = Integer.parseInt(v[1]);
      boolean drop = List.of(v).contains("--drop-remainder");
      StringBuilder expected = new StringBuilder();
      for (long epoch = 0; epoch < 2; epoch++) {
        long e = epoch;
        Pipeline.from(BatchContents.rowsOnly(parquet)).shard(world, rank, policy).batch(batch, drop).flux(
            PipelineContext.defaults().withSeed(3).withEpoch(epoch)).doOnNext(b -> {
              try (b) {
                expected.append(e);
                for (long i : b.indices()) {
                  expected.append(' ').append(i);
                }
                expected.append('\n');
              }
            }).blockLast();
      }
      assertEquals(expected.toString(), run.out(), Arrays.toString(v));
    }
    // shuffled: each epoch the rank's rows, in a new order
    CliRun shuffled = CliRun.of("read", dir.toString(), "--shuffle", "--batch", "32", "--epochs", "2",
        "--print-indices");
    assertEquals(0, shuffled.exitCode(), shuffled.err());
    Map<Long, List<String>> epochs = lines(shuffled.out());
    assertEquals(2, epochs.size());
    List<List<Long>> orders = new ArrayList<>();
    for (List<String> batchLines : epochs.values()) {
      List<Long> order = new ArrayList<>();
      for (String line : batchLines) {
        Arrays.stream(line.split(" ")).skip(1).map(Long::parseLong).forEach(order::add);
      }
      assertEquals(java.util.stream.LongStream.range(0, 453).boxed().toList(), order.stream().sorted().toList());
      orders.add(order);
    }
    assertTrue(!orders.get(0).equals(orders.get(1)), "reshuffled each epoch");
  }

  @Test
  void aCorruptPageOnTheColumnarPathExitsTwoWithOneLine() throws IOException {
    Path bad = dir.resolve("bad");
    java.nio.file.Files.createDirectories(bad);
    byte[] bytes = java.nio.file.Files.readAllBytes(dir.resolve("part-2.parquet"));
    for (int i = 4; i < 12; i++) {
      bytes[i] ^= 0x5a; // the first page header of the first column chunk
    }
    Path file = bad.resolve("part-2.parquet");
    java.nio.file.Files.write(file, bytes);
    for (String[] v : new String[][] {{"--batch", "16"}, {"--batch", "16", "--shuffle"}, {"--batch", "16", "--parallelism", "3"}}) {
      List<String> args = new ArrayList<>(List.of("read", file.toString()));
      args.addAll(List.of(v));
      CliRun run = CliRun.of(args.toArray(String[]::new));
      assertEquals(2, run.exitCode(), Arrays.toString(v) + ": " + run.err());
      assertEquals(1, run.err().lines().count(), run.err());
      assertTrue(run.err().startsWith("sluice: " + file + ": row group 0"), run.err());
      // an asynchronous error releases the decoded batches on a worker after the command returns
      org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(10))
          .until(() -> dev.sluice.core.MemoryManager.shared().outstandingBytes() == 0);
    }
  }
}
