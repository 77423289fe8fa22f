package dev.sluice.examples.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.core.testing.NoLeaks;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** {@code sluice read --quality} over a generated .npy directory (the index path). */
@ExtendWith(NoLeaks.class)
class ReadQualityTest {
  private static final int ROWS = 4_000;
  private static final ObjectMapper JSON = new ObjectMapper();

  @TempDir static Path tmp;
  static Path data;

  @BeforeAll
  static void generate() {
    data = tmp.resolve("d");
    CliRun r = CliRun.of("generate", data.toString(), "--rows", String.valueOf(ROWS), "--dim", "4", "--format", "npy",
        "--seed", "5");
    assertThat(r.exitCode()).as(r.err()).isZero();
  }

  private static JsonNode quality(String... extra) throws Exception {
    List<String> args = new java.util.ArrayList<>(List.of("read", data.toString(), "--quality", "--json", "--seed", "3"));
    args.addAll(List.of(extra));
    CliRun r = CliRun.of(args.toArray(String[]::new));
    assertThat(r.exitCode()).as(r.err()).isZero();
    assertThat(r.err()).isEmpty();
    String[] lines = r.out().strip().split("\n");
    JsonNode last = JSON.readTree(lines[lines.length - 1]);
    assertThat(last.get("examples")).as("the contract's fields stay").isNotNull();
    return last.get("quality");
  }

  @Test
  void aShuffledRankReadsAFreshRandomQuarterEveryEpoch() throws Exception {
    JsonNode q = quality("--shuffle", "--epochs", "3", "--rank", "0", "--world", "4", "--batch", "64");
    assertThat(q.get("rank").asInt()).isZero();
    assertThat(q.get("world").asInt()).isEqualTo(4);
    assertThat(q.get("epochs")).hasSize(3);
    for (JsonNode e : q.get("epochs")) {
      assertThat(e.get("rows").asLong()).isEqualTo(ROWS / 4);
      assertThat(e.get("distinctRows").asLong()).isEqualTo(ROWS / 4);
      assertThat(Math.abs(e.get("spearman").asDouble())).isLessThan(0.15); // 1 / sqrt(1000) is 0.03
    }
    assertThat(q.get("epochs").get(0).get("jaccard").isNull()).isTrue();
    double random = 1.0 / (2 * 4 - 1);
    assertThat(q.get("randomJaccard").asDouble()).isCloseTo(random, within(1e-6));
    assertThat(q.get("maxJaccard").asDouble()).isCloseTo(random, within(0.04));
    assertThat(q.get("maxAbsSpearman").asDouble()).isLessThan(0.15);
  }

  @Test
  void aBlockShuffledRankReadsEveryRowOfItsPartOnceInANewMixEveryEpoch() throws Exception {
    JsonNode q = quality("--shuffle", "--shuffle-mode", "blocks", "--epochs", "3", "--rank", "1", "--world", "4",
        "--batch", "64");
    assertThat(q.get("epochs")).hasSize(3);
    for (JsonNode e : q.get("epochs")) {
      assertThat(e.get("rows").asLong()).isEqualTo(ROWS / 4);
      assertThat(e.get("distinctRows").asLong()).isEqualTo(ROWS / 4);
      assertThat(Math.abs(e.get("spearman").asDouble())).isLessThan(0.15);
    }
    assertThat(q.get("maxJaccard").asDouble()).isLessThan(0.5); // a few blocks per rank: near 1/7, never the same rows
  }

  @Test
  void aShuffleModeIsCheckedAndNeedsShuffle() {
    CliRun bad = CliRun.of("read", data.toString(), "--shuffle", "--shuffle-mode", "sideways");
    assertThat(bad.exitCode()).isEqualTo(2);
    assertThat(bad.err().strip()).isEqualTo("sluice: --shuffle-mode 'sideways': expected auto, global or blocks");
    CliRun alone = CliRun.of("read", data.toString(), "--shuffle-mode", "blocks");
    assertThat(alone.exitCode()).isEqualTo(2);
    assertThat(alone.err().strip()).isEqualTo("sluice: --shuffle-mode blocks needs --shuffle");
    CliRun global = CliRun.of("read", data.toString(), "--shuffle", "--shuffle-mode", "global", "--batch", "100");
    assertThat(global.exitCode()).as(global.err()).isZero();
  }

  @Test
  void anUnshuffledRankReadsTheSameRowsInFileOrder() throws Exception {
    JsonNode q = quality("--epochs", "2", "--rank", "1", "--world", "4");
    assertThat(q.get("maxJaccard").asDouble()).isEqualTo(1.0);
    assertThat(q.get("maxAbsSpearman").asDouble()).isEqualTo(1.0);
  }

  @Test
  void oneEpochHasNoJaccardAndIsNoError() throws Exception {
    JsonNode q = quality("--shuffle", "--batch", "100");
    assertThat(q.get("epochs")).hasSize(1);
    assertThat(q.get("maxJaccard").isNull()).isTrue();
    assertThat(q.get("epochs").get(0).get("rows").asLong()).isEqualTo(ROWS);
    assertThat(Math.abs(q.get("maxAbsSpearman").asDouble())).isLessThan(0.1);
  }

  @Test
  void printsATableOfTheEpochsAndASummaryLine() {
    CliRun r = CliRun.of("read", data.toString(), "--quality", "--shuffle", "--epochs", "3", "--rank", "2", "--world",
        "3", "--equal", "pad");
    assertThat(r.exitCode()).as(r.err()).isZero();
    List<String> lines = r.out().lines().toList();
    int header = lines.indexOf(lines.stream().filter(l -> l.trim().startsWith("epoch ")).findFirst().orElseThrow());
    assertThat(lines.get(header - 1)).isEqualTo("shuffle quality of rank 2 of 3 over 3 epochs:");
    // 4000 rows over 3 ranks: 1334 each with the padding, one of them a repeat on this rank
    assertThat(lines.get(header + 1)).matches("\\s+0\\s+1334\\s+133[34]\\s+-?0\\.\\d{4}\\s+-");
    assertThat(lines.get(header + 2)).matches("\\s+1\\s+1334\\s+133[34]\\s+-?0\\.\\d{4}\\s+0\\.\\d{4}");
    assertThat(lines.get(header + 4)).startsWith("max jaccard 0.").contains("1/3 of the rows every epoch: 0.2000")
        .contains("max |spearman| 0.");
  }

  @Test
  void refusesWhatCannotMeasureWholeEpochs() {
    for (String[] args : new String[][] {
        {"--print-indices"}, {"--stop-after", "10"}}) {
      List<String> all = new java.util.ArrayList<>(List.of("read", data.toString(), "--quality", "--epochs", "2"));
      all.addAll(List.of(args));
      CliRun r = CliRun.of(all.toArray(String[]::new));
      assertThat(r.exitCode()).as(r.toString()).isEqualTo(2);
      assertThat(r.err().strip().lines()).hasSize(1);
      assertThat(r.err()).startsWith("sluice: --quality ").contains(args[0]);
    }
  }
}
