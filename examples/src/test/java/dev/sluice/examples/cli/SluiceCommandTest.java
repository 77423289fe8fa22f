package dev.sluice.examples.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.core.MemoryManager;
import dev.sluice.core.testing.NoLeaks;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

@ExtendWith(NoLeaks.class)
class SluiceCommandTest {

  @Test
  void demoRunsAPipelineAndPrintsARate() {
    CliRun run = CliRun.of("demo", "--rows", "5000", "--epochs", "2");
    assertThat(run.exitCode()).as(run.err()).isZero();
    assertThat(run.out()).containsPattern("\\d+ examples/s");
    assertThat(run.out()).contains("10000 examples");
    assertThat(run.err()).isEmpty();
    assertThat(MemoryManager.shared().outstandingBytes()).isZero();
  }

  @Test
  void helpListsTheCommands() {
    CliRun run = CliRun.of("--help");
    assertThat(run.exitCode()).isZero();
    assertThat(run.out()).contains("demo", "generate", "inspect", "checksum", "convert", "read", "bench");
    CliRun sub = CliRun.of("demo", "--help");
    assertThat(sub.exitCode()).isZero();
    assertThat(sub.out()).contains("--rows");
  }

  @Test
  void messagesWithLineBreaksStayOneLine(@TempDir Path dir) {
    for (String name : new String[] {"cr\rname.npy", "nel\u0085name.npy", "ls\u2028name.npy", "lf\nname.npy"}) {
      CliRun run = CliRun.of("checksum", dir.resolve(name).toString());
      assertThat(run.exitCode()).as(run.err()).isEqualTo(2);
      assertThat(run.err().split("\\R", -1)).as(run.err()).hasSize(2); // one line and its terminator
      assertThat(run.err()).startsWith("sluice: ").contains("name.npy");
    }
    CliRun usage = CliRun.of("demo", "--rows", "1\r2");
    assertThat(usage.exitCode()).isEqualTo(2);
    assertThat(usage.err().split("\\R", -1)).as(usage.err()).hasSize(2);
  }

  @Test
  void anUnknownCommandIsNamedWithTheCommandsThatExist() {
    CliRun run = CliRun.of("train", "--epochs", "3");
    assertThat(run.exitCode()).isEqualTo(2);
    assertThat(run.out()).isEmpty();
    assertThat(run.err().lines()).as(run.err()).hasSize(1);
    String names = String.join(", ", SluiceCommand.commandLine(new java.io.PrintWriter(java.io.Writer.nullWriter()),
        new java.io.PrintWriter(java.io.Writer.nullWriter())).getSubcommands().keySet());
    assertThat(names).startsWith("demo, generate, ").contains("checksum", "convert", "read");
    assertThat(run.err()).isEqualTo("sluice: unknown command 'train' (commands: " + names + ")" + System.lineSeparator());

    CliRun afterOption = CliRun.of("--verbose", "train");
    assertThat(afterOption.exitCode()).isEqualTo(2);
    assertThat(afterOption.err()).startsWith("sluice: unknown command 'train' (commands: demo, ");
  }

  @Test
  void usageErrorsPrintOneLineAndExitTwo() {
    CliRun run = CliRun.of("demo", "--no-such-flag");
    assertThat(run.exitCode()).isEqualTo(2);
    assertThat(run.err().lines()).hasSize(1);
    assertThat(run.err()).startsWith("sluice: ").contains("--no-such-flag").contains("try 'sluice demo --help'");

    CliRun unknown = CliRun.of("frobnicate");
    assertThat(unknown.exitCode()).isEqualTo(2);
    assertThat(unknown.err().lines()).hasSize(1);

    CliRun none = CliRun.of();
    assertThat(none.exitCode()).isEqualTo(2);
  }

  @Test
  void badValuesExitTwoWithoutAStackTraceUnlessVerbose() {
    CliRun run = CliRun.of("demo", "--rows", "0");
    assertThat(run.exitCode()).isEqualTo(2);
    assertThat(run.err().trim()).isEqualTo("sluice: --rows must be > 0 but was 0");

    CliRun verbose = CliRun.of("demo", "--rows", "0", "--verbose");
    assertThat(verbose.exitCode()).isEqualTo(2);
    assertThat(verbose.err()).startsWith("sluice: --rows must be > 0").contains("at dev.sluice.examples.cli.DemoCommand");
  }
}
