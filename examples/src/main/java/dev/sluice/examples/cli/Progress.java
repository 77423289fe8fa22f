package dev.sluice.examples.cli;

import java.io.PrintStream;
import me.tongfei.progressbar.ConsoleProgressBarConsumer;
import me.tongfei.progressbar.ProgressBar;
import me.tongfei.progressbar.ProgressBarBuilder;
import me.tongfei.progressbar.ProgressBarStyle;

/** A progress bar on stderr, shown only when stderr is (most likely) a terminal. */
final class Progress implements AutoCloseable {
  private final ProgressBar bar;

  private Progress(ProgressBar bar) {
    this.bar = bar;
  }

  /** A bar for {@code total} units, or a no-op when there is no terminal. */
  static Progress start(String task, long total, String unit, PrintStream err) {
    if (!isTerminal()) {
      return new Progress(null);
    }
    ProgressBar bar = new ProgressBarBuilder()
        .setTaskName(task)
        .setInitialMax(total)
        .setUnit(" " + unit, 1)
        .setStyle(ProgressBarStyle.ASCII)
        .showSpeed()
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
