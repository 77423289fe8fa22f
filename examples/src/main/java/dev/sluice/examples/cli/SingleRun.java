package dev.sluice.examples.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sluice.examples.internal.JvmCommand;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A {@code sluice} command run in a JVM of its own: this JVM's {@code java}, flags and class path,
 * so it behaves as the command a user types, and starts cold as that command does.
 */
final class SingleRun {
  /** The longest a single run may take before it is stopped. */
  private static final long TIMEOUT_MINUTES = 10;

  private SingleRun() {}

  /**
   * Runs {@code sluice <args>} and returns the JSON object on the last line of its output.
   *
   * @throws IllegalStateException naming the command and its error when it fails or prints no JSON
   */
  static ObjectNode json(List<String> args) {
    List<String> cmd = JvmCommand.of(SluiceMain.class, List.of(), args);
    String what = "sluice " + String.join(" ", args);
    Path err = null;
    try {
      err = Files.createTempFile("sluice-run", ".err");
      Process p = new ProcessBuilder(cmd).redirectError(err.toFile()).start();
      String out;
      try (InputStream in = p.getInputStream()) {
        out = new String(in.readAllBytes(), StandardCharsets.UTF_8);
      }
      if (!p.waitFor(TIMEOUT_MINUTES, TimeUnit.MINUTES)) {
        p.destroyForcibly();
        throw new IllegalStateException(what + " did not finish within " + TIMEOUT_MINUTES + " minutes");
      }
      if (p.exitValue() != 0) {
        String message = Files.readString(err).strip();
        throw new IllegalStateException(what + " exited with " + p.exitValue() + ": "
            + (message.isEmpty() ? "(no message)" : message.lines().findFirst().orElse("")));
      }
      String[] lines = out.strip().split("\n");
      JsonNode last = new ObjectMapper().readTree(lines[lines.length - 1]);
      if (!(last instanceof ObjectNode o)) {
        throw new IllegalStateException(what + " printed no JSON object last: " + lines[lines.length - 1]);
      }
      return o;
    } catch (IOException e) {
      throw new UncheckedIOException(what + ": " + e.getMessage(), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(what + " was interrupted", e);
    } finally {
      if (err != null) {
        try {
          Files.deleteIfExists(err);
        } catch (IOException ignored) {
          // a temporary file left behind is harmless
        }
      }
    }
  }
}
