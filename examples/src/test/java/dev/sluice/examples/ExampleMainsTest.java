package dev.sluice.examples;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.core.Datasets;
import dev.sluice.core.MemoryManager;
import dev.sluice.core.PipelineState;
import dev.sluice.core.testing.NoLeaks;
import dev.sluice.io.Checksums;
import dev.sluice.io.npy.Npy;
import dev.sluice.io.npy.NpyDataset;
import dev.sluice.io.shards.ShardSet;
import dev.sluice.io.shards.Shards;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** The example mains run on small data: what they print and write. */
@ExtendWith(NoLeaks.class)
class ExampleMainsTest {
  @TempDir Path dir;

  /** Runs {@code main} with {@code System.out} captured. */
  interface Main {
    void run() throws Exception;
  }

  static String stdout(Main main) throws Exception {
    PrintStream before = System.out;
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    System.setOut(new PrintStream(bytes, true, StandardCharsets.UTF_8));
    try {
      main.run();
    } finally {
      System.setOut(before);
    }
    return bytes.toString(StandardCharsets.UTF_8);
  }

  @Test
  void quickStartGeneratesReadsTwoEpochsAndReleasesEverything() throws Exception {
    String out = stdout(() -> QuickStart.main(new String[] {dir.toString(), "3000"}));
    assertThat(out).startsWith("generated 3000 rows (x float32[64], label int64) in " + dir);
    assertThat(Files.isRegularFile(dir.resolve("x.npy"))).isTrue();
    // 3000 rows in batches of 256: 12 batches, the last of 184
    assertThat(out).contains("epoch 0: 3000 examples in 12 batches (rank 0 of 1)",
        "epoch 1: 3000 examples in 12 batches (rank 0 of 1)");
    assertThat(out.lines().filter(l -> l.matches("epoch [01] batch [012]: rows 256, first index \\d+, x\\[0\\]\\[0\\] 0\\.\\d{6}")))
        .hasSize(6);
    assertThat(out).endsWith("off-heap bytes outstanding: 0" + System.lineSeparator());
    // the printed first row is the row of that index in the file
    Matcher m = Pattern.compile("epoch 0 batch 0: rows 256, first index (\\d+), x\\[0\\]\\[0\\] (\\S+)").matcher(out);
    assertThat(m.find()).isTrue();
    try (NpyDataset data = Npy.open(dir)) {
      float x = data.get(Long.parseLong(m.group(1))).tensor("x").getFloat(0);
      assertThat(String.format(java.util.Locale.ROOT, "%.6f", x)).isEqualTo(m.group(2));
    }
    // a second run reads the data it finds instead of generating it
    assertThat(stdout(() -> QuickStart.main(new String[] {dir.toString()}))).doesNotContain("generated");
  }

  @Test
  void shardingJobWritesShardsWithTheInputsChecksum() throws Exception {
    Path in = dir.resolve("npy");
    Npy.write(Datasets.synthetic(5_003, 8, 4), in);
    Path out = dir.resolve("shards");
    String printed = stdout(() -> ShardingJob.main(new String[] {"--in", in.toString(), "--out", out.toString(),
        "--shards", "3", "--workers", "2"}));
    assertThat(printed).contains("wrote 3 shards (2 workers) to " + out, "nothing lost: 5003 rows, identical canonical bytes");
    String expected;
    try (NpyDataset input = Npy.open(in)) {
      expected = Checksums.sha256(input);
    }
    try (ShardSet shards = Shards.open(out)) {
      assertThat(shards.size()).isEqualTo(5_003);
      assertThat(Checksums.sha256(shards)).isEqualTo(expected);
    }
    assertThat(printed).contains("sha256 of the input:  " + expected, "sha256 of the shards: " + expected);
    assertThat(Files.isRegularFile(out.resolve(Shards.METADATA))).isTrue();
    List<String> shardLines = printed.lines().filter(l -> l.matches("  shard-\\d+\\.shard: \\d+ rows, .*")).toList();
    assertThat(shardLines).hasSize(3);
  }

  @Test
  void reactorTestExamplePassesEveryCheck() throws Exception {
    String out = stdout(() -> ReactorTestExample.main(new String[0]));
    assertThat(out.lines().filter(l -> l.startsWith("ok: ")).count()).isEqualTo(5);
    assertThat(out).endsWith("off-heap bytes outstanding: 0" + System.lineSeparator());
    MemoryManager.shared().checkNoOutstanding();
  }

