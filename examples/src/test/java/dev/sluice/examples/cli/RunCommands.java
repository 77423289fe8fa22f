package dev.sluice.examples.cli;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;

/**
 * A child JVM's main: runs one {@code sluice} command per line of standard input (arguments
 * separated by tabs) in-process and prints, per command, {@code <exit code>\t<stderr>} with the
 * stderr's line breaks written as {@code \n}; so that one JVM under a resource limit runs many.
 */
public final class RunCommands {
  private RunCommands() {}

  public static void main(String[] args) throws Exception {
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    String line;
    while ((line = in.readLine()) != null) {
      StringWriter out = new StringWriter();
      StringWriter err = new StringWriter();
      int code = SluiceCommand.commandLine(new PrintWriter(out, true), new PrintWriter(err, true))
          .execute(line.split("\t"));
      System.out.println(code + "\t" + err.toString().strip().replace("\n", "\\n"));
      System.out.flush();
    }
  }
}
