package dev.sluice.examples.cli;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.core.MemoryManager;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PipedInputStream;
import java.io.PipedOutputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.awaitility.Awaitility;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The fuzz suite: seeded mutations of small valid datasets of every format (npy arrays, an npy
 * stack, a shard set, Parquet in several layouts, Arrow IPC files and a stream), each run through
 * {@code sluice read}, {@code sluice checksum} and the window shuffle in-process, each command on a
 * daemon thread with a time limit.
 *
 * <p>A mutant fails the suite when a command hangs past the limit, exits other than 0 or 2, throws
 * out of picocli, prints a stack trace or more than one line to stderr, exits 2 with a line that
 * does not start {@code sluice: }, or leaves pooled memory outstanding. For a shard set, whose files
 * carry checksums, a changed shard file that reads with exit 0 but other values or row counts than
 * the original (and a changed {@code metadata.json} that reads with exit 0 but other row counts) is
 * silently corrupted data, and fails too.
 *
 * <p>Deterministic from {@code -Dfuzz.seed=S} (default below); {@code -Dfuzz.iterations=N} sets
 * the number of mutants, {@code -Dfuzz.case=K} runs mutant {@code K} alone, and
 * {@code -Dfuzz.timeoutSeconds=T} the per-command limit. The mutants that failed are kept under
 * {@code target/fuzz-failures/}, and the report names the seed, format, mutation and command of
 * each.
 */
class CliFuzzTest {
  static final long SEED = Long.getLong("fuzz.seed", 20261127L);
  static final int ITERATIONS = Integer.getInteger("fuzz.iterations", 2400);
  static final int ONLY_CASE = Integer.getInteger("fuzz.case", -1);
  static final long LIMIT_SECONDS = Long.getLong("fuzz.timeoutSeconds", 10);
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Path KEPT = Path.of("target", "fuzz-failures");
  private static final Pattern EXCEPTION_LINE =
      Pattern.compile("(Caused by: )?[\\w$]+(\\.[\\w$]+)+(Exception|Error|Throwable)\\b");

  @TempDir Path dir;

  /** What one command did. */
  record Outcome(int exit, String out, String err, Throwable thrown, StackTraceElement[] hung) {
    boolean hang() {
      return hung != null;
    }
  }

  /** One failed check, with what reproduces it. */
  record Failure(int mutant, FuzzSeeds.Seed seed, String file, FuzzMutations.Mutant mutation, List<String> command,
      String kind, String detail, String where) {
    String group() {
      return kind + " | " + seed.kind() + " | " + where;
    }
  }

