package dev.sluice.examples.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Commands that write (generate, convert, stage, checkpoints) put their output in place only when
 * it is complete: a failed write leaves nothing at OUT and no temporary beside it, a killed one
 * leaves only a temporary that the next run removes, and of two writers of one OUT exactly one wins.
 */
class AtomicOutputsTest {
  private static final List<String> FORMATS = List.of("npy", "shards", "parquet", "arrow");

  @TempDir Path dir;

  private List<String> names(Path d) throws IOException {
    try (Stream<Path> s = Files.list(d)) {
      return s.map(p -> p.getFileName().toString()).sorted().toList();
    }
  }

  /** {@code java ... mainClass} with this JVM's flags and class path, under a file size limit of {@code kib} KiB. */
  private static ProcessBuilder limited(int kib, Class<?> main, String... args) {
    List<String> cmd = new ArrayList<>(List.of("bash", "-c", "ulimit -f " + kib + " && exec \"$0\" \"$@\""));
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    for (String a : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
      if (!a.startsWith("-javaagent") && !a.startsWith("-agentlib")) {
        cmd.add(a);
      }
    }
    cmd.addAll(List.of("-XX:-UsePerfData", "-cp", System.getProperty("java.class.path"), main.getName()));
    cmd.addAll(List.of(args));
    return new ProcessBuilder(cmd);
  }

