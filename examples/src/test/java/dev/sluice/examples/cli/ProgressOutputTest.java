package dev.sluice.examples.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * With the bar forced on ({@code -Dsluice.progress=always}, as on a terminal), the commands that
 * print results after or between bars keep stdout free of bar artefacts: every bar is drawn on
 * stderr and erased before a result line is printed. Each command runs in a JVM of its own.
 */
class ProgressOutputTest {
  @TempDir
  Path dir;

  private record Run(int code, String out, String err) {}

  private static Run sluice(String... args) throws Exception {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    for (String a : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
      if (!a.startsWith("-javaagent") && !a.startsWith("-agentlib")) {
        cmd.add(a);
      }
    }
    cmd.addAll(List.of("-XX:-UsePerfData", "-D" + Progress.PROPERTY + "=always", "-cp",
        System.getProperty("java.class.path"), SluiceMain.class.getName()));
    cmd.addAll(List.of(args));
    Process p = new ProcessBuilder(cmd).start();
    CompletableFuture<String> out = CompletableFuture.supplyAsync(() -> read(p.getInputStream()));
    CompletableFuture<String> err = CompletableFuture.supplyAsync(() -> read(p.getErrorStream()));
    assertThat(p.waitFor(2, TimeUnit.MINUTES)).as("sluice %s ended", List.of(args)).isTrue();
    return new Run(p.exitValue(), out.get(), err.get());
  }

  private static String read(InputStream in) {
    try (in) {
      ByteArrayOutputStream b = new ByteArrayOutputStream();
      in.transferTo(b);
      return b.toString(StandardCharsets.UTF_8);
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  private static void assertCleanStdout(Run r) {
    assertThat(r.code()).as(r.err()).isZero();
    assertThat(r.out()).doesNotContain("\r").doesNotContain("\u001b").doesNotContainPattern("\\[[=> ]{5,}\\]");
    assertThat(r.err()).as("the bar was drawn on stderr").contains("\r");
    // the last thing on stderr is an erased bar: carriage return, blanks, carriage return
    assertThat(r.err()).matches("(?s).*\r *\r\\s*");
  }

  @Test
  void benchAndDemoPrintTheirLinesBetweenErasedBars() throws Exception {
    Path data = dir.resolve("d");
    assertThat(sluice("generate", data.toString(), "--rows", "20000", "--dim", "8").code()).isZero();
    Run bench = sluice("bench", data.toString(), "--batch", "256", "--epochs", "3");
    assertCleanStdout(bench);
    assertThat(bench.out().lines().filter(l -> l.startsWith("epoch ")).count()).isEqualTo(3);
    Run demo = sluice("demo", "--rows", "20000", "--epochs", "2");
    assertCleanStdout(demo);
  }

  @Test
  void convertToParquetPrintsItsResultAfterTheBarIsErased() throws Exception {
    Path data = dir.resolve("n");
    assertThat(sluice("generate", data.toString(), "--rows", "50000", "--dim", "8").code()).isZero();
    Run convert = sluice("convert", data.toString(), dir.resolve("p.parquet").toString(), "--to", "parquet");
    assertCleanStdout(convert);
    assertThat(convert.out()).startsWith("converted 50000 rows");
  }
}
