package dev.sluice.examples.internal;

import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The command line of a child JVM that runs like this one: this JVM's {@code java}, its flags
 * (agents left out, so a debugger or coverage agent is not started twice) and its class path.
 */
public final class JvmCommand {
  private JvmCommand() {}

  /**
   * {@code java <this JVM's flags> <extraFlags> -cp <this class path> <main> <args>}; an extra flag
   * this JVM already has is not repeated, and a later flag wins over an earlier one ({@code -Xmx}).
   */
  public static List<String> of(Class<?> main, List<String> extraFlags, List<String> args) {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    for (String a : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
      if (!a.startsWith("-agentlib") && !a.startsWith("-javaagent")) {
        cmd.add(a);
      }
    }
    for (String flag : extraFlags) {
      if (!cmd.contains(flag)) {
        cmd.add(flag);
      }
    }
    cmd.add("-cp");
    cmd.add(System.getProperty("java.class.path"));
    cmd.add(main.getName());
    cmd.addAll(args);
    return cmd;
  }
}
