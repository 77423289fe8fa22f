package dev.sluice.examples.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.core.testing.NoLeaks;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** {@code generate}, {@code convert}, {@code inspect}, {@code checksum}, {@code read} and {@code bench} over Arrow IPC files and streams. */
@ExtendWith(NoLeaks.class)
class ArrowCommandsTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  @TempDir Path dir;

  private static CliRun ok(String... args) {
    CliRun r = CliRun.of(args);
    assertThat(r.exitCode()).as(String.join(" ", args) + ": " + r.err()).isZero();
    assertThat(r.err()).as("stderr of " + String.join(" ", args)).isEmpty();
    return r;
  }

  private static String checksum(Path p) {
    String sha = ok("checksum", p.toString()).out().strip();
    assertThat(sha).matches("[0-9a-f]{64}");
    return sha;
  }

  private static CliRun withStdin(Path input, String... args) throws Exception {
    InputStream before = System.in;
    try (InputStream in = Files.newInputStream(input)) {
      System.setIn(in);
      return CliRun.of(args);
    } finally {
      System.setIn(before);
    }
  }

  @Test
  void npyToArrowToNpyKeepsTheChecksum() throws Exception {
    Path npy = dir.resolve("npy");
    ok("generate", npy.toString(), "--rows", "3000", "--dim", "8", "--seed", "4");
    String sha = checksum(npy);
    Path arrow = dir.resolve("a.arrow");
    ok("convert", npy.toString(), arrow.toString(), "--to", "arrow", "--codec", "zstd");
    assertThat(checksum(arrow)).isEqualTo(sha);
    Path stream = dir.resolve("a.arrows");
    ok("convert", arrow.toString(), stream.toString(), "--to", "arrow");
    assertThat(checksum(stream)).isEqualTo(sha);
    Path back = dir.resolve("back");
    ok("convert", stream.toString(), back.toString(), "--to", "npy");
    assertThat(checksum(back)).isEqualTo(sha);
    Path shards = dir.resolve("shards");
    ok("convert", arrow.toString(), shards.toString(), "--to", "shards", "--num-shards", "3");
    assertThat(checksum(shards)).isEqualTo(sha);
    Path parquet = dir.resolve("p.parquet");
    ok("convert", arrow.toString(), parquet.toString(), "--to", "parquet");
    assertThat(checksum(parquet)).isEqualTo(sha);
  }

  @Test
  void generateInspectReadAndBench() throws Exception {
    Path out = dir.resolve("g") ;
    CliRun g = ok("generate", out + "/", "--rows", "500", "--dim", "4", "--format", "arrow");
    Path file = out.resolve("part-0.arrow");
    assertThat(g.out()).contains("to " + file + " as arrow");
    JsonNode info = JSON.readTree(ok("inspect", file.toString()).out());
    assertThat(info.get("format").asText()).isEqualTo("arrow");
    assertThat(info.get("rows").asLong()).isEqualTo(500);
    assertThat(info.get("splits").asInt()).isEqualTo(1);
    assertThat(info.get("fields").get(0).get("shape").get(0).asInt()).isEqualTo(4);
    CliRun read = ok("read", file.toString(), "--shuffle", "--batch", "64", "--epochs", "2", "--json");
    JsonNode r = JSON.readTree(read.out().strip().lines().reduce((a, b) -> b).orElseThrow());
    assertThat(r.get("examples").asLong()).isEqualTo(1000);
    CliRun idx = ok("read", file.toString(), "--batch", "100", "--print-indices");
    assertThat(idx.out().strip().lines().findFirst().orElseThrow()).startsWith("0 0 1 2 3");
    JsonNode b = JSON.readTree(ok("bench", file.toString(), "--epochs", "1", "--json").out().strip().lines()
        .reduce((x, y) -> y).orElseThrow());
    assertThat(b.get("recordsPerSecond").asDouble()).isPositive();
  }

  @Test
  void standardInputIsAnArrowStream() throws Exception {
    Path npy = dir.resolve("npy");
    ok("generate", npy.toString(), "--rows", "300", "--dim", "3");
    Path stream = dir.resolve("s.arrows");
    ok("convert", npy.toString(), stream.toString(), "--to", "arrow", "--codec", "lz4");
    CliRun sum = withStdin(stream, "checksum", "-");
    assertThat(sum.exitCode()).as(sum.err()).isZero();
    assertThat(sum.out().strip()).isEqualTo(checksum(npy));
    CliRun read = withStdin(stream, "read", "-", "--batch", "32", "--json");
    assertThat(read.exitCode()).as(read.err()).isZero();
    assertThat(read.out()).contains("\"examples\":300");
    Path copy = dir.resolve("copy.arrow");
    CliRun conv = withStdin(stream, "convert", "-", copy.toString(), "--to", "arrow");
    assertThat(conv.exitCode()).as(conv.err()).isZero();
    assertThat(checksum(copy)).isEqualTo(checksum(npy));
  }

  @Test
  void badInputExitsTwoWithOneLine() throws Exception {
    Path npy = dir.resolve("npy");
    ok("generate", npy.toString(), "--rows", "300", "--dim", "3");
    Path file = dir.resolve("a.arrow");
    ok("convert", npy.toString(), file.toString(), "--to", "arrow");
    byte[] bytes = Files.readAllBytes(file);
    Path cut = dir.resolve("cut.arrow");
    Files.write(cut, Arrays.copyOf(bytes, bytes.length / 2));
    for (String cmd : new String[] {"inspect", "checksum", "read"}) {
      CliRun r = CliRun.of(cmd, cut.toString());
      assertThat(r.exitCode()).as(r.toString()).isEqualTo(2);
      assertThat(r.err().strip().split("\n")).hasSize(1);
      assertThat(r.err()).startsWith("sluice: " + cut).contains("truncated");
    }
    CliRun whole = withStdin(file, "checksum", "-"); // an IPC file piped in is read as the stream it holds
    assertThat(whole.out().strip()).as(whole.err()).isEqualTo(checksum(npy));
    CliRun stdin = withStdin(cut, "checksum", "-");
    assertThat(stdin.exitCode()).isEqualTo(2);
    assertThat(stdin.err().strip().split("\n")).hasSize(1);
    assertThat(stdin.err()).startsWith("sluice: stdin, byte ").contains("truncated: the input ends inside");
    Path text = dir.resolve("text");
    Files.writeString(text, "not arrow at all");
    CliRun junk = withStdin(text, "inspect", "-");
    assertThat(junk.exitCode()).isEqualTo(2);
    assertThat(junk.err()).startsWith("sluice: stdin, byte 0: ");
    CliRun codec = CliRun.of("convert", npy.toString(), dir.resolve("x.arrow").toString(), "--to", "arrow", "--codec", "gzip");
    assertThat(codec.exitCode()).isEqualTo(2);
    assertThat(codec.err()).startsWith("sluice: ").contains("Arrow compression must be one of [none, lz4_frame, zstd]");
  }
}
