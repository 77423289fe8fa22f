package dev.sluice.examples.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.core.testing.NoLeaks;
import dev.sluice.io.DatasetFormat;
import dev.sluice.io.Formats;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** What {@code sluice generate} promises about OUT, and what a misnamed file is told. */
@ExtendWith(NoLeaks.class)
class GenerateCommandTest {
  @TempDir Path dir;

  private static CliRun generate(Path out, String... more) {
    return generate(out.toString(), more);
  }

  private static CliRun generate(String out, String... more) {
    List<String> args = new java.util.ArrayList<>(List.of("generate", out, "--rows", "50", "--dim", "2"));
    args.addAll(List.of(more));
    return CliRun.of(args.toArray(String[]::new));
  }

  private static void assertOneLine(CliRun run, String... fragments) {
    assertThat(run.exitCode()).as(run.err()).isEqualTo(2);
    assertThat(run.err().lines()).hasSize(1);
    assertThat(run.err()).startsWith("sluice: ").contains(fragments);
  }

  @Test
  void helpListsExactlyTheFormatsThatCanWrite() {
    CliRun help = CliRun.of("generate", "--help");
    assertThat(help.exitCode()).isZero();
    List<String> writable = Formats.all().stream().filter(DatasetFormat::canWrite).map(DatasetFormat::name).toList();
    assertThat(help.out().replaceAll("\\s+", " "))
        .contains("Output format: " + String.join(", ", writable) + " (default: npy)");
  }

  @Test
  void anExistingDatasetIsReplacedOnlyWithForce() throws Exception {
    Path d = dir.resolve("d");
    assertThat(generate(d).exitCode()).isZero();
    String before = CliRun.of("checksum", d.toString()).out();

    assertOneLine(generate(d, "--seed", "9"), d.toString(), "already exists", "--force");
    assertThat(CliRun.of("checksum", d.toString()).out()).as("untouched").isEqualTo(before);

    CliRun forced = generate(d, "--seed", "9", "--force");
    assertThat(forced.exitCode()).as(forced.err()).isZero();
    assertThat(CliRun.of("checksum", d.toString()).out()).as("replaced").isNotEqualTo(before);
    assertThat(d.resolve("x.npy")).isRegularFile();
    assertThat(d.resolve("label.npy")).isRegularFile();

    Path pq = dir.resolve("one.parquet");
    assertThat(generate(pq, "--format", "parquet").exitCode()).isZero();
    assertOneLine(generate(pq, "--format", "parquet"), "already exists");
    assertThat(generate(pq, "--format", "parquet", "--force").exitCode()).isZero();
  }

  @Test
  void forceNeverEmptiesADirectoryThatHoldsNoDataset() throws Exception {
    Path notes = Files.createDirectories(dir.resolve("notes"));
    Files.writeString(notes.resolve("todo.txt"), "keep me");
    assertOneLine(generate(notes, "--force"), notes.toString(), "does not hold a dataset");
    assertThat(notes.resolve("todo.txt")).hasContent("keep me");
  }

  @Test
  void aTrailingSlashOrAnExistingDirectoryHoldsAOneFileFormat() throws Exception {
    CliRun slash = generate(dir.resolve("pq") + "/", "--format", "parquet");
    assertThat(slash.exitCode()).as(slash.err()).isZero();
    assertThat(dir.resolve("pq").resolve("part-0.parquet")).isRegularFile();
    assertThat(CliRun.of("inspect", dir.resolve("pq").toString()).out()).contains("\"rows\" : 50");

    Path empty = Files.createDirectories(dir.resolve("empty"));
    assertThat(generate(empty, "--format", "parquet").exitCode()).isZero();
    assertThat(empty.resolve("part-0.parquet")).isRegularFile();
  }

  @Test
  void aFileNamedNpyThatIsNotOneGetsTheNpyReadersMessage() throws Exception {
    Path bad = Files.writeString(dir.resolve("bad.npy"), "hello, not numpy");
    for (String cmd : new String[] {"inspect", "checksum", "read"}) {
      assertOneLine(CliRun.of(cmd, bad.toString()), "bad.npy", "bad magic");
    }
    Path notes = Files.writeString(dir.resolve("notes.txt"), "hello");
    assertOneLine(CliRun.of("inspect", notes.toString()), "notes.txt", "not a recognized dataset");
  }

  @Test
  void rowGroupSizeTakesTheSameByteSuffixesAsTheOtherByteOptions() {
    Path suffixed = dir.resolve("suffixed.parquet");
    Path plain = dir.resolve("plain.parquet");
    CliRun withSuffix = generate(suffixed, "--format", "parquet", "--row-group-size", "1k");
    assertThat(withSuffix.exitCode()).as(withSuffix.err()).isZero();
    CliRun withNumber = generate(plain, "--format", "parquet", "--row-group-size", "1024");
    assertThat(withNumber.exitCode()).as(withNumber.err()).isZero();
    assertThat(CliRun.of("inspect", suffixed.toString()).out().replace(suffixed.toString(), "P"))
        .isEqualTo(CliRun.of("inspect", plain.toString()).out().replace(plain.toString(), "P"));

    assertOneLine(generate(dir.resolve("bad.parquet"), "--format", "parquet", "--row-group-size", "1x"),
        "'1x' is not a byte count");
  }

  @Test
  void anEmptyFileIsCalledEmptyByEveryCommandThatReads() throws Exception {
    for (String name : new String[] {"empty.parquet", "empty.npy", "empty"}) {
      Path empty = Files.createFile(dir.resolve(name));
      for (String command : new String[] {"inspect", "read", "checksum"}) {
        CliRun run = CliRun.of(command, empty.toString());
        assertOneLine(run, empty.toString());
        assertThat(run.err()).as(command).isEqualTo("sluice: " + empty + ": empty file (0 bytes)" + System.lineSeparator());
      }
      assertOneLine(CliRun.of("checksum", empty.toString(), "--format", "parquet"), "empty file (0 bytes)");
    }
  }
}
