package dev.sluice.examples.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import dev.sluice.core.PipelineState;
import dev.sluice.core.testing.NoLeaks;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.LongStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** {@code sluice read --checkpoint / --stop-after / --resume}, in-process. */
@ExtendWith(NoLeaks.class)
class CheckpointCommandsTest {
  private static final long ROWS = 1_009;

  @TempDir static Path tmp;
  static Path npy;
  static Path parquet;

  @BeforeAll
  static void generate() {
    npy = tmp.resolve("npy");
    parquet = tmp.resolve("p.parquet");
    CliRun a = CliRun.of("generate", npy.toString(), "--rows", String.valueOf(ROWS), "--dim", "2", "--format", "npy");
    assertEquals(0, a.exitCode(), a.err());
    CliRun b = CliRun.of("generate", parquet.toString(), "--rows", String.valueOf(ROWS), "--dim", "2", "--format",
        "parquet");
    assertEquals(0, b.exitCode(), b.err());
  }

  static String[] args(Path data, String options, String... more) {
    List<String> all = new ArrayList<>(List.of("read", data.toString(), "--print-indices"));
    all.addAll(Arrays.asList(options.split(" ")));
    all.addAll(Arrays.asList(more));
    return all.toArray(String[]::new);
  }

  static CliRun ok(String... args) {
    CliRun r = CliRun.of(args);
    assertEquals(0, r.exitCode(), () -> String.join(" ", args) + "\n" + r.err());
    assertEquals("", r.err());
    return r;
  }

  @ParameterizedTest
  @ValueSource(strings = {
      "--shuffle --seed 3 --epochs 3",
      "--shuffle --seed 3 --epochs 2 --batch 10 --parallelism 3",
      "--shuffle --buffer 100 --seed 4 --epochs 2 --batch 7 --parallelism 2",
      "--shuffle --seed 5 --epochs 2 --rank 1 --world 3 --equal drop --batch 16",
      "parquet --shuffle --buffer 64 --seed 6 --epochs 2 --batch 8",
      "parquet --shuffle --buffer 64 --seed 6 --epochs 2 --prefetch 0"})
  void stoppedAndResumedRunsPrintTheUninterruptedOutput(String options) {
    Path data = options.startsWith("parquet") ? parquet : npy;
    String opts = options.replace("parquet ", "");
    String whole = ok(args(data, opts)).out();
    Path ckpt = tmp.resolve("ckpt-" + Math.abs(options.hashCode()) + ".json");
    StringBuilder parts = new StringBuilder();
    parts.append(ok(args(data, opts, "--checkpoint", ckpt.toString(), "--checkpoint-every", "7", "--stop-after", "130"))
        .out());
    String resumeOpts = opts.replaceAll("--epochs \\d+", "").replaceAll(" +", " ").trim();
    parts.append(ok(args(data, resumeOpts, "--resume", ckpt.toString(), "--checkpoint", ckpt.toString(),
        "--stop-after", "1")).out());
    parts.append(ok(args(data, resumeOpts, "--resume", ckpt.toString(), "--checkpoint", ckpt.toString(),
        "--checkpoint-every", "50", "--stop-after", "600")).out());
    parts.append(ok(args(data, resumeOpts, "--resume", ckpt.toString(), "--checkpoint", ckpt.toString())).out());
    assertEquals(whole, parts.toString());
    // the run is over: resuming once more prints nothing
    assertEquals("", ok(args(data, resumeOpts, "--resume", ckpt.toString())).out());
    assertThat(PipelineState.read(ckpt).isFinished()).isTrue();
  }

  @Test
  void theSeedComesFromTheCheckpointUnlessGiven() throws Exception {
    Path ckpt = tmp.resolve("seed.json");
    String whole = ok(args(npy, "--shuffle --seed 9")).out();
    String first = ok(args(npy, "--shuffle --seed 9", "--stop-after", "10", "--checkpoint", ckpt.toString())).out();
    assertEquals(whole, first + ok(args(npy, "--shuffle", "--resume", ckpt.toString())).out());
    CliRun other = CliRun.of(args(npy, "--shuffle --seed 8", "--resume", ckpt.toString()));
    assertEquals(2, other.exitCode());
    assertEquals("sluice: " + ckpt + ", field seed: taken with seed 9 but this run's seed is 8\n", other.err());
    assertThat(Files.readString(ckpt)).contains("\"seed\" : 9");
  }