  @Test
  void mutantsOfEveryFormatReadChecksumAndShuffleWithTypedErrorsOnly() throws IOException {
    List<FuzzSeeds.Seed> seeds = FuzzSeeds.write(dir.resolve("seeds"));
    List<Failure> failures = new ArrayList<>();
    Map<String, int[]> exits = new LinkedHashMap<>(); // seed -> mutants with exit 0, exit 2 (per command)
    MemoryManager memory = MemoryManager.shared();
    long limit = memory.limit();
    long baseline = memory.outstandingBytes();
    long started = System.nanoTime();
    long commandsRun = 0;
    int first = ONLY_CASE >= 0 ? ONLY_CASE : 0;
    int end = ONLY_CASE >= 0 ? ONLY_CASE + 1 : ITERATIONS;
    for (int k = first; k < end; k++) {
      FuzzSeeds.Seed seed = seeds.get(k % seeds.size());
      SplittableRandom rnd = new SplittableRandom(SEED ^ (k * 0x9E3779B97F4A7C15L));
      String file = pick(seed, rnd);
      byte[] good = Files.readAllBytes(seed.root().resolve(file));
      FuzzMutations.Mutant m = FuzzMutations.mutate(good, file, seed.kind(), rnd);
      Path work = dir.resolve("mutant-" + k);
      Files.createDirectories(work);
      for (String f : seed.files()) {
        Files.write(work.resolve(f), f.equals(file) ? m.bytes() : Files.readAllBytes(seed.root().resolve(f)));
      }
      Path path = seed.target().isEmpty() ? work : work.resolve(seed.target());
      String at = path.toString();
      List<List<String>> commands = new ArrayList<>(List.of(
          command(seed, "read", at, "--json"),
          command(seed, "checksum", at),
          seed.columnar()
              ? command(seed, "read", at, "--shuffle", "--batch", "16", "--json")
              : command(seed, "read", at, "--shuffle", "--json")));
      if (seed.kind() == FuzzSeeds.Kind.ARROW_STREAM) {
        commands.add(List.of("read", "-", "--batch", "16", "--json")); // the stream piped in: no seeking back
      }
      int failuresBefore = failures.size();
      int[] counts = exits.computeIfAbsent(seed.name(), s -> new int[2]);
      for (List<String> command : commands) {
        commandsRun++;
        memory.setLimit(limit); // the one JVM-wide setting a command may change (--memory-limit)
        Outcome o = run(command, command.get(1).equals("-") ? m.bytes() : null);
        String problem = check(o, seed, file, command);
        if (problem != null) {
          failures.add(failure(k, seed, file, m, command, o, problem));
        } else if (o.exit() == 0) {
          counts[0]++;
        } else {
          counts[1]++;
        }
        if (o.hang()) {
          baseline = memory.outstandingBytes(); // the abandoned thread holds what it holds
          continue;
        }
        long leaked = awaitReleased(memory, baseline);
        if (leaked != 0) {
          failures.add(new Failure(k, seed, file, m, command, "leak", leaked + " bytes of pooled memory still "
              + "outstanding after the command returned: " + memory.outstandingBytesByStage(), "memory"));
          baseline = memory.outstandingBytes();
        }
      }
      if (failures.size() > failuresBefore) {
        keep(work, k);
      }
      delete(work);
    }
    double seconds = (System.nanoTime() - started) / 1e9;
    StringBuilder summary = new StringBuilder(String.format(Locale.ROOT,
        "fuzz: %d mutants (seed %d), %d commands in %.1f s, %d failures; commands exiting 0 / 2 per seed:",
        end - first, SEED, commandsRun, seconds, failures.size()));
    exits.forEach((name, c) -> summary.append(' ').append(name).append(' ').append(c[0]).append('/').append(c[1]));
    System.out.println(summary);
    if (!failures.isEmpty()) {
      String report = report(failures);
      Files.createDirectories(KEPT);
      Files.writeString(KEPT.resolve("report.txt"), summary + "\n\n" + report);
      fail(summary + "\n\n" + report);
    }
    assertTrue(end - first > 0, "no mutants ran");
  }

  /** A command that does not finish in time comes back as a hang, fast, on the test's thread. */
  @Test
  void aCommandPastItsTimeLimitIsReportedAsAHangAndAbandoned() throws IOException {
    try (PipedOutputStream never = new PipedOutputStream(); PipedInputStream blocked = new PipedInputStream(never)) {
      long t0 = System.nanoTime();
      Outcome o = run(List.of("checksum", "-"), blocked, 1);
      long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
      assertTrue(o.hang(), "a read of a stream nobody writes is reported as a hang: " + o);
      assertTrue(millis < 5_000, "the time limit of 1 s ends it fast, not after " + millis + " ms");
      assertTrue(o.hung().length > 0, "the report has the stack of the abandoned thread");
    }
  }

  /** A file of the seed to mutate: {@code metadata.json} a quarter of the time when there is one. */
  private static String pick(FuzzSeeds.Seed seed, SplittableRandom rnd) {
    List<String> files = seed.files();
    if (files.contains("metadata.json") && files.size() > 1) {
      if (rnd.nextInt(4) == 0) {
        return "metadata.json";
      }
      List<String> data = files.stream().filter(f -> !f.equals("metadata.json")).toList();
      return data.get(rnd.nextInt(data.size()));
    }
    return files.get(rnd.nextInt(files.size()));
  }

  private static List<String> command(FuzzSeeds.Seed seed, String... args) {
    List<String> c = new ArrayList<>(Arrays.asList(args));
    c.addAll(seed.options());
    return List.copyOf(c);
  }

  /**
   * Runs {@code sluice args} on a daemon thread, with {@code stdin} (when not null) as standard
   * input; a command still running after the limit is abandoned. Standard input, the one JVM-wide
   * stream a command reads, is put back afterwards.
   */
  static Outcome run(List<String> args, byte[] stdin) {
    return run(args, stdin == null ? null : new ByteArrayInputStream(stdin), LIMIT_SECONDS);
  }

  private static Outcome run(List<String> args, InputStream stdin, long limitSeconds) {
    InputStream in = System.in;
    if (stdin != null) {
      System.setIn(stdin);
    }
    try {
      return run(args, limitSeconds);
    } finally {
      System.setIn(in);
    }
  }

