package dev.sluice.examples.cli;

import dev.sluice.core.DatasetException;
import dev.sluice.core.FatalErrorException;
import dev.sluice.core.MemoryLimitException;
import dev.sluice.core.MissingDependencyException;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.file.NoSuchFileException;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import reactor.core.Exceptions;

/**
 * The {@code sluice} command line. Exit status: 0 success; 2 bad input or usage, with one line on
 * stderr starting {@code sluice: } ({@code --verbose} adds the stack trace); 1 a bug.
 */
@Command(
    name = "sluice",
    mixinStandardHelpOptions = true,
    version = "sluice 0.1.0",
    description = "Reactive ML input pipelines: read, shuffle, shard, batch and benchmark datasets on disk.",
    subcommands = {
      DemoCommand.class,
      GenerateCommand.class,
      InspectCommand.class,
      ChecksumCommand.class,
      HeadCommand.class,
      ConvertCommand.class,
      ReadCommand.class,
      BenchCommand.class,
      CacheCommand.class,
      StageCommand.class,
      CommandLine.HelpCommand.class
    })
public final class SluiceCommand implements Runnable {
  /** Exit status for bad input or usage. */
  public static final int EXIT_BAD_INPUT = 2;
  /** Exit status for a bug. */
  public static final int EXIT_BUG = 1;

  @Option(names = "--verbose", scope = CommandLine.ScopeType.INHERIT,
      description = "Print stack traces and library logs to stderr.")
  boolean verbose;

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Override
  public void run() {
    throw new CommandLine.ParameterException(spec.commandLine(), "missing command");
  }

  /** Runs the command line with the process's streams. */
  public static int execute(String... args) {
    return commandLine(new PrintWriter(System.out, true), new PrintWriter(System.err, true)).execute(args);
  }

  /** A configured command line writing to {@code out} and {@code err} (tests use this). */
  public static CommandLine commandLine(PrintWriter out, PrintWriter err) {
    CommandLine cl = new CommandLine(new SluiceCommand());
    cl.setOut(out);
    cl.setErr(err);
    cl.setParameterExceptionHandler((ex, args) -> {
      CommandLine c = ex.getCommandLine();
      String unknown = unknownCommand(ex);
      if (unknown != null) {
        c.getErr().println("sluice: unknown command '" + oneLine(unknown) + "' (commands: "
            + String.join(", ", c.getSubcommands().keySet()) + ")");
        c.getErr().flush();
        return EXIT_BAD_INPUT;
      }
      c.getErr().println("sluice: " + oneLine(ex.getMessage()) + " (try '" + c.getCommandSpec().qualifiedName()
          + " --help')");
      c.getErr().flush();
      return EXIT_BAD_INPUT;
    });
    // an Error out of a command (Reactor rethrows JVM errors) goes to the handler below like an exception
    CommandLine.IExecutionStrategy run = new CommandLine.RunLast();
    cl.setExecutionStrategy(parsed -> {
      try {
        return run.execute(parsed);
      } catch (Error e) {
        throw new CommandLine.ExecutionException(parsed.commandSpec().commandLine(), String.valueOf(e), e);
      }
    });
    cl.setExecutionExceptionHandler((ex, c, parsed) -> {
      Throwable t = Exceptions.unwrap(ex);
      if (t instanceof CommandLine.ExecutionException && t.getCause() instanceof Error error) {
        t = error;
      }
      boolean verbose = parsed.matchedOption("--verbose") != null
          || (parsed.subcommand() != null && hasVerbose(parsed));
      String jvm = jvmError(t, parsed);
      boolean badInput = jvm != null ? !jvm.startsWith("internal error: ") : isBadInput(t);
      PrintWriter e = c.getErr();
      e.println("sluice: " + (jvm != null ? jvm : (badInput ? "" : "internal error: ") + withOption(message(t), parsed)));
      if (verbose) {
        t.printStackTrace(e);
      }
      e.flush();
      return badInput ? EXIT_BAD_INPUT : EXIT_BUG;
    });
    return cl;
  }

  /** The word typed where a command belongs that names none, or null when {@code ex} is another usage error. */
  private static String unknownCommand(CommandLine.ParameterException ex) {
    if (ex instanceof CommandLine.UnmatchedArgumentException u && ex.getCommandLine().getCommandSpec().parent() == null
        && !ex.getCommandLine().getSubcommands().isEmpty()) {
      List<String> unmatched = u.getUnmatched();
      if (!unmatched.isEmpty() && !unmatched.get(0).startsWith("-")) {
        return unmatched.get(0);
      }
    }
    return null;
  }

  private static boolean hasVerbose(CommandLine.ParseResult parsed) {
    for (CommandLine.ParseResult p = parsed; p != null; p = p.subcommand()) {
      if (p.matchedOption("--verbose") != null) {
        return true;
      }
    }
    return false;
  }

  /** Bad input: data errors, configuration errors (a memory limit too small), missing files, unsupported requests. */
  static boolean isBadInput(Throwable t) {
    return t instanceof DatasetException
        || t instanceof MemoryLimitException
        || t instanceof IllegalArgumentException
        || t instanceof UnsupportedOperationException
        || t instanceof NotImplementedException
        || t instanceof IOException
        || t instanceof UncheckedIOException;
  }

  /** {@code m} with every line break (also {@code \r}, NEL and the Unicode separators) as a space. */
  static String oneLine(String m) {
    return m == null ? "null" : m.replaceAll("\\R", " ");
  }