  @Test
  void aWriteThatFailsOnIoLeavesNothingAtOutAndNoTemporaryInEveryFormat() throws Exception {
    Path in = dir.resolve("in");
    assertEquals(0, CliRun.of("generate", in.toString(), "--rows", "60000", "--dim", "16").exitCode());
    Path old = dir.resolve("old");
    assertEquals(0, CliRun.of("generate", old.toString(), "--rows", "10", "--dim", "2").exitCode());
    String oldSum = CliRun.of("checksum", old.toString()).out();
    Path outs = Files.createDirectories(dir.resolve("outs"));
    List<List<String>> commands = new ArrayList<>();
    for (String f : FORMATS) {
      commands.add(List.of("generate", outs.resolve("g-" + f).toString(), "--rows", "60000", "--dim", "16",
          "--format", f));
      commands.add(List.of("convert", in.toString(), outs.resolve("c-" + f).toString(), "--to", f, "--num-shards", "2"));
    }
    commands.add(List.of("generate", outs.resolve("dir") + "/", "--rows", "60000", "--dim", "16", "--format", "parquet"));
    commands.add(List.of("stage", in.toString(), "--to", outs.resolve("staged").toString()));
    commands.add(List.of("generate", old.toString(), "--rows", "60000", "--dim", "16", "--force"));
    Process p = limited(1024, RunCommands.class).redirectError(ProcessBuilder.Redirect.INHERIT).start();
    try (OutputStream stdin = p.getOutputStream()) {
      for (List<String> c : commands) {
        stdin.write((String.join("\t", c) + "\n").getBytes(StandardCharsets.UTF_8));
      }
    }
    List<String> results = new ArrayList<>();
    try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
      String line;
      while ((line = r.readLine()) != null) {
        results.add(line);
      }
    }
    assertThat(p.waitFor(2, TimeUnit.MINUTES)).isTrue();
    assertThat(results).hasSize(commands.size());
    for (int i = 0; i < commands.size(); i++) {
      List<String> c = commands.get(i);
      String[] result = results.get(i).split("\t", 2);
      String target = c.get(0).equals("convert") ? c.get(2) : c.get(0).equals("stage") ? c.get(3) : c.get(1);
      assertThat(result[0]).as("%s: %s", c, results.get(i)).isEqualTo("2");
      assertThat(result[1]).as("%s", c).startsWith("sluice: ").doesNotContain("\\n")
          .contains(target.endsWith("/") ? target.substring(0, target.length() - 1) : target)
          .contains("File too large");
    }
    assertThat(names(outs)).as("nothing at OUT and no temporary beside it").isEmpty();
    assertThat(names(dir)).containsExactlyInAnyOrder("in", "old", "outs");
    assertEquals(oldSum, CliRun.of("checksum", old.toString()).out(), "a failed --force leaves the old dataset");
  }

  @Test
  void ofTwoGeneratesOfOneOutExactlyOneSucceedsAndTheOtherSaysItExists() throws Exception {
    for (String f : FORMATS) {
      Path out = dir.resolve("race-" + f);
      ExecutorService pool = Executors.newFixedThreadPool(2);
      CountDownLatch go = new CountDownLatch(1);
      List<Future<CliRun>> runs = new ArrayList<>();
      for (int seed = 0; seed < 2; seed++) {
        String s = String.valueOf(seed);
        runs.add(pool.submit(() -> {
          go.await();
          return CliRun.of("generate", out.toString(), "--rows", "20000", "--dim", "8", "--format", f, "--seed", s);
        }));
      }
      go.countDown();
      List<CliRun> done = new ArrayList<>();
      for (Future<CliRun> r : runs) {
        done.add(r.get(2, TimeUnit.MINUTES));
      }
      pool.shutdown();
      assertThat(done).as(f).extracting(CliRun::exitCode).containsExactlyInAnyOrder(0, 2);
      CliRun lost = done.get(0).exitCode() == 2 ? done.get(0) : done.get(1);
      assertEquals("sluice: " + out + " already exists; pass --force to replace it\n", lost.err(), f);
      assertThat(CliRun.of("checksum", out.toString()).exitCode()).as(f).isZero();
    }
    assertThat(names(dir)).containsExactly("race-arrow", "race-npy", "race-parquet", "race-shards");
  }

  @Test
  void twoGenerateProcessesOfOneOut() throws Exception {
    Path out = dir.resolve("proc-race");
    List<Process> ps = new ArrayList<>();
    for (int seed = 0; seed < 2; seed++) {
      ps.add(KillAndResumeTest.sluice(List.of("generate", out.toString(), "--rows", "50000", "--dim", "8",
          "--seed", String.valueOf(seed))).redirectOutput(ProcessBuilder.Redirect.DISCARD)
          .redirectError(dir.resolve("err-" + seed).toFile()).start());
    }
    List<Integer> codes = new ArrayList<>();
    for (Process p : ps) {
      assertThat(p.waitFor(2, TimeUnit.MINUTES)).isTrue();
      codes.add(p.exitValue());
    }
    assertThat(codes).containsExactlyInAnyOrder(0, 2);
    String err = Files.readString(dir.resolve("err-" + codes.indexOf(2)));
    assertEquals("sluice: " + out + " already exists; pass --force to replace it\n", err);
    assertThat(names(dir)).containsExactly("err-0", "err-1", "proc-race");
  }

  @Test
  void aConvertToShardsKilledMidWriteLeavesNoOutAndTheRerunRemovesItsTemporary() throws Exception {
    Path in = dir.resolve("in");
    assertEquals(0, CliRun.of("generate", in.toString(), "--rows", "200000", "--dim", "32").exitCode());
    Path out = dir.resolve("out");
    boolean killedMidWrite = false;
    for (int attempt = 0; attempt < 5 && !killedMidWrite; attempt++) {
      Process p = KillAndResumeTest.sluice(List.of("convert", in.toString(), out.toString(), "--to", "shards",
          "--num-shards", "64", "--workers", "1")).redirectOutput(ProcessBuilder.Redirect.DISCARD)
          .redirectError(ProcessBuilder.Redirect.DISCARD).start();
      String prefix = ".out.tmp-" + p.pid() + "-";
      // the latch: a shard of the set is being written in the temporary directory
      Awaitility.await().atMost(Duration.ofMinutes(2)).pollInterval(Duration.ofMillis(1)).until(() -> !p.isAlive()
          || shardInProgress(prefix));
      p.destroyForcibly(); // SIGKILL
      assertThat(p.waitFor(1, TimeUnit.MINUTES)).isTrue();
      killedMidWrite = p.exitValue() != 0;
      if (!killedMidWrite) {
        assertThat(names(dir)).containsExactly("in", "out"); // it completed first: try again
        Files.walk(out).sorted(java.util.Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
        continue;
      }
      assertThat(Files.exists(out)).as("nothing at OUT after the kill").isFalse();
      assertThat(names(dir)).as("the killed writer's temporary").anyMatch(n -> n.startsWith(prefix));
    }
    assertThat(killedMidWrite).as("a convert killed before it completed").isTrue();
    CliRun rerun = CliRun.of("convert", in.toString(), out.toString(), "--to", "shards", "--num-shards", "4");
    assertThat(rerun.exitCode()).as(rerun.err()).isZero();
    assertThat(names(dir)).as("the rerun removed the dead writer's temporary").containsExactly("in", "out");
    assertEquals(CliRun.of("checksum", in.toString()).out(), CliRun.of("checksum", out.toString()).out());
  }

  private boolean shardInProgress(String prefix) throws IOException {
    for (String n : names(dir)) {
      if (n.startsWith(prefix)) {
        try (Stream<Path> s = Files.list(dir.resolve(n))) {
          return s.anyMatch(f -> f.getFileName().toString().startsWith(".shard-"));
        } catch (java.nio.file.NoSuchFileException renamed) {
          return false;
        }
      }
    }
    return false;
  }

  @Test
  void aCheckpointWriterKilledLeavesATemporaryThatTheNextRunRemoves() throws Exception {
    Path in = dir.resolve("in");
    assertEquals(0, CliRun.of("generate", in.toString(), "--rows", "200000", "--dim", "2").exitCode());
    Path ckpt = dir.resolve("ckpt.json");
    boolean left = false;
    for (int attempt = 0; attempt < 20 && !left; attempt++) {
      Process p = KillAndResumeTest.sluice(List.of("read", in.toString(), "--checkpoint", ckpt.toString(),
          "--checkpoint-every", "1")).redirectOutput(ProcessBuilder.Redirect.DISCARD)
          .redirectError(ProcessBuilder.Redirect.DISCARD).start();
      String prefix = ".ckpt.json.tmp-" + p.pid() + "-";
      Awaitility.await().atMost(Duration.ofMinutes(2)).pollInterval(Duration.ofMillis(1))
          .until(() -> !p.isAlive() || names(dir).stream().anyMatch(n -> n.startsWith(prefix)));
      p.destroyForcibly();
      assertThat(p.waitFor(1, TimeUnit.MINUTES)).isTrue();
      left = names(dir).stream().anyMatch(n -> n.startsWith(prefix));
    }
    assertThat(left).as("a kill caught a checkpoint mid-write").isTrue();
    CliRun next = CliRun.of("read", in.toString(), "--checkpoint", ckpt.toString(), "--checkpoint-every", "100000");
    assertThat(next.exitCode()).as(next.err()).isZero();
    assertThat(names(dir)).containsExactly("ckpt.json", "in");
  }

  @Test
  void aWriteTheSystemRefusesNamesTheReason() {
    Path d = dir.resolve("d");
    assertThat(CliRun.of("generate", d.toString(), "--rows", "20", "--dim", "2").exitCode()).isZero();
    // /sys refuses new entries even to root, so this test needs no read-only mount
    for (String to : FORMATS) {
      Path out = Path.of("/sys/sluice-refused-" + to);
      CliRun run = CliRun.of("convert", d.toString(), out.toString(), "--to", to);
      assertThat(run.exitCode()).as(run.err()).isEqualTo(2);
      assertThat(run.err().lines()).as(run.err()).hasSize(1);
      assertThat(run.err()).startsWith("sluice: ").contains("/sys/sluice-refused-" + to);
      String reason = run.err().strip().substring(run.err().strip().lastIndexOf(": ") + 2);
      assertThat(reason).as(run.err()).doesNotContain("/").isNotBlank();
    }
  }
}
