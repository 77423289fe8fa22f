package dev.sluice.examples.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.core.testing.NoLeaks;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code sluice read --metrics [--step-ms N]}: the per-stage table and the bottleneck line, both
 * cases from the command line (a decode-bound Parquet read; a consumer busy on every batch).
 */
@ExtendWith(NoLeaks.class)
class ReadMetricsTest {
  @TempDir static Path tmp;
  static Path npy;
  static Path parquet;

  @BeforeAll
  static void generate() {
    npy = tmp.resolve("npy");
    parquet = tmp.resolve("data.parquet");
    CliRun a = CliRun.of("generate", npy.toString(), "--rows", "2000", "--dim", "16", "--format", "npy");
    assertEquals(0, a.exitCode(), a.err());
    CliRun b = CliRun.of("generate", parquet.toString(), "--rows", "60000", "--dim", "64", "--format", "parquet",
        "--row-group-size", "1000000");
    assertEquals(0, b.exitCode(), b.err());
  }

  static List<String> lines(String out) {
    return Arrays.asList(out.split("\\R"));
  }

  @Test
  void aBusyConsumerIsReportedConsumerBound() {
    CliRun r = CliRun.of("read", npy.toString(), "--batch", "100", "--epochs", "2", "--metrics", "--step-ms", "4");
    assertEquals(0, r.exitCode(), r.err());
    assertEquals("", r.err(), "nothing on stderr, also at the second pass's meters");
    List<String> out = lines(r.out());
    String last = out.get(out.size() - 1);
    assertTrue(last.startsWith("consumer-bound: ") && last.endsWith("% of producer time waiting for demand"), r.out());
    assertTrue(out.stream().anyMatch(l -> l.startsWith("stage ")), "a table header: " + r.out());
    assertTrue(out.stream().anyMatch(l -> l.matches("\\s+\\d+\\s+npy gather\\s+40\\s+.*")), "the gather emitted 20 batches per epoch: " + r.out());
    assertTrue(out.stream().anyMatch(l -> l.matches("\\s+\\d+\\s+consumer\\s+.*")), r.out());
  }

  @Test
  void aDecodeBoundReadNamesTheDecode() {
    // without a prefetch, whose hand-off can hold a pass up on a machine short of processors
    CliRun r = CliRun.of("read", parquet.toString(), "--batch", "1024", "--prefetch", "0", "--metrics");
    assertEquals(0, r.exitCode(), r.err());
    List<String> out = lines(r.out());
    String last = out.get(out.size() - 1);
    assertTrue(last.startsWith("input-bound: parquet decode (stage 2), "), r.out());
    assertTrue(out.stream().anyMatch(l -> l.matches("\\s+2\\s+parquet decode\\s+59\\s+.*\\d+ decodes, .*")), r.out());
  }

  @Test
  void theJsonSummaryStaysLastAndCarriesTheBottleneck() throws Exception {
    CliRun r = CliRun.of("read", npy.toString(), "--batch", "100", "--metrics", "--step-ms", "2", "--json");
    assertEquals(0, r.exitCode(), r.err());
    List<String> out = lines(r.out());
    JsonNode json = new ObjectMapper().readTree(out.get(out.size() - 1));
    assertEquals(2000, json.get("examples").asLong());
    assertTrue(json.get("bottleneck").asText().startsWith("consumer-bound: "), r.out());
  }

  @Test
  void stepWithoutMetricsAndMetricsWithIndicesAreRefused() {
    CliRun a = CliRun.of("read", npy.toString(), "--step-ms", "3");
    assertEquals(2, a.exitCode());
    assertEquals("sluice: --step-ms 3.0 needs --metrics", a.err().strip());
    CliRun b = CliRun.of("read", npy.toString(), "--metrics", "--print-indices");
    assertEquals(2, b.exitCode());
    assertTrue(b.err().startsWith("sluice: --print-indices and --metrics cannot be combined") && b.err().strip().lines().count() == 1,
        b.err());
    CliRun c = CliRun.of("read", npy.toString(), "--metrics", "--step-ms", "-1");
    assertEquals(2, c.exitCode());
    assertEquals("sluice: --step-ms must be in [0, 60000] ms but was -1.0", c.err().strip());
  }
}