  @Test
  void npyTrainingInputNamesTheBottleneckForACheapAndACostlyStep() throws Exception {
    String[] common = {"--dir", dir.toString(), "--rows", "3000", "--dim", "8", "--epochs", "2", "--batch", "100"};
    // a costly augmentation (about 0.2 s of work per epoch on 2 workers) and a free step: input-bound
    String[] costlyInput = java.util.Arrays.copyOf(common, common.length + 2);
    costlyInput[common.length] = "--augment-us";
    costlyInput[common.length + 1] = "150";
    String cheap = stdout(() -> NpyTrainingInput.main(costlyInput));
    assertThat(cheap).startsWith("wrote x.npy (3000 x 8 float32) and y.npy (3000 int64) to " + dir);
    try (NpyDataset data = Npy.open(dir)) {
      assertThat(data.size()).isEqualTo(3000);
      assertThat(data.schema().fields().stream().map(f -> f.name()).toList()).containsExactly("x", "y");
    }
    assertThat(cheap).contains("epoch 0 (rank 0 of 1): 3000 examples in 30 steps", "epoch 1 (rank 0 of 1): 3000 examples in 30 steps");
    assertThat(cheap.lines().filter(l -> l.matches("\\s+\\d+\\s+(npy read|map|batch|prefetch)\\s+.*")).count()).isEqualTo(4);
    assertThat(cheap.lines().filter(l -> l.startsWith("input-bound: ")).count()).as(cheap).isEqualTo(1);
    assertThat(cheap).endsWith("off-heap bytes outstanding: 0" + System.lineSeparator());

    String[] costly = java.util.Arrays.copyOf(common, common.length + 2);
    costly[common.length] = "--step-ms";
    costly[common.length + 1] = "20";
    String slow = stdout(() -> NpyTrainingInput.main(costly));
    assertThat(slow).doesNotContain("wrote x.npy");
    assertThat(slow.lines().filter(l -> l.startsWith("consumer-bound: ")).count()).as(slow).isEqualTo(1);
  }

  @Test
  void parquetTrainingInputResumesToTheUninterruptedRun() throws Exception {
    Path data = dir.resolve("parquet");
    Path cache = dir.resolve("cache");
    String out = stdout(() -> ParquetTrainingInput.main(new String[] {"--dir", data.toString(), "--rows", "6000",
        "--files", "3", "--epochs", "2", "--batch", "100", "--stop-after", "45", "--cache-dir", cache.toString()}));
    assertThat(out).startsWith("wrote 6000 rows (x float32[16], label int64, text string) in 3 Parquet files to " + data);
    assertThat(out).contains("stopped after 45 steps (4500 examples) at epoch 0",
        "stopped + resumed = uninterrupted: 12000 examples over 2 epochs in the same order, none lost, none repeated");
    // 2 epochs of 60 batches: 45 before the stop, 75 after it
    assertThat(out).contains("resumed at epoch 0, position 45: 75 more steps");
    PipelineState state = PipelineState.read(data.resolve("loader-state.json"));
    assertThat(state.epoch()).isZero();
    assertThat(state.position()).isEqualTo(45);
    assertThat(state.endEpoch()).isEqualTo(2);
    Matcher resumed = Pattern.compile("cache during the resumed run: (\\d+) rows read from the cache, (\\d+) from the files")
        .matcher(out);
    assertThat(resumed.find()).as(out).isTrue();
    assertThat(Long.parseLong(resumed.group(1))).isPositive();
    assertThat(out).endsWith("off-heap bytes outstanding: 0" + System.lineSeparator());
  }

  @Test
  void trainingLoopExampleReshufflesEveryEpoch() throws Exception {
    String out = stdout(() -> TrainingLoopExample.main(new String[] {"2000", "2"}));
    List<String> epochs = out.lines().toList();
    assertThat(epochs).hasSize(2);
    // 2000 rows in batches of 64: 32 batches
    assertThat(epochs.get(0)).matches("epoch 0: 32 batches in \\d+\\.\\d{3} s, loss \\d+\\.\\d{4}, first indices: (\\d+ ){7}\\d+");
    assertThat(epochs.get(1)).startsWith("epoch 1: 32 batches in ");
    String first0 = epochs.get(0).substring(epochs.get(0).indexOf("first indices:"));
    String first1 = epochs.get(1).substring(epochs.get(1).indexOf("first indices:"));
    assertThat(first1).as("a new order every epoch").isNotEqualTo(first0);
  }
}