  private static String message(Throwable t) {
    if (t instanceof UncheckedIOException u && u.getCause() != null) {
      t = u.getCause();
    }
    if (t instanceof NoSuchFileException n) {
      return oneLine(n.getFile() + ": no such file or directory");
    }
    if (t instanceof MissingDependencyException d && d.coordinates().stream().anyMatch(c -> c.startsWith("org.apache.hadoop:"))) {
      return oneLine(d.getMessage()) + HADOOP_BESIDE_JAR;
    }
    String m = t.getMessage();
    return m == null || m.isBlank() ? t.getClass().getSimpleName() : oneLine(m);
  }

  /**
   * {@code message} with the library's name of the batch stage ({@code "batch(1000): ..."}, a
   * size checked before any work) replaced by the option the user typed ({@code "--batch 1000: ..."}).
   */
  static String withOption(String message, CommandLine.ParseResult parsed) {
    for (CommandLine.ParseResult p = parsed; p != null; p = p.subcommand()) {
      if (p.hasMatchedOption("--batch")) {
        Object typed = p.matchedOption("--batch").getValue();
        String value = String.valueOf(typed);
        String stage = "batch(" + value + "): ";
        if (message.startsWith(stage)) {
          return "--batch " + value + ": " + message.substring(stage.length());
        }
      }
    }
    return message;
  }

  /**
   * Where the {@code sluice} jar finds Hadoop's client: its manifest's {@code Class-Path} names these
   * files in a {@code lib} directory beside it (docs/cli.md).
   */
  static final String HADOOP_BESIDE_JAR = "; for sluice.jar, put them beside it as lib/hadoop-client-api.jar and "
      + "lib/hadoop-client-runtime.jar (s3a:// also lib/hadoop-aws.jar, lib/bundle.jar, lib/analyticsaccelerator-s3.jar "
      + "and lib/commons-logging.jar)";

  /** Options whose values set how much memory a command needs, as the user may type them. */
  private static final List<String> MEMORY_OPTIONS = List.of("--batch", "--buffer", "--prefetch", "--parallelism",
      "--num-workers", "--num-samples", "--rows", "--dim", "--workers");

  /**
   * The line for a JVM error behind {@code t} (thrown, or wrapped by the pipeline in a
   * {@link FatalErrorException}), or null when there is none: a missing class names the dependency
   * to add, running out of memory names the options that set the sizes; other JVM errors are
   * internal errors.
   */
  static String jvmError(Throwable t, CommandLine.ParseResult parsed) {
    String where = null;
    Throwable error = null;
    for (Throwable c = t; c != null && error == null; c = c.getCause()) {
      if (c instanceof FatalErrorException f && where == null && f.getMessage() != null) {
        int at = f.getMessage().indexOf(" failed: ");
        where = at > 0 ? f.getMessage().substring(0, at) : null;
      }
      if (c instanceof VirtualMachineError || c instanceof LinkageError || c instanceof ClassNotFoundException) {
        error = c;
      }
    }
    if (error == null) {
      return null;
    }
    String prefix = where != null ? where + ": " : "";
    if (error instanceof NoClassDefFoundError || error instanceof ClassNotFoundException) {
      String cls = String.valueOf(error.getMessage()).replace('/', '.');
      return prefix + "class " + cls + " is missing from the class path: add " + dependencyOf(cls);
    }
    if (error instanceof OutOfMemoryError) {
      List<String> given = new ArrayList<>();
      for (CommandLine.ParseResult p = parsed; p != null; p = p.subcommand()) {
        for (String o : MEMORY_OPTIONS) {
          if (p.hasMatchedOption(o)) {
            Object typed = p.matchedOption(o).getValue();
            given.add(o + " " + typed);
          }
        }
      }
      return prefix + "out of memory (" + error.getMessage() + ")"
          + (given.isEmpty() ? ": give the JVM more heap (-Xmx)"
              : " with " + String.join(", ", given) + ": lower " + (given.size() == 1 ? "it" : "them")
                  + " or give the JVM more heap (-Xmx)");
    }
    return "internal error: " + prefix + error;
  }

  /** The Maven coordinates that provide class {@code cls}, as far as Sluice knows them. */
  private static String dependencyOf(String cls) {
    if (cls.startsWith("org.apache.hadoop.fs.s3a.")) {
      return "org.apache.hadoop:hadoop-aws";
    }
    if (cls.startsWith("org.apache.hadoop.")) {
      return "org.apache.hadoop:hadoop-client-api and org.apache.hadoop:hadoop-client-runtime";
    }
    if (cls.startsWith("org.apache.commons.logging.")) {
      return "commons-logging:commons-logging (hadoop-aws needs it)";
    }
    if (cls.startsWith("software.amazon.s3.analyticsaccelerator.")) {
      return "software.amazon.s3.analyticsaccelerator:analyticsaccelerator-s3 (hadoop-aws needs it)";
    }
    if (cls.startsWith("software.amazon.awssdk.")) {
      return "software.amazon.awssdk:bundle (hadoop-aws needs it)";
    }
    return "the jar that provides it";
  }

  /** Thrown by a command that is listed but not available yet; exits 2. */
  public static final class NotImplementedException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public NotImplementedException(String what) {
      super(what + ": not implemented yet");
    }
  }
}