  private static Outcome run(List<String> args, long limitSeconds) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    CompletableFuture<Integer> exit = new CompletableFuture<>();
    Thread t = new Thread(() -> {
      try {
        exit.complete(SluiceCommand.commandLine(new PrintWriter(out, true), new PrintWriter(err, true))
            .execute(args.toArray(String[]::new)));
      } catch (Throwable e) {
        exit.completeExceptionally(e);
      }
    }, "fuzz-cli");
    t.setDaemon(true);
    t.start();
    try {
      int code = exit.get(limitSeconds, TimeUnit.SECONDS);
      return new Outcome(code, out.toString(), err.toString(), null, null);
    } catch (TimeoutException e) {
      StackTraceElement[] stack = t.getStackTrace();
      t.interrupt();
      return new Outcome(-1, out.toString(), err.toString(), null, stack);
    } catch (ExecutionException e) {
      return new Outcome(-1, out.toString(), err.toString(), e.getCause(), null);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /** The problem with {@code o}, or null when it kept the command line's contract. */
  private static String check(Outcome o, FuzzSeeds.Seed seed, String file, List<String> command) {
    if (o.hang()) {
      return "hang: still running after " + LIMIT_SECONDS + " s";
    }
    if (o.thrown() != null) {
      return "threw out of picocli: " + o.thrown();
    }
    List<String> lines = o.err().lines().toList();
    if (o.exit() != 0 && o.exit() != 2) {
      return "exit " + o.exit() + ": " + o.err().strip();
    }
    if (lines.stream().anyMatch(l -> l.startsWith("\tat ") || l.startsWith("Caused by: "))) {
      return "stack trace on stderr: " + lines.get(0);
    }
    if (lines.size() > 1) {
      return lines.size() + " lines on stderr: " + String.join(" / ", lines.subList(0, Math.min(3, lines.size())));
    }
    if (o.exit() == 2 && (lines.isEmpty() || !lines.get(0).startsWith("sluice: "))) {
      return "exit 2 without one 'sluice: ' line on stderr: " + o.err().strip();
    }
    if (o.exit() == 0 && seed.checksummed()) {
      boolean metadata = file.equals("metadata.json");
      if (command.get(0).equals("checksum") && !metadata && !o.out().strip().equals(seed.sha())) {
        return "silent corruption: checksum exits 0 with " + o.out().strip() + " instead of " + seed.sha();
      }
      if (command.get(0).equals("read")) {
        long[] read = examplesAndBytes(lastLine(o.out()));
        if (read[0] != seed.examples() || (!metadata && read[1] != seed.bytes())) {
          return "silent corruption: read exits 0 with " + read[0] + " examples of " + read[1] + " bytes instead of "
              + seed.examples() + " of " + seed.bytes();
        }
      }
    }
    return null;
  }

  private Failure failure(int k, FuzzSeeds.Seed seed, String file, FuzzMutations.Mutant m, List<String> command,
      Outcome o, String problem) {
    String kind = problem.substring(0, problem.indexOf(':'));
    String where;
    if (o.hang()) {
      where = firstFrames(o.hung());
    } else if (o.thrown() != null) {
      where = o.thrown().getClass().getName() + " at " + firstFrames(o.thrown().getStackTrace());
    } else if (o.exit() != 0 && o.exit() != 2 || problem.startsWith("stack trace") || problem.contains("lines on")) {
      // the same command with --verbose prints the stack trace: group by the root cause's top frame
      List<String> verbose = new ArrayList<>(command);
      verbose.add("--verbose");
      where = rootFrame(run(verbose, command.get(1).equals("-") ? m.bytes() : null).err());
    } else if (problem.startsWith("silent corruption")) {
      where = command.get(0) + " of a changed " + (file.equals("metadata.json") ? "metadata.json" : "data file");
    } else {
      where = normalize(problem);
    }
    return new Failure(k, seed, file, m, command, kind, problem, where);
  }

  /** The root cause's class and first frame from a printed stack trace. */
  static String rootFrame(String trace) {
    List<String> lines = trace.lines().toList();
    int cause = -1;
    for (int i = 0; i < lines.size(); i++) {
      if (EXCEPTION_LINE.matcher(lines.get(i)).lookingAt()) {
        cause = i; // the last one: the root cause
      }
    }
    if (cause < 0) {
      return normalize(trace.strip());
    }
    String exception = lines.get(cause).replaceFirst("^Caused by: ", "").replaceFirst(":.*", "");
    String frame = "";
    for (int i = cause + 1; i < lines.size() && lines.get(i).startsWith("\t"); i++) {
      String at = lines.get(i).strip();
      if (frame.isEmpty() || at.startsWith("at dev.sluice.")) {
        frame = at;
        if (at.startsWith("at dev.sluice.")) {
          break;
        }
      }
    }
    return exception + " " + frame;
  }

  private static String firstFrames(StackTraceElement[] stack) {
    return Arrays.stream(stack).filter(e -> e.getClassName().startsWith("dev.sluice")).limit(2)
        .map(StackTraceElement::toString).reduce((a, b) -> a + " <- " + b)
        .orElse(stack.length > 0 ? stack[0].toString() : "?");
  }

  /** A message with its paths and numbers taken out, to group failures of one kind. */
  static String normalize(String message) {
    return message.replaceAll("/\\S+", "<path>").replaceAll("\\d+", "#");
  }

  /** Waits up to 5 s for the pooled memory a command released on another thread; returns what is still out. */
  private static long awaitReleased(MemoryManager memory, long baseline) {
    // usually released within microseconds of the command's return: yield first, Awaitility for the slow rest
    for (int i = 0; i < 10_000 && memory.outstandingBytes() != baseline; i++) {
      Thread.yield();
    }
    if (memory.outstandingBytes() != baseline) {
      try {
        Awaitility.await().pollDelay(Duration.ZERO).pollInterval(Duration.ofMillis(1)).atMost(Duration.ofSeconds(5))
            .until(() -> memory.outstandingBytes() == baseline);
      } catch (ConditionTimeoutException e) {
        // reported by the caller
      }
    }
    return memory.outstandingBytes() - baseline;
  }

  private static String report(List<Failure> failures) {
    Map<String, List<Failure>> groups = new LinkedHashMap<>();
    for (Failure f : failures) {
      groups.computeIfAbsent(f.group(), g -> new ArrayList<>()).add(f);
    }
    StringBuilder r = new StringBuilder(groups.size() + " kinds of failure:\n");
    groups.forEach((group, fs) -> {
      Failure f = fs.get(0);
      Map<String, Long> ops = new TreeMap<>();
      fs.forEach(x -> ops.merge(x.mutation().op() + (x.file().equals("metadata.json") ? " of metadata.json" : ""), 1L,
          Long::sum));
      r.append("\n* ").append(fs.size()).append(" x ").append(group).append('\n')
          .append("  by mutation: ").append(ops).append('\n')
          .append("  ").append(f.detail()).append('\n')
          .append("  mutant ").append(f.mutant()).append(" of seed ").append(SEED).append(": ")
          .append(f.seed().name()).append(", ").append(f.file()).append(": ").append(f.mutation().what()).append('\n')
          .append("  command: sluice ").append(String.join(" ", f.command()))
          .append(f.command().get(1).equals("-") ? " < " + f.file() : "").append('\n')
          .append("  reproduce: mvn -B -o verify -pl examples -am -Dtest=CliFuzzTest "
              + "-Dsurefire.failIfNoSpecifiedTests=false -Dfuzz.seed=").append(SEED).append(" -Dfuzz.case=")
          .append(f.mutant()).append(" (the mutant is kept in examples/").append(KEPT).append("/mutant-")
          .append(f.mutant()).append(")\n");
      if (fs.stream().map(Failure::mutant).distinct().count() > 1) {
        r.append("  also mutants ").append(fs.stream().map(x -> String.valueOf(x.mutant())).distinct().skip(1).limit(12).reduce((a, b) -> a + ", " + b).orElse("")).append(fs.stream().map(Failure::mutant).distinct().count() > 13 ? ", ..." : "").append('\n');
      }
    });
    return r.toString();
  }

  private static void keep(Path work, int k) throws IOException {
    Path to = KEPT.resolve("mutant-" + k);
    delete(to);
    Files.createDirectories(to);
    try (Stream<Path> files = Files.list(work)) {
      for (Path f : files.toList()) {
        Files.copy(f, to.resolve(f.getFileName()), StandardCopyOption.REPLACE_EXISTING);
      }
    }
  }

  private static void delete(Path p) throws IOException {
    if (!Files.exists(p)) {
      return;
    }
    try (Stream<Path> walk = Files.walk(p)) {
      walk.sorted(Comparator.reverseOrder()).forEach(f -> {
        try {
          Files.deleteIfExists(f);
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        }
      });
    }
  }

  static String lastLine(String out) {
    List<String> lines = out.strip().lines().toList();
    return lines.isEmpty() ? "" : lines.get(lines.size() - 1);
  }

  /** {@code examples} and {@code bytes} of {@code read --json}'s last line. */
  static long[] examplesAndBytes(String json) {
    try {
      JsonNode n = JSON.readTree(json);
      return new long[] {n.get("examples").asLong(), n.get("bytes").asLong()};
    } catch (IOException | RuntimeException e) {
      return new long[] {-1, -1};
    }
  }
}
