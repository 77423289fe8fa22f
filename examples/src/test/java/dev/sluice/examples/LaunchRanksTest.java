package dev.sluice.examples;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.operators.EqualLength;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link LaunchRanks} with 4 child JVMs over 10,007 rows: its verdict, and the properties checked
 * again here from the files the ranks wrote.
 */
class LaunchRanksTest {
  static final long ROWS = 10_007;
  static final int WORLD = 4;

  @TempDir Path dir;

  static String launch(String... args) throws Exception {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    int code = LaunchRanks.launch(args, new PrintStream(bytes, true, StandardCharsets.UTF_8));
    String out = bytes.toString(StandardCharsets.UTF_8);
    assertThat(code).as(out).isZero();
    return out;
  }

  @Test
  void fourRanksPartitionBothSourcesAsEachPolicyPromises() throws Exception {
    Path plain = dir.resolve("plain");
    String out = launch("--dir", plain.toString());
    assertThat(out).contains("verdict: every policy holds for both sources");
    assertThat(out.lines().filter(l -> l.endsWith(" OK")).count()).as(out).isEqualTo(6);

    long floor = ROWS / WORLD; // 2501
    long ceil = floor + 1;     // 2502
    for (String source : LaunchRanks.SOURCES) {
      for (EqualLength policy : EqualLength.values()) {
        Map<Long, Integer> count = new HashMap<>();
        long[] lengths = new long[WORLD];
        for (int r = 0; r < WORLD; r++) {
          long[] mine = LaunchRanks.indices(plain, source, policy, r);
          lengths[r] = mine.length;
          for (long i : mine) {
            assertThat(i).isBetween(0L, ROWS - 1);
            count.merge(i, 1, Integer::sum);
          }
        }
        String what = source + " " + policy + " " + Arrays.toString(lengths);
        switch (policy) {
          case PAD -> {
            assertThat(lengths).as(what).containsOnly(ceil);
            assertThat(count).as(what).hasSize((int) ROWS);
            assertThat(count.values().stream().mapToInt(Integer::intValue).sum()).isEqualTo(ceil * WORLD);
          }
          case DROP -> {
            assertThat(lengths).as(what).containsOnly(floor);
            assertThat(count.values()).as(what).containsOnly(1);
            assertThat(count).hasSize((int) (floor * WORLD));
          }
          case UNEVEN -> {
            assertThat(Arrays.stream(lengths).sum()).as(what).isEqualTo(ROWS);
            assertThat(Arrays.stream(lengths).max().getAsLong() - Arrays.stream(lengths).min().getAsLong()).isLessThanOrEqualTo(1);
            assertThat(count.values()).as(what).containsOnly(1);
            assertThat(count.keySet()).containsExactlyInAnyOrderElementsOf(LongStream.range(0, ROWS).boxed().toList());
          }
          default -> throw new AssertionError(policy);
        }
      }
    }

    // the ranks again through the node's shared cache: they share the blocks and read the same indices
    Path cached = dir.resolve("cached");
    String withCache = launch("--dir", cached.toString(), "--cache", "--cache-dir", dir.resolve("cache").toString());
    assertThat(withCache).contains("verdict: every policy holds for both sources");
    Matcher m = Pattern.compile("cache \\(.*\\): the ranks wrote (\\d+) blocks in all").matcher(withCache);
    assertThat(m.find()).as(withCache).isTrue();
    assertThat(Long.parseLong(m.group(1))).isPositive();
    for (String source : LaunchRanks.SOURCES) {
      for (EqualLength policy : EqualLength.values()) {
        for (int r = 0; r < WORLD; r++) {
          assertThat(LaunchRanks.indices(cached, source, policy, r)).as(source + " " + policy + " rank " + r)
              .isEqualTo(LaunchRanks.indices(plain, source, policy, r));
        }
      }
    }
  }
}
