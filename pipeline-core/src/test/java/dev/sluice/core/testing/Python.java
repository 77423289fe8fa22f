package dev.sluice.core.testing;

import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;

/**
 * Runs a script with {@code /usr/bin/python3} (the Python that has numpy; the system property
 * {@code sluice.test.python} names another). Without numpy the calling test is skipped, except
 * under {@code CI=true}, where it fails; a skip prints one line to the build's console.
 */
public final class Python {
  public static final String PYTHON = System.getProperty("sluice.test.python", "/usr/bin/python3");

  /**
   * The console of the build: the process's own standard error, which surefire shows as it comes,
   * while {@code System.err} goes to the test's output file ({@code redirectTestOutputToFile}).
   */
  private static final PrintStream CONSOLE = new PrintStream(new FileOutputStream(FileDescriptor.err), true,
      StandardCharsets.UTF_8);

  private Python() {}

  /** Skips (or, under CI, fails) when numpy is missing; a skip prints one line naming the test and the reason. */
  public static void requireNumpy() throws Exception {
    boolean ok = Files.isExecutable(Path.of(PYTHON)) && run0(List.of(PYTHON, "-c", "import numpy")).exit == 0;
    if (!ok) {
      String msg = PYTHON + " with numpy is missing (apt-get install python3-numpy)";
      if ("true".equalsIgnoreCase(System.getenv("CI"))) {
        Assertions.fail(msg);
      }
      CONSOLE.println("SKIPPED NumPy cross-check " + caller() + ": " + msg);
      Assumptions.abort(msg + "; skipping the NumPy cross-check");
    }
  }

  /** The test class and method that asked for numpy. */
  private static String caller() {
    return StackWalker.getInstance().walk(frames -> frames
        .filter(f -> !f.getClassName().equals(Python.class.getName()))
        .findFirst()
        .map(f -> f.getClassName().substring(f.getClassName().lastIndexOf('.') + 1) + "." + f.getMethodName())
        .orElse("?"));
  }

  /** Runs {@code script} with {@code args}; returns stdout, failing the test on a non-zero exit. */
  public static String run(String script, String... args) throws Exception {
    requireNumpy();
    Path file = Files.createTempFile("sluice-test", ".py");
    try {
      Files.writeString(file, script);
      List<String> cmd = new ArrayList<>(List.of(PYTHON, file.toString()));
      cmd.addAll(List.of(args));
      Result r = run0(cmd);
      if (r.exit != 0) {
        Assertions.fail("python failed (" + r.exit + "):\n" + r.err + "\n" + r.out);
      }
      return r.out;
    } finally {
      Files.deleteIfExists(file);
    }
  }

  private record Result(int exit, String out, String err) {}

  private static Result run0(List<String> cmd) throws IOException, InterruptedException {
    Path out = Files.createTempFile("py", ".out");
    Path err = Files.createTempFile("py", ".err");
    try {
      Process p = new ProcessBuilder(cmd).redirectOutput(out.toFile()).redirectError(err.toFile()).start();
      if (!p.waitFor(120, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        return new Result(-1, "", "timed out");
      }
      return new Result(p.exitValue(), Files.readString(out, StandardCharsets.UTF_8), Files.readString(err, StandardCharsets.UTF_8));
    } catch (IOException e) {
      return new Result(-1, "", e.toString());
    } finally {
      Files.deleteIfExists(out);
      Files.deleteIfExists(err);
    }
  }
}
