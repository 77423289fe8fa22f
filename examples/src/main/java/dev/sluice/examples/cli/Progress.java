package dev.sluice.examples.cli;

import java.io.PrintStream;
import me.tongfei.progressbar.ConsoleProgressBarConsumer;
import me.tongfei.progressbar.ProgressBar;
import me.tongfei.progressbar.ProgressBarBuilder;
import me.tongfei.progressbar.ProgressBarStyle;

/**
 * A progress bar on stderr, shown only when stderr is (most likely) a terminal, or always with
 * {@code -Dsluice.progress=always} ({@code never} hides it). Closing it erases it, so that a line
 * printed on stdout afterwards starts on a clean line: a command closes its bar before it prints a
 * result, and prints nothing on stdout while a bar is open.
 */
final class Progress implements AutoCloseable {
  /** The system property that forces the bar on ({@code always}) or off ({@code never}). */
  static final String PROPERTY = "sluice.progress";
  private final ProgressBar bar;

  private Progress(ProgressBar bar) {
    this.bar = bar;
  }

  /** No bar. */
  static Progress none() {
    return new Progress(null);
  }

  /** A bar for {@code total} units, or a no-op when there is no terminal. */
  static Progress start(String task, long total, String unit, PrintStream err) {
    if (!shown()) {
      return new Progress(null);
    }
    ProgressBar bar = new ProgressBarBuilder()
        .setTaskName(task)
        .setInitialMax(total)
        .setUnit(" " + unit, 1)
        .setStyle(ProgressBarStyle.ASCII)
        .showSpeed()
        .setUpdateIntervalMillis(250)
        .clearDisplayOnFinish()
        .setConsumer(new ConsoleProgressBarConsumer(err))
        .build();
    return new Progress(bar);
  }

  void step(long n) {
    if (bar != null) {
      bar.stepBy(n);
    }
  }

  @Override
  public void close() {
    if (bar != null) {
      bar.close();
    }
  }

  private static boolean shown() {
    String forced = System.getProperty(PROPERTY, "auto");
    return forced.equals("always") || !forced.equals("never") && isTerminal();
  }

  /**
   * JDK 17-21: a console exists only when stdin and stdout are terminals. JDK 22+ always returns a
   * console and says whether it is a terminal through {@code Console.isTerminal()}.
   */
  static boolean isTerminal() {
    java.io.Console c = System.console();
    if (c == null) {
      return false;
    }
    try {
      return (Boolean) java.io.Console.class.getMethod("isTerminal").invoke(c);
    } catch (NoSuchMethodException e) {
      return true;
    } catch (ReflectiveOperationException e) {
      return false;
    }
  }
}
