package dev.sluice.core.internal;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A child JVM's main: opens an output of the file (or, with {@code dir}, the directory) {@code
 * args[0]}, writes part of it, prints the temporary's path and waits on standard input for ever,
 * so that a test can kill it mid-write.
 */
public final class HoldsTemporary {
  private HoldsTemporary() {}

  public static void main(String[] args) throws IOException {
    boolean dir = args.length > 1 && args[1].equals("dir");
    AtomicOutput out = dir ? AtomicOutput.directory(Path.of(args[0])) : AtomicOutput.file(Path.of(args[0]));
    Path part = dir ? out.temp().resolve("part") : out.temp();
    Files.writeString(part, "{\"half\": ", StandardCharsets.UTF_8);
    System.out.println(out.temp());
    System.out.flush();
    System.in.read(); // killed while waiting
  }
}
