package dev.sluice.examples.cli;

import dev.sluice.core.DatasetException;
import dev.sluice.core.MemoryLimitException;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.file.NoSuchFileException;
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
      c.getErr().println("sluice: " + oneLine(ex.getMessage()) + " (try '" + c.getCommandSpec().qualifiedName()
          + " --help')");
      c.getErr().flush();
      return EXIT_BAD_INPUT;
    });
    cl.setExecutionExceptionHandler((ex, c, parsed) -> {
      Throwable t = Exceptions.unwrap(ex);
      boolean verbose = parsed.matchedOption("--verbose") != null
          || (parsed.subcommand() != null && hasVerbose(parsed));
      boolean badInput = isBadInput(t);
      PrintWriter e = c.getErr();
      e.println("sluice: " + (badInput ? "" : "internal error: ") + message(t));
      if (verbose) {
        t.printStackTrace(e);
      }
      e.flush();
      return badInput ? EXIT_BAD_INPUT : EXIT_BUG;
    });
    return cl;
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
    String m = t.getMessage();
    return m == null || m.isBlank() ? t.getClass().getSimpleName() : oneLine(m);
  }

  /** Thrown by a command that is listed but not available yet; exits 2. */
  public static final class NotImplementedException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public NotImplementedException(String what) {
      super(what + ": not implemented yet");
    }
  }
}
