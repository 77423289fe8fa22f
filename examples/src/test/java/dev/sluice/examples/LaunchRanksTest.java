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

  @Test
  void fourRanksPartitionBothSourcesAsEachPolicyPromises() throws Exception {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    int code = LaunchRanks.launch(new String[] {"--dir", dir.toString()}, new PrintStream(bytes, true, StandardCharsets.UTF_8));
    String out = bytes.toString(StandardCharsets.UTF_8);
    assertThat(code).as(out).isZero();
    assertThat(out).contains("verdict: every policy holds for both sources");
    assertThat(out.lines().filter(l -> l.endsWith(" OK")).count()).as(out).isEqualTo(6);

    long floor = ROWS / WORLD; // 2501
    long ceil = floor + 1;     // 2502
    for (String source : LaunchRanks.SOURCES) {
      for (EqualLength policy : EqualLength.values()) {
        Map<Long, Integer> count = new HashMap<>();
        long[] lengths = new long[WORLD];
        for (int r = 0; r < WORLD; r++) {
          long[] mine = LaunchRanks.indices(dir, source, policy, r);
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
  }
}
