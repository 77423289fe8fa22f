package dev.sluice.examples.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.core.testing.NoLeaks;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.LongStream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** {@code sluice read} and {@code sluice bench} through picocli, in-process, over a generated .npy directory. */
@ExtendWith(NoLeaks.class)
class ReadCommandTest {
  private static final long ROWS = 103; // prime, not a multiple of 4 or 7

  @TempDir static Path tmp;
  static Path data;

  record Run(int code, String out, String err) {}

  @BeforeAll
  static void generate() {
    data = tmp.resolve("d");
    // x float32[8] (seeded) and label int64 = the row index
    Run r = run("generate", data.toString(), "--rows", String.valueOf(ROWS), "--dim", "8", "--format", "npy", "--seed", "5");
    assertEquals(0, r.code(), r.err());
  }

  static Run run(String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int code = SluiceCommand.commandLine(new PrintWriter(out, true), new PrintWriter(err, true)).execute(args);
    return new Run(code, out.toString(), err.toString());
  }

  /** Per epoch, the indices of rank {@code rank}'s batches, from --print-indices. */
  static Map<Long, List<Long>> indices(String equal, int rank) {
    Run r = run("read", data.toString(), "--shuffle", "--seed", "3", "--epochs", "2", "--rank", String.valueOf(rank),
        "--world", "4", "--batch", "7", "--equal", equal, "--print-indices");
    assertEquals(0, r.code(), r.err());
    assertEquals("", r.err());
    Map<Long, List<Long>> byEpoch = new HashMap<>();
    for (String line : r.out().split("\n")) {
      String[] parts = line.trim().split(" ");
      assertTrue(parts.length >= 2 && parts.length <= 8, "one batch of at most 7 per line: '" + line + "'");
      long epoch = Long.parseLong(parts[0]);
      for (int i = 1; i < parts.length; i++) {
        byEpoch.computeIfAbsent(epoch, e -> new ArrayList<>()).add(Long.parseLong(parts[i]));
      }
    }
    return byEpoch;
  }

  @Test
  void fourRanksPadPartitionOnePermutationPerEpoch() {
    List<Map<Long, List<Long>>> ranks = new ArrayList<>();
    for (int r = 0; r < 4; r++) {
      ranks.add(indices("pad", r));
    }
    for (long epoch = 0; epoch < 2; epoch++) {
      Set<Long> covered = new HashSet<>();
      for (int r = 0; r < 4; r++) {
        List<Long> mine = ranks.get(r).get(epoch);
        assertEquals((ROWS + 3) / 4, mine.size(), "PAD: ceil(n/4) for rank " + r + " epoch " + epoch);
        covered.addAll(mine);
      }
      assertEquals(ROWS, covered.size(), "PAD covers every row in epoch " + epoch);
    }
    assertNotEquals(ranks.get(0).get(0L), ranks.get(0).get(1L), "epoch 1 reshuffles");
    // same command, same output; and the same for any parallelism and prefetch
    assertEquals(ranks.get(2), indices("pad", 2));
    Run parallel = run("read", data.toString(), "--shuffle", "--seed", "3", "--epochs", "2", "--rank", "2",
        "--world", "4", "--batch", "7", "--print-indices", "--parallelism", "3", "--prefetch", "0");
    Run serial = run("read", data.toString(), "--shuffle", "--seed", "3", "--epochs", "2", "--rank", "2",
        "--world", "4", "--batch", "7", "--print-indices", "--parallelism", "1", "--prefetch", "1");
    assertEquals(serial.out(), parallel.out());
  }

  @Test
  void unevenIsExactlyOnceAndDropIsDisjoint() {
    for (long epoch = 0; epoch < 2; epoch++) {
      List<Long> all = new ArrayList<>();
      Set<Long> dropped = new HashSet<>();
      for (int r = 0; r < 4; r++) {
        all.addAll(indices("uneven", r).get(epoch));
        List<Long> drop = indices("drop", r).get(epoch);
        assertEquals(ROWS / 4, drop.size());
        for (Long d : drop) {
          assertTrue(dropped.add(d), "DROP ranks are disjoint");
        }
      }
      assertEquals(LongStream.range(0, ROWS).boxed().toList(), all.stream().sorted().toList(), "UNEVEN: every row once");
    }
  }

  @Test
  void perElementIndicesWithoutBatch() {
    Run r = run("read", data.toString(), "--print-indices", "--rank", "1", "--world", "2", "--equal", "uneven");
    assertEquals(0, r.code(), r.err());
    String[] lines = r.out().split("\n");
    assertEquals(ROWS / 2, lines.length);
    assertEquals("0 1", lines[0]);
    assertEquals("0 3", lines[1]);
  }

