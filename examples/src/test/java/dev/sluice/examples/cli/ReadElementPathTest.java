package dev.sluice.examples.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.core.Datasets;
import dev.sluice.core.testing.NoLeaks;
import dev.sluice.io.npy.Npy;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.LongStream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** {@code sluice read --shuffle --buffer N} and {@code --parallelism} on the element path. */
@ExtendWith(NoLeaks.class)
class ReadElementPathTest {
  private static final long ROWS = 211;

  @TempDir static Path tmp;
  static Path data;

  @BeforeAll
  static void generate() {
    data = tmp.resolve("d");
    Npy.write(Datasets.synthetic(ROWS, 4, 9), data);
  }

  static Map<Long, List<Long>> read(String... extra) {
    List<String> args = new ArrayList<>(List.of("read", data.toString(), "--shuffle", "--seed", "5", "--epochs", "2",
        "--print-indices"));
    args.addAll(List.of(extra));
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int code = SluiceCommand.commandLine(new PrintWriter(out, true), new PrintWriter(err, true)).execute(args.toArray(String[]::new));
    assertEquals(0, code, err.toString());
    assertEquals("", err.toString());
    Map<Long, List<Long>> byEpoch = new TreeMap<>();
    for (String line : out.toString().split("\n")) {
      String[] parts = line.trim().split(" ");
      for (int i = 1; i < parts.length; i++) {
        byEpoch.computeIfAbsent(Long.parseLong(parts[0]), e -> new ArrayList<>()).add(Long.parseLong(parts[i]));
      }
    }
    return byEpoch;
  }

  @Test
  void bufferShuffleIsAPermutationPerEpochIndependentOfParallelism() {
    Map<Long, List<Long>> one = read("--buffer", "50", "--batch", "16");
    assertEquals(2, one.size());
    for (List<Long> epoch : one.values()) {
      assertEquals(LongStream.range(0, ROWS).boxed().toList(), epoch.stream().sorted().toList());
      for (int i = 0; i < epoch.size(); i++) {
        assertTrue(epoch.get(i) < i + 50, "a buffer of 50 moves an element at most 49 places early");
      }
    }
    assertNotEquals(one.get(0L), one.get(1L));
    assertEquals(one, read("--buffer", "50", "--batch", "16", "--parallelism", "3"));
    assertEquals(one, read("--buffer", "50", "--batch", "16", "--prefetch", "0"));
  }

  @Test
  void bufferShuffleAfterTheShardPartitionsTheRows() {
    List<Long> all = new ArrayList<>();
    for (int r = 0; r < 3; r++) {
      Map<Long, List<Long>> mine = read("--buffer", "20", "--rank", String.valueOf(r), "--world", "3", "--equal", "uneven");
      all.addAll(mine.get(0L));
    }
    assertEquals(LongStream.range(0, ROWS).boxed().toList(), all.stream().sorted().toList());
  }
}
