package dev.sluice.examples.cli;

/** The command line in-process for tests of other packages: runs it and fails on a non-zero exit. */
public final class CliRunner {
  private CliRunner() {}

  /** Runs {@code sluice args...}; returns its standard output. */
  public static String run(String... args) {
    CliRun r = CliRun.of(args);
    if (r.exitCode() != 0) {
      throw new AssertionError("sluice " + String.join(" ", args) + " exited " + r.exitCode() + ": " + r.err());
    }
    return r.out();
  }
}
