package dev.sluice.core.testing;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A child JVM running a test main with this JVM's flags, {@code java.home} and class path; its
 * standard output is read line by line on a thread of its own.
 */
public final class ChildJvm implements AutoCloseable {
  private final Process process;
  private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
  private final StringBuilder err = new StringBuilder();

  private ChildJvm(Process process) {
    this.process = process;
    Thread out = new Thread(() -> pump(process.getInputStream(), null), "child-stdout");
    Thread errors = new Thread(() -> pump(process.getErrorStream(), err), "child-stderr");
    out.setDaemon(true);
    errors.setDaemon(true);
    out.start();
    errors.start();
  }

  /** Starts {@code main} with {@code args}. */
  public static ChildJvm start(Class<?> main, String... args) throws IOException {
    return start(main, List.of(), args);
  }

  /** Starts {@code main} with {@code args} and the extra JVM options {@code jvmOptions}. */
  public static ChildJvm start(Class<?> main, List<String> jvmOptions, String... args) throws IOException {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    for (String a : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
      if (!a.startsWith("-agentlib") && !a.startsWith("-javaagent")) {
        cmd.add(a);
      }
    }
    cmd.addAll(jvmOptions);
    cmd.add("-cp");
    cmd.add(System.getProperty("java.class.path"));
    cmd.add(main.getName());
    cmd.addAll(List.of(args));
    return new ChildJvm(new ProcessBuilder(cmd).start());
  }

  private void pump(java.io.InputStream in, StringBuilder into) {
    try (BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
      String line;
      while ((line = r.readLine()) != null) {
        if (into == null) {
          lines.add(line);
        } else {
          synchronized (into) {
            into.append(line).append('\n');
          }
        }
      }
    } catch (IOException ignored) {
      // the child is gone
    }
  }

  /** Writes {@code line} to its standard input. */
  public void send(String line) throws IOException {
    java.io.OutputStream in = process.getOutputStream();
    in.write((line + "\n").getBytes(StandardCharsets.UTF_8));
    in.flush();
  }

  /** The next line of its output, or null when none comes within {@code seconds}. */
  public String nextLine(long seconds) throws InterruptedException {
    return lines.poll(seconds, TimeUnit.SECONDS);
  }

  /** Kills it with SIGKILL and waits (bounded) until it is gone. */
  public void kill() throws InterruptedException {
    process.destroyForcibly();
    if (!process.waitFor(30, TimeUnit.SECONDS)) {
      throw new IllegalStateException("a killed child JVM did not exit within 30 s");
    }
  }

  /** Waits at most {@code seconds} for it to exit; its exit code, or -1 when it did not (it is then killed). */
  public int waitFor(long seconds) throws InterruptedException {
    if (!process.waitFor(seconds, TimeUnit.SECONDS)) {
      kill();
      return -1;
    }
    return process.exitValue();
  }

  /** What it wrote to stderr so far. */
  public String stderr() {
    synchronized (err) {
      return err.toString();
    }
  }

  /** Kills it if it still runs (and waits, bounded, until it is gone). */
  @Override
  public void close() {
    if (process.isAlive()) {
      try {
        kill();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /** The process, for its pid. */
  public Process process() {
    return process;
  }
}