  @Test
  void jsonSummaryIsTheLastLine() throws Exception {
    Run r = run("read", data.toString(), "--shuffle", "--epochs", "3", "--batch", "10", "--drop-remainder",
        "--parallelism", "2", "--prefetch", "2", "--json");
    assertEquals(0, r.code(), r.err());
    String[] lines = r.out().trim().split("\n");
    String last = lines[lines.length - 1];
    JsonNode json = new ObjectMapper().readTree(last);
    assertEquals(300, json.get("examples").asLong());
    assertEquals(30, json.get("batches").asLong());
    assertEquals(3, json.get("epochs").asLong());
    assertEquals(300L * (8 * 4 + 8), json.get("bytes").asLong());
    assertTrue(json.get("seconds").isNumber());
    assertFalse(last.contains("E") || last.contains("e-"), "plain decimals: " + last);
  }

  @Test
  void optionValuesOutOfRangeNameTheOptionTyped() {
    String[][] cases = {
      {"read", "--batch", "0", "--batch must be > 0 but was 0"},
      {"read", "--prefetch", "-1", "--prefetch must be >= 0 but was -1"},
      {"read", "--parallelism", "0", "--parallelism must be > 0 but was 0"},
      {"read", "--epochs", "-1", "--epochs must be >= 0 but was -1"},
      {"bench", "--batch", "0", "--batch must be > 0 but was 0"},
      {"bench", "--num-workers", "0", "--num-workers must be > 0 but was 0"},
      {"bench", "--prefetch", "-1", "--prefetch must be >= 0 but was -1"},
      {"bench", "--warmup", "-1", "--warmup must be >= 0 but was -1"},
    };
    for (String[] c : cases) {
      Run r = run(c[0], data.toString(), c[1], c[2]);
      assertEquals(2, r.code(), String.join(" ", c));
      assertEquals("sluice: " + c[3], r.err().strip(), String.join(" ", c));
    }
  }

  @Test
  void badInputExitsTwoWithOneLine() {
    Run missing = run("read", tmp.resolve("nope").toString());
    assertEquals(2, missing.code());
    assertTrue(missing.err().startsWith("sluice: ") && missing.err().contains("nope"), missing.err());
    Run rank = run("read", data.toString(), "--rank", "4", "--world", "4");
    assertEquals(2, rank.code());
    assertTrue(rank.err().contains("--rank 4"), rank.err());
    Run half = run("read", data.toString(), "--rank", "1");
    assertEquals(2, half.code());
    Run equal = run("read", data.toString(), "--world", "2", "--rank", "0", "--equal", "most");
    assertEquals(2, equal.code());
    assertTrue(equal.err().contains("pad, drop or uneven"), equal.err());
  }

  @Test
  void benchJsonHasMediansAndRange() throws Exception {
    Run r = run("bench", data.resolve("x.npy").toString(), "--shuffle", "--batch", "16", "--epochs", "3", "--json");
    assertEquals(0, r.code(), r.err());
    String[] lines = r.out().trim().split("\n");
    JsonNode json = new ObjectMapper().readTree(lines[lines.length - 1]);
    assertEquals(3 * ROWS, json.get("examples").asLong());
    assertEquals(3 * ROWS * 8 * 4, json.get("bytes").asLong(), "a single .npy file is one field");
    double median = json.get("recordsPerSecond").asDouble();
    assertTrue(json.get("recordsPerSecondMin").asDouble() <= median && median <= json.get("recordsPerSecondMax").asDouble());
    assertTrue(json.get("bytesPerSecond").asDouble() > 0);
    assertEquals(1, json.get("warmupEpochs").asInt());
    Run text = run("bench", data.toString(), "--epochs", "1", "--num-samples", "50", "--format", "npy");
    assertEquals(0, text.code(), text.err());
    assertTrue(text.out().contains("records/s"), text.out());
  }

  @Test
  void benchWarmsUpAsManyEpochsAsAskedAndMeasuresOnlyTheOthers() throws Exception {
    Run none = run("bench", data.resolve("x.npy").toString(), "--batch", "16", "--warmup", "0", "--epochs", "2");
    assertEquals(0, none.code(), none.err());
    assertFalse(none.out().contains("warm-up"), none.out());
    Run three = run("bench", data.resolve("x.npy").toString(), "--shuffle", "--batch", "16", "--warmup", "3",
        "--epochs", "2");
    assertEquals(0, three.code(), three.err());
    assertTrue(three.out().contains("warm-up epoch 3 of 3: " + ROWS + " records"), three.out());
    assertFalse(three.out().contains("warm-up epoch 4"), three.out());
    assertTrue(three.out().contains("epoch 2: " + ROWS + " records"), three.out());
    Run json = run("bench", data.resolve("x.npy").toString(), "--batch", "16", "--warmup", "2", "--epochs", "2",
        "--json");
    assertEquals(0, json.code(), json.err());
    String[] lines = json.out().trim().split("\n");
    JsonNode last = new ObjectMapper().readTree(lines[lines.length - 1]);
    assertEquals(2 * ROWS, last.get("examples").asLong(), "the warm-up epochs are not counted");
    assertEquals(2, last.get("warmupEpochs").asInt());
  }

  @Test
  void demoPrintsItsRate() {
    Run r = run("demo", "--rows", "5000", "--dim", "4");
    assertEquals(0, r.code(), r.err());
    assertTrue(r.out().matches("(?s).*\\n\\d+ examples/s.*"), r.out());
    assertTrue(r.out().contains("off-heap bytes outstanding after the run: 0"), r.out());
  }

