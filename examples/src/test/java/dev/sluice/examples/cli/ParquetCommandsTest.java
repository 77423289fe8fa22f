package dev.sluice.examples.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.core.testing.NoLeaks;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** The command line over Parquet files, through the format registry. */
@ExtendWith(NoLeaks.class)
class ParquetCommandsTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  @TempDir Path dir;

  private static String lastLine(String out) {
    String[] lines = out.strip().split("\n");
    return lines[lines.length - 1];
  }

  @Test
  void generatedParquetReadsLikeTheSameDataAsNpy() throws Exception {
    Path pq = dir.resolve("d.parquet");
    Path npy = dir.resolve("d");
    CliRun gen = CliRun.of("generate", pq.toString(), "--rows", "5000", "--dim", "4", "--format", "parquet",
        "--seed", "7", "--row-group-size", "40000");
    assertThat(gen.exitCode()).as(gen.err()).isZero();
    assertThat(CliRun.of("generate", npy.toString(), "--rows", "5000", "--dim", "4", "--seed", "7").exitCode()).isZero();

    JsonNode info = JSON.readTree(CliRun.of("inspect", pq.toString()).out());
    assertThat(info.get("format").asText()).isEqualTo("parquet");
    assertThat(info.get("rows").asLong()).isEqualTo(5000);
    assertThat(info.get("splits").asInt()).as("several row groups").isGreaterThan(1);

    CliRun sumParquet = CliRun.of("checksum", pq.toString());
    CliRun sumNpy = CliRun.of("checksum", npy.toString());
    assertThat(sumParquet.exitCode()).as(sumParquet.err()).isZero();
    assertThat(sumParquet.out().strip()).matches("[0-9a-f]{64}").isEqualTo(sumNpy.out().strip());

    CliRun read = CliRun.of("read", pq.toString(), "--shuffle", "--batch", "64", "--json");
    assertThat(read.exitCode()).as(read.err()).isZero();
    assertThat(JSON.readTree(lastLine(read.out())).get("examples").asLong()).isEqualTo(5000);

    CliRun bench = CliRun.of("bench", pq.toString(), "--shuffle", "--batch", "256", "--epochs", "2", "--json");
    assertThat(bench.exitCode()).as(bench.err()).isZero();
    JsonNode b = JSON.readTree(lastLine(bench.out()));
    assertThat(b.get("recordsPerSecond").asDouble()).isPositive();
    assertThat(b.get("examples").asLong()).isEqualTo(2 * 5000);
  }

  @Test
  void aTruncatedParquetFileExitsTwoWithOneLineNamingIt() throws Exception {
    Path pq = dir.resolve("t.parquet");
    assertThat(CliRun.of("generate", pq.toString(), "--rows", "2000", "--dim", "4", "--format", "parquet").exitCode()).isZero();
    byte[] all = Files.readAllBytes(pq);
    Files.write(pq, Arrays.copyOf(all, all.length / 2));
    for (String cmd : new String[] {"inspect", "checksum", "read"}) {
      CliRun run = CliRun.of(cmd, pq.toString());
      assertThat(run.exitCode()).as(cmd).isEqualTo(2);
      assertThat(run.err().lines()).as(cmd).hasSize(1);
      assertThat(run.err()).startsWith("sluice: ").contains(pq.toString());
    }
  }
}