  @Test
  void aBlockShuffleResumesWithBlocksOfTheSameRowsAndRefusesOthers() {
    Path data = tmp.resolve("blocks");
    ok("generate", data.toString(), "--rows", "20000", "--dim", "2", "--format", "npy"); // 16 bytes a row
    Path ckpt = tmp.resolve("blocks.json");
    String opts = "--shuffle --shuffle-mode blocks --shuffle-block 512 --seed 2 --batch 10 --world 2 --rank 1";
    String whole = ok(args(data, opts)).out();
    String first = ok(args(data, opts, "--stop-after", "300", "--checkpoint", ckpt.toString())).out();
    assertEquals(whole, first + ok(args(data, opts, "--resume", ckpt.toString())).out(), "the same block size");
    assertEquals(whole, first + ok(args(data, opts.replace("512", "520"), "--resume",
        ckpt.toString())).out(), "another block size whose runs hold the same 32 rows");
    assertNotEquals(whole, ok(args(data, opts.replace("512", "4k"))).out(), "runs of 78 rows (a 256th): another order");
    refused(ckpt + ", field pipeline: taken on another pipeline: stage 1 was shuffle(blocks) with shuffleBlockBytes "
        + "runs of 32 rows and is now shuffle(blocks) with shuffleBlockBytes runs of 78 rows",
        args(data, opts.replace("512", "4k"), "--resume", ckpt.toString()));
    refused("--shuffle-block needs --shuffle", args(data, "--shuffle-block 4m"));
    refused("'0': a byte count must be more than 0 bytes", args(data, "--shuffle --shuffle-block 0"));
  }

  @Test
  void anotherWorldSizeRepartitionsTheRestOfTheEpoch() {
    List<Long> seen = new ArrayList<>();
    List<Path> states = new ArrayList<>();
    for (int r = 0; r < 2; r++) {
      Path ckpt = tmp.resolve("rank" + r + ".json");
      states.add(ckpt);
      seen.addAll(indices(ok(args(npy, "--shuffle --seed 2 --batch 10 --equal uneven --rank " + r + " --world 2",
          "--stop-after", "20", "--checkpoint", ckpt.toString())).out()));
    }
    for (int r = 0; r < 3; r++) {
      seen.addAll(indices(ok(args(npy, "--shuffle --seed 2 --batch 10 --equal uneven --rank " + r + " --world 3",
          "--resume", states.get(r % 2).toString())).out()));
    }
    assertThat(seen).containsExactlyInAnyOrderElementsOf(LongStream.range(0, ROWS).boxed().toList());
  }

  static List<Long> indices(String out) {
    List<Long> all = new ArrayList<>();
    for (String line : out.split("\n")) {
      String[] parts = line.trim().split(" ");
      for (int i = 1; i < parts.length; i++) {
        all.add(Long.parseLong(parts[i]));
      }
    }
    return all;
  }

  /** Exit 2 and exactly one {@code sluice: } line that contains {@code message}. */
  static void refused(String message, String... args) {
    CliRun r = CliRun.of(args);
    assertEquals(2, r.exitCode(), r.err());
    assertEquals("", r.out());
    assertThat(r.err().lines().toList()).hasSize(1);
    assertThat(r.err()).startsWith("sluice: ").contains(message);
  }

  @Test
  void badOptionsAndBadCheckpointsExitTwoWithOneLine() throws Exception {
    Path ckpt = tmp.resolve("bad.json");
    ok(args(npy, "--shuffle --batch 8", "--stop-after", "3", "--checkpoint", ckpt.toString()));
    refused("--checkpoint-every 5 needs --checkpoint FILE", args(npy, "--shuffle", "--checkpoint-every", "5"));
    refused("--checkpoint-every must be > 0 but was 0",
        args(npy, "--shuffle", "--checkpoint", ckpt.toString(), "--checkpoint-every", "0"));
    refused("--stop-after must be >= 0 but was -1", args(npy, "--shuffle", "--stop-after", "-1"));
    refused("--epochs and --resume cannot be combined", args(npy, "--shuffle --batch 8 --epochs 2", "--resume",
        ckpt.toString()));
    refused(ckpt + ", field pipeline: taken on another pipeline: stage 3 was batch(8, false) and is now batch(9, false)",
        args(npy, "--shuffle --batch 9", "--resume", ckpt.toString()));
    refused(ckpt + ", field dataset: taken on another dataset: a random-access source then, a split source now",
        args(parquet, "--shuffle --batch 8", "--resume", ckpt.toString()));
    refused("no such checkpoint file", args(npy, "--shuffle --batch 8", "--resume", tmp.resolve("none.json").toString()));

    String json = Files.readString(ckpt);
    Path edited = tmp.resolve("edited.json");
    Files.writeString(edited, json.replaceFirst("\"position\" : 3", "\"position\" : 4"));
    refused(edited + ", field checksum: checksum mismatch (expected ", args(npy, "--shuffle --batch 8", "--resume",
        edited.toString()));
    Path truncated = tmp.resolve("truncated.json");
    Files.writeString(truncated, json.substring(0, json.length() / 2));
    refused("truncated", args(npy, "--shuffle --batch 8", "--resume", truncated.toString()));
    Path newer = tmp.resolve("newer.json");
    Files.writeString(newer, json.replaceFirst("\"format\" : 1", "\"format\" : 2"));
    refused("written by a newer Sluice: format 2", args(npy, "--shuffle --batch 8", "--resume", newer.toString()));
    try (Stream<Path> files = Files.list(tmp)) {
      assertThat(files.map(p -> p.getFileName().toString())).noneMatch(n -> n.endsWith(".tmp"));
    }
  }
}