  @Test
  void aMemoryLimitKeepsTheOutputAndPutsTheSharedLimitBack() {
    String[] read = {"read", data.toString(), "--shuffle", "--seed", "3", "--batch", "7", "--prefetch", "4", "--print-indices"};
    Run free = run(read);
    assertEquals(0, free.code(), free.err());
    String[] limited = java.util.Arrays.copyOf(read, read.length + 2);
    limited[read.length] = "--memory-limit";
    limited[read.length + 1] = "64k";
    Run bounded = run(limited);
    assertEquals(0, bounded.code(), bounded.err());
    assertEquals("", bounded.err());
    assertEquals(free.out(), bounded.out());
    assertEquals(dev.sluice.core.MemoryManager.UNLIMITED, dev.sluice.core.MemoryManager.shared().limit());

    Run bench = run("bench", data.toString(), "--batch", "7", "--epochs", "1", "--memory-limit", "1m", "--json");
    assertEquals(0, bench.code(), bench.err());
    assertTrue(bench.out().contains("\"examples\":" + ROWS), bench.out());
  }

  @Test
  void aMemoryLimitOneBatchCannotMeetExitsTwoAtOnceWithTheSizes() {
    Path wide = tmp.resolve("wide");
    assertEquals(0, run("generate", wide.toString(), "--rows", "5000", "--dim", "16").code());
    for (String prefetch : new String[] {"0", "4"}) {
      Run r = run("read", wide.toString(), "--batch", "1000", "--memory-limit", "71k", "--prefetch", prefetch);
      assertEquals(2, r.code(), r.err());
      assertEquals(1, r.err().lines().count(), r.err());
      assertTrue(r.err().startsWith("sluice: --batch 1000: one batch of 1000 rows needs 72.0 KiB"), r.err());
      assertTrue(r.err().contains("label 8.0 KiB, x 64.0 KiB"), r.err());
      assertTrue(r.err().contains("the memory limit is 71.0 KiB"), r.err());
    }
    assertEquals(dev.sluice.core.MemoryManager.UNLIMITED, dev.sluice.core.MemoryManager.shared().limit());
  }

  @Test
  void aBatchLargerThanTheDataIsOneBatchOfTheData() {
    Run r = run("read", data.toString(), "--batch", String.valueOf(Integer.MAX_VALUE), "--print-indices");
    assertEquals(0, r.code(), r.err());
    assertEquals(1, r.out().lines().count(), r.out());
    assertEquals(ROWS + 1, r.out().trim().split(" ").length);
  }

  @Test
  void jvmErrorsAreOneLineNamingTheDependencyOrTheOptions() {
    picocli.CommandLine.ParseResult parsed = SluiceCommand.commandLine(new PrintWriter(new StringWriter()),
        new PrintWriter(new StringWriter())).parseArgs("read", "x", "--batch", "5000000", "--prefetch", "8");
    String missing = SluiceCommand.jvmError(new dev.sluice.core.FatalErrorException("f.parquet, row group 2: decoding",
        new NoClassDefFoundError("org/apache/hadoop/fs/Path")), parsed);
    assertEquals("f.parquet, row group 2: decoding: class org.apache.hadoop.fs.Path is missing from the class path: "
        + "add org.apache.hadoop:hadoop-client-api and org.apache.hadoop:hadoop-client-runtime", missing);
    String oom = SluiceCommand.jvmError(new OutOfMemoryError("Java heap space"), parsed);
    assertEquals("out of memory (Java heap space) with --batch 5000000, --prefetch 8: lower them or give the JVM "
        + "more heap (-Xmx)", oom);
    assertTrue(SluiceCommand.jvmError(new StackOverflowError(), parsed).startsWith("internal error: "));
    assertEquals(null, SluiceCommand.jvmError(new IllegalStateException("x"), parsed));
  }

  @Test
  void aMemoryLimitTooSmallOrMalformedExitsTwoWithOneLine() {
    Run small = run("read", data.toString(), "--batch", "7", "--memory-limit", "2k");
    assertEquals(2, small.code(), small.err());
    assertEquals(1, small.err().lines().count(), small.err());
    assertTrue(small.err().startsWith("sluice: --batch 7: one batch of 7 rows needs 8.0 KiB"), small.err());
    assertTrue(small.err().contains("label 4.0 KiB, x 4.0 KiB"), small.err());
    assertTrue(small.err().contains("the memory limit is 2.0 KiB"), small.err());
    assertEquals(dev.sluice.core.MemoryManager.UNLIMITED, dev.sluice.core.MemoryManager.shared().limit());

    for (String bad : new String[] {"lots", "0", "-5m", "99999999999t"}) {
      Run r = run("bench", data.toString(), "--memory-limit", bad);
      assertEquals(2, r.code(), bad + ": " + r.err());
      assertEquals(1, r.err().lines().count(), r.err());
      assertTrue(r.err().startsWith("sluice: Invalid value for option '--memory-limit'"), r.err());
    }
  }
}
