package dev.sluice.examples.cli;

import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Entry point of {@code java -jar sluice.jar}. Turns Chronicle Map's usage analytics off and sets
 * the log level before any library class loads,
 * relaunches once on JDK 24+ with the one flag a jar manifest cannot carry, then runs
 * {@link SluiceCommand} and exits with its code.
 */
public final class SluiceMain {
  static final String UNSAFE_FLAG = "--sun-misc-unsafe-memory-access=allow";

  private SluiceMain() {}

  public static void main(String[] args) throws Exception {
    // Chronicle Map (the cache's index) would otherwise send usage data and print to stdout
    System.setProperty("chronicle.analytics.disable", "true");
    boolean verbose = Arrays.asList(args).contains("--verbose");
    System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", verbose ? "debug" : "off");
    System.setProperty("org.slf4j.simpleLogger.logFile", "System.err");
    if (!verbose) {
      // Sluice's own warnings (a cache falling back to upstream) as one "sluice: warning:" line each
      System.setProperty("org.slf4j.simpleLogger.log.dev.sluice", "warn");
      System.setProperty("org.slf4j.simpleLogger.showThreadName", "false");
      System.setProperty("org.slf4j.simpleLogger.showLogName", "false");
      System.setProperty("org.slf4j.simpleLogger.levelInBrackets", "false");
      System.setProperty("org.slf4j.simpleLogger.warnLevelString", "sluice: warning:");
      System.setErr(new java.io.PrintStream(new ForeignNoticeFilter(new java.io.FileOutputStream(
          java.io.FileDescriptor.err)), true, java.nio.charset.Charset.defaultCharset()));
    }
    if (needsRelaunch()) {
      System.exit(relaunch(args));
    }
    System.exit(SluiceCommand.execute(args));
  }

  /**
   * JDK 24+ prints a warning to stderr the first time {@code sun.misc.Unsafe.invokeCleaner} is
   * called (parquet-java and the windowed Parquet reads free buffers with it), and Netty 4.2 turns
   * its use of {@code sun.misc.Unsafe} off, which Arrow's allocator cannot run without (writing
   * Arrow files), unless {@code --sun-misc-unsafe-memory-access=allow} is given; no manifest
   * attribute can set that flag. Skipped when the user gave any value of it, or when not started
   * from a jar.
   */
  private static boolean needsRelaunch() {
    if (Runtime.version().feature() < 24 || System.getProperty("sluice.relaunched") != null) {
      return false;
    }
    for (String a : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
      if (a.startsWith("--sun-misc-unsafe-memory-access=")) {
        return false;
      }
    }
    return jarPath() != null;
  }

  private static Path jarPath() {
    try {
      Path p = Path.of(SluiceMain.class.getProtectionDomain().getCodeSource().getLocation().toURI());
      return p.toString().endsWith(".jar") ? p : null;
    } catch (Exception e) {
      return null;
    }
  }

  private static int relaunch(String[] args) throws Exception {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.addAll(ManagementFactory.getRuntimeMXBean().getInputArguments());
    cmd.add(UNSAFE_FLAG);
    cmd.add("-Dsluice.relaunched=true");
    cmd.add("-jar");
    cmd.add(jarPath().toString());
    cmd.addAll(Arrays.asList(args));
    Process child = new ProcessBuilder(cmd).inheritIO().start();
    Thread hook = new Thread(child::destroyForcibly, "sluice-relaunch-reaper");
    Runtime.getRuntime().addShutdownHook(hook);
    int code = child.waitFor();
    Runtime.getRuntime().removeShutdownHook(hook);
    return code;
  }
}
