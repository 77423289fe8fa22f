package dev.sluice.examples.cli;

import java.io.PrintWriter;
import java.io.StringWriter;

/** Runs the {@code sluice} command line in-process and captures its exit code and streams. */
record CliRun(int exitCode, String out, String err) {

  static CliRun of(String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int code = SluiceCommand.commandLine(new PrintWriter(out, true), new PrintWriter(err, true)).execute(args);
    return new CliRun(code, out.toString(), err.toString());
  }
}
