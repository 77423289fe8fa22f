package dev.sluice.examples.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.core.PipelineState;
import java.io.File;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code sluice read --checkpoint f --checkpoint-every 1000} in a separate JVM, killed with SIGKILL
 * at a random point of its output, then {@code --resume f} in another: what the killed run printed
 * up to its last checkpoint, followed by what the resumed run prints, is the uninterrupted run's
 * {@code --print-indices} output. The checkpoint file is always whole (it is replaced atomically),
 * and the killed run printed at least everything it counts (it is written after the output is
 * flushed).
 */
class KillAndResumeTest {
  private static final int TRIALS = 10;
  private static final long ROWS = 20_000;

  @TempDir static Path tmp;
  static Path data;

  @BeforeAll
  static void generate() {
    data = tmp.resolve("d");
    CliRun r = CliRun.of("generate", data.toString(), "--rows", String.valueOf(ROWS), "--dim", "2", "--format", "npy");
    assertEquals(0, r.exitCode(), r.err());
  }

  /** A {@code sluice} command in a new JVM with this JVM's flags and class path. */
  static ProcessBuilder sluice(List<String> args) {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    for (String a : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
      if (!a.startsWith("-javaagent") && !a.startsWith("-agentlib")) {
        cmd.add(a);
      }
    }
    cmd.add("-cp");
    cmd.add(System.getProperty("java.class.path"));
    cmd.add(SluiceMain.class.getName());
    cmd.addAll(args);
    return new ProcessBuilder(cmd);
  }

  /** The complete lines of {@code file} (a killed run may leave a partial last line). */
  static List<String> lines(Path file) throws IOException {
    String s = Files.exists(file) ? Files.readString(file) : "";
    int end = s.lastIndexOf('\n');
    return end < 0 ? List.of() : Arrays.asList(s.substring(0, end).split("\n"));
  }

  /** The number of lines of {@code reference} a state counts: those of the epochs before it, and its position. */
  static int covered(List<String> reference, PipelineState state) {
    if (state.isFinished()) {
      return reference.size();
    }
    int before = 0;
    while (before < reference.size() && Long.parseLong(reference.get(before).split(" ", 2)[0]) < state.epoch()) {
      before++;
    }
    return before + (int) state.position();
  }

  @ParameterizedTest
  @ValueSource(strings = {
      "--shuffle --seed 3 --epochs 2",
      "--shuffle --buffer 500 --batch 4 --parallelism 3 --seed 3 --epochs 2"})
  void aKilledRunResumedPrintsTheUninterruptedOutput(String options) throws Exception {
    List<String> common = new ArrayList<>(List.of("read", data.toString(), "--print-indices"));
    common.addAll(Arrays.asList(options.split(" ")));
    CliRun whole = CliRun.of(common.toArray(String[]::new));
    assertEquals(0, whole.exitCode(), whole.err());
    List<String> reference = Arrays.asList(whole.out().split("\n"));
    long bytes = whole.out().length();
    Random random = new Random(options.hashCode());
    int killed = 0;
    for (int trial = 0; trial < TRIALS; trial++) {
      Path out = tmp.resolve("out-" + trial + ".txt");
      Path err = tmp.resolve("err-" + trial + ".txt");
      Path ckpt = tmp.resolve("ckpt-" + Math.abs(options.hashCode()) + "-" + trial + ".json");
      List<String> first = new ArrayList<>(common);
      first.addAll(List.of("--checkpoint", ckpt.toString(), "--checkpoint-every", "1000"));
      Process run = sluice(first).redirectOutput(out.toFile()).redirectError(err.toFile()).start();
      long at = bytes / 100 + (long) (random.nextDouble() * bytes * 0.7);
      File outFile = out.toFile();
      Awaitility.await().atMost(Duration.ofMinutes(2)).pollInterval(Duration.ofMillis(1))
          .until(() -> !run.isAlive() || outFile.length() >= at);
      run.destroyForcibly(); // SIGKILL
      assertTrue(run.waitFor(30, TimeUnit.SECONDS));
      if (run.exitValue() != 0) {
        killed++;
      }

      int counted = 0;
      List<String> resumeArgs = new ArrayList<>(common);
      if (Files.exists(ckpt)) {
        PipelineState state = PipelineState.read(ckpt); // whole, whenever the kill came
        counted = covered(reference, state);
        resumeArgs.removeAll(List.of("--epochs", "2"));
        resumeArgs.addAll(List.of("--resume", ckpt.toString()));
      }
      List<String> printed = lines(out);
      assertThat(printed.size()).as("trial %d: printed lines vs lines the checkpoint counts", trial)
          .isGreaterThanOrEqualTo(counted);
      assertEquals(reference.subList(0, counted), printed.subList(0, counted), "trial " + trial);

      Path rest = tmp.resolve("rest-" + trial + ".txt");
      Process resume = sluice(resumeArgs).redirectOutput(rest.toFile()).redirectError(err.toFile()).start();
      assertTrue(resume.waitFor(2, TimeUnit.MINUTES));
      assertEquals(0, resume.exitValue(), Files.readString(err));
      assertEquals("", Files.readString(err));
      List<String> all = new ArrayList<>(printed.subList(0, counted));
      all.addAll(lines(rest));
      assertEquals(reference, all, "trial " + trial + ": killed after " + printed.size() + " lines, checkpoint at "
          + counted);
    }
    assertThat(killed).as("trials killed before they finished").isGreaterThanOrEqualTo(TRIALS / 2);
  }
}
