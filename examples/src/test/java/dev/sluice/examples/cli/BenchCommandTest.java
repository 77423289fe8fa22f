package dev.sluice.examples.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.core.testing.NoLeaks;
import java.awt.image.BufferedImage;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.knowm.xchart.CategoryChart;

/** {@code sluice bench}: generating its data, --io and --use-mmap, --fixed-length, and the --matrix grid with its chart. */
@ExtendWith(NoLeaks.class)
class BenchCommandTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  @TempDir Path dir;

  private static JsonNode lastJson(CliRun r) throws Exception {
    assertThat(r.exitCode()).as(r.err()).isZero();
    String[] lines = r.out().strip().split("\n");
    return JSON.readTree(lines[lines.length - 1]);
  }

  private static void assertBadInput(CliRun r, String fragment) {
    assertThat(r.exitCode()).as(r.toString()).isEqualTo(2);
    assertThat(r.err().strip().lines()).hasSize(1);
    assertThat(r.err()).startsWith("sluice: ").contains(fragment);
  }

  private static Set<String> keys(JsonNode o) {
    Set<String> keys = new TreeSet<>();
    o.fieldNames().forEachRemaining(keys::add);
    return keys;
  }

  @Test
  void generatesIntoAnEmptyDirectoryInEveryFormatThenReadsIt() throws Exception {
    String[][] cases = {
      {"npy", "--fixed-length"}, {"shards", "--fixed-length"}, {"shards"}, {"parquet"}, {"arrow"}, {"directory"},
      {"directory", "--fixed-length"}};
    for (String[] c : cases) {
      Path d = dir.resolve(String.join("", c));
      Files.createDirectories(d);
      List<String> args = new ArrayList<>(List.of("bench", d.toString(), "--format", c[0], "--num-samples", "300",
          "--dim", "8", "--batch", "64", "--epochs", "2", "--json"));
      boolean fixed = c.length > 1;
      if (fixed) {
        args.add(c[1]);
      }
      CliRun r = CliRun.of(args.toArray(String[]::new));
      assertThat(r.out()).as(String.join(" ", c)).startsWith("generated 300 " + (fixed ? "fixed" : "variable") + "-length records");
      JsonNode json = lastJson(r);
      assertThat(json.get("examples").asLong()).isEqualTo(600);
      assertThat(json.get("format").asText()).isEqualTo(c[0]);
      assertThat(json.get("fixedLength").asBoolean()).as(String.join(" ", c)).isEqualTo(fixed);
      assertThat(json.get("access").asText()).isEqualTo(c[0].equals("directory") || c[0].equals("parquet") ? "read" : "mmap");
      if (fixed && !c[0].equals("directory")) {
        assertThat(json.get("bytes").asLong()).isEqualTo(600L * (8 * 4 + 8));
      }
    }
    // the generated data stays: a second run reads it, and --fixed-length checks it
    Path shards = dir.resolve("shards");
    assertThat(lastJson(CliRun.of("bench", shards.toString(), "--epochs", "1", "--json")).get("fixedLength").asBoolean())
        .isFalse();
    assertBadInput(CliRun.of("bench", shards.toString(), "--fixed-length"), "holds variable-length records");
    assertBadInput(CliRun.of("bench", shards.toString(), "--dim", "4"), "--dim applies when bench generates");
  }

  @Test
  void ioAndUseMmapChooseWhereTheFormatOffersAChoiceAndAreRefusedElsewhere() throws Exception {
    Path parquet = dir.resolve("p");
    Files.createDirectories(parquet);
    assertThat(lastJson(CliRun.of("bench", parquet.toString(), "--format", "parquet", "--num-samples", "500",
        "--use-mmap", "--epochs", "1", "--json")).get("access").asText()).isEqualTo("mmap");
    assertThat(lastJson(CliRun.of("bench", parquet.resolve("part-0.parquet").toString(), "--epochs", "1", "--json"))
        .get("access").asText()).isEqualTo("read");
    Path npy = dir.resolve("n");
    Files.createDirectories(npy);
    assertBadInput(CliRun.of("bench", npy.toString(), "--format", "npy", "--fixed-length", "--io", "fast"),
        "--io must be mmap or read but it was 'fast'");
    assertBadInput(CliRun.of("bench", npy.toString(), "--format", "npy", "--fixed-length", "--use-mmap", "--io",
        "read"), "--use-mmap is --io mmap: it cannot be combined with --io read");
    assertThat(npy).isEmptyDirectory();
    assertThat(lastJson(CliRun.of("bench", npy.toString(), "--format", "npy", "--fixed-length", "--num-samples", "500",
        "--use-mmap", "--epochs", "1", "--json")).get("access").asText()).isEqualTo("mmap");
    assertThat(lastJson(CliRun.of("bench", npy.toString(), "--io", "read", "--epochs", "1", "--json"))
        .get("access").asText()).isEqualTo("read");
    npy = dir.resolve("n2");
    Files.createDirectories(npy);
    assertBadInput(CliRun.of("bench", npy.toString(), "--format", "npy"), "npy stores fixed-length records only");
    assertBadInput(CliRun.of("bench", npy.toString()), "is an empty directory: give --format");
    Path files = dir.resolve("d");
    Files.createDirectories(files);
    assertBadInput(CliRun.of("bench", files.toString(), "--format", "directory", "--use-mmap"),
        "--use-mmap: directory reads each sample file with read calls and has no mapped mode");
    assertBadInput(CliRun.of("bench", files.toString(), "--format", "directory", "--io", "mmap"),
        "--io mmap: directory reads each sample file with read calls and has no mapped mode");
    assertBadInput(CliRun.of("bench", npy.toString(), "--plot", dir.resolve("x.png").toString()),
        "--plot applies to --matrix runs only");
    assertBadInput(CliRun.of("bench", npy.toString(), "--world", "2"), "--world applies to --matrix runs only");
    assertBadInput(CliRun.of("bench", npy.toString(), "--matrix", "--shuffle"), "--shuffle cannot be combined with --matrix");
    assertBadInput(CliRun.of("bench", npy.toString(), "--matrix", "--formats", "npy,tfrecord"), "not 'tfrecord'");
  }

  @Test
  void aShuffleBlockSizeSetsTheBlockShuffleAndNeedsAShuffle() throws Exception {
    Path npy = dir.resolve("blocks");
    CliRun generated = CliRun.of("generate", npy.toString(), "--rows", "3000", "--dim", "4", "--format", "npy");
    assertThat(generated.exitCode()).as(generated.err()).isZero();
    JsonNode json = lastJson(CliRun.of("bench", npy.toString(), "--shuffle", "--shuffle-mode", "blocks",
        "--shuffle-block", "4k", "--warmup", "0", "--epochs", "1", "--json"));
    assertThat(json.get("examples").asLong()).isEqualTo(3000);
    assertThat(json.get("shuffle").asBoolean()).isTrue();
    assertBadInput(CliRun.of("bench", npy.toString(), "--shuffle-block", "64k"), "--shuffle-block needs --shuffle");
    assertBadInput(CliRun.of("bench", npy.toString(), "--shuffle", "--shuffle-block", "0"),
        "a byte count must be more than 0 bytes");
    assertBadInput(CliRun.of("bench", dir.resolve("grid-blocks").toString(), "--matrix", "--shuffle-block", "64k"),
        "--shuffle-block cannot be combined with --matrix");
  }

  @Test
  void aTinyMatrixPrintsOneTableAndDrawsOneSeriesPerFormat() throws Exception {
    Path grid = dir.resolve("grid");
    Path png = dir.resolve("chart/matrix.png");
    BenchMatrix matrix = new BenchMatrix(grid, List.of("npy", "arrow"), 400, 8, 0, 64, 4, 1, 1, null, 4);
    java.io.StringWriter text = new java.io.StringWriter();
    List<BenchMatrix.Measured> measured = matrix.run(new java.io.PrintWriter(text, true), png, false);
    List<String> lines = text.toString().lines().toList();
    int header = lines.indexOf(lines.stream().filter(l -> l.startsWith("format ")).findFirst().orElseThrow());
    // npy: fixed-length only, x order x workers x access = 8 cells; arrow: x 2 record kinds = 16
    List<String> rows = lines.subList(header + 1, header + 1 + 24);
    assertThat(rows).allMatch(l -> l.matches("(npy|arrow)\\s+(mmap|read)\\s+(fixed|variable)\\s+(sequential|shuffled)\\s+[12]\\s+\\d+ .*"));
    assertThat(rows.stream().filter(l -> l.startsWith("npy")).toList()).hasSize(8).allMatch(l -> l.contains(" fixed "));
    assertThat(rows.stream().filter(l -> l.matches("\\w+\\s+read .*")).toList()).hasSize(12);
    // the shuffle quality beside the speed: shuffled cells show their figures, sequential ones none
    assertThat(lines.get(header)).endsWith("jaccard    |rho|");
    assertThat(rows.stream().filter(l -> l.contains(" shuffled ")).toList()).hasSize(12)
        .allMatch(l -> l.matches(".* [01]\\.\\d{3} +[01]\\.\\d{3}"));
    assertThat(rows.stream().filter(l -> l.contains(" sequential ")).toList()).hasSize(12)
        .allMatch(l -> l.matches(".* - +-"));
    assertThat(lines.stream().filter(l -> l.startsWith("fastest for shuffled ")).toList()).hasSize(2)
        .allMatch(l -> l.contains("max jaccard ") && l.contains("(random 0.143)") && l.contains("max |rho| "));
    for (BenchMatrix.Measured m : measured) {
      assertThat(m.quality() == null).isEqualTo(!m.cell().shuffle());
      if (m.quality() != null) {
        // rank 0 of 4 reads 100 of the 400 records in each epoch: a fresh random quarter scores about 1/7
        assertThat(m.quality().maxJaccard()).isCloseTo(1.0 / 7, org.assertj.core.api.Assertions.within(0.1));
        assertThat(m.quality().rowsPerEpoch()).isEqualTo(100);
      }
    }
    assertThat(lines.stream().filter(l -> l.startsWith("fastest for ")).toList()).hasSize(4);
    assertThat(measured).hasSize(24);
    BufferedImage image = ImageIO.read(png.toFile());
    assertThat(image).isNotNull();
    assertThat(image.getWidth()).isPositive();
    CategoryChart chart = MatrixChart.chart(measured, matrix.title());
    assertThat(chart.getSeriesMap().keySet()).containsExactly("npy", "arrow");

    // through the command line, reusing the generated data, as JSON: a cell is what its single run prints
    JsonNode json = lastJson(CliRun.of("bench", grid.toString(), "--matrix", "--formats", "npy", "--num-samples", "400",
        "--batch", "64", "--warmup", "0", "--epochs", "1", "--json"));
    assertThat(json.get("cells")).hasSize(8);
    assertThat(json.get("cells")).allMatch(cell -> cell.get("warmupEpochs").asInt() == 0); // passed on to every cell
    assertThat(json.get("fastest")).hasSize(2); // fixed-length records, sequential and shuffled
    assertThat(json.get("quality")).hasSize(1); // npy holds fixed-length records only
    JsonNode quality = json.get("quality").get(0);
    assertThat(quality.get("format").asText()).isEqualTo("npy");
    assertThat(quality.get("world").asInt()).isEqualTo(4);
    assertThat(quality.get("epochs").asInt()).isEqualTo(BenchMatrix.QUALITY_EPOCHS);
    assertThat(quality.get("maxJaccard").asDouble()).isBetween(0.0, 1.0);
    assertThat(quality.get("command").asText()).startsWith("read ").contains("--quality");
    for (JsonNode f : json.get("fastest")) {
      boolean shuffled = f.get("pattern").asText().startsWith("shuffled");
      assertThat(f.has("maxJaccard")).as(f.toString()).isEqualTo(shuffled);
    }
    JsonNode single = lastJson(CliRun.of("bench", grid.resolve("npy-fixed").toString(), "--shuffle", "--num-workers", "2",
        "--batch", "64", "--epochs", "1", "--json"));
    JsonNode same = null;
    for (JsonNode c : json.get("cells")) {
      assertThat(keys(c)).isEqualTo(keys(single));
      if (c.get("shuffle").asBoolean() && c.get("workers").asInt() == 2 && c.get("access").asText().equals("mmap")) {
        same = c;
      }
    }
    assertThat(same).isNotNull();
    for (String exact : new String[] {"examples", "batches", "bytes", "epochs", "batch", "format", "access", "fixedLength"}) {
      assertThat(same.get(exact)).as(exact).isEqualTo(single.get(exact));
    }
    assertBadInput(CliRun.of("bench", grid.toString(), "--matrix", "--formats", "npy", "--num-samples", "500"),
        "holds 400 records from an earlier run but --num-samples is 500");
  }

  @Test
  void theHdf5SeriesRunContiguousAndChunkedFilesOrAreSkippedWithOneLine() throws Exception {
    Path grid = dir.resolve("grid-hdf5");
    BenchMatrix matrix = new BenchMatrix(grid, List.of("hdf5"), 400, 8, 0, 64, 4, 0, 1, null, 4);
    java.io.StringWriter text = new java.io.StringWriter();
    List<BenchMatrix.Measured> measured = matrix.run(new java.io.PrintWriter(text, true), null, false);
    List<String> lines = text.toString().lines().toList();
    String missing = BenchData.h5pyMissing();
    if (missing != null) {
      assertThat(lines).contains("hdf5: skipped, " + missing);
      assertThat(measured).isEmpty();
      return;
    }
    // two series, fixed-length records only: order x workers, mapped (no read mode: one n/a line each)
    assertThat(measured).hasSize(8);
    assertThat(measured.stream().map(m -> m.cell().format()).distinct().toList()).containsExactly("hdf5", "hdf5-deflate");
    for (BenchMatrix.Measured m : measured) {
      assertThat(m.json().get("format").asText()).isEqualTo("hdf5");
      assertThat(m.json().get("examples").asLong()).isEqualTo(400);
      assertThat(m.command()).containsSequence("--format", "hdf5");
    }
    assertThat(lines.stream().filter(l -> l.matches("hdf5(-deflate)?\\s+mmap\\s+fixed\\s+(sequential|shuffled)\\s+[12]\\s+\\d+ .*")))
        .hasSize(8);
    List<String> na = lines.stream().filter(l -> l.contains(" n/a: ")).toList();
    assertThat(na).hasSize(2).allMatch(l -> l.matches("hdf5(-deflate)?\\s+read\\s+fixed\\s+n/a: hdf5 offers no read mode: .*"));
    try (dev.sluice.io.hdf5.Hdf5Dataset contiguous = dev.sluice.io.hdf5.Hdf5.open(grid.resolve("hdf5-fixed/part-0.h5"));
        dev.sluice.io.hdf5.Hdf5Dataset chunked = dev.sluice.io.hdf5.Hdf5.open(grid.resolve("hdf5-deflate-fixed/part-0.h5"))) {
      assertThat(contiguous).isInstanceOf(dev.sluice.core.RandomAccessDataset.class);
      assertThat(chunked).isInstanceOf(dev.sluice.core.BatchSplitDataset.class);
      // the same records as the generated npy dataset
      String want = dev.sluice.io.Checksums.sha256(BenchData.records(400, 8, true, 0));
      assertThat(dev.sluice.io.Checksums.sha256(contiguous)).isEqualTo(want);
      assertThat(dev.sluice.io.Checksums.sha256(chunked)).isEqualTo(want);
    }
    assertThat(matrix.notApplicable()).hasSize(2); // what --json lists under notApplicable
    assertThat(matrix.skipped()).isNull();
  }

  private static BenchMatrix.Measured cell(String format, double recordsPerSecond, double jaccard, double rho)
      throws Exception {
    BenchMatrix.Cell c = new BenchMatrix.Cell(format, BenchData.Access.MMAP, true, true, 1);
    com.fasterxml.jackson.databind.node.ObjectNode bench =
        (com.fasterxml.jackson.databind.node.ObjectNode) JSON.readTree("{\"recordsPerSecond\":" + recordsPerSecond + "}");
    com.fasterxml.jackson.databind.node.ObjectNode quality = (com.fasterxml.jackson.databind.node.ObjectNode) JSON.readTree(
        "{\"rank\":0,\"world\":4,\"epochs\":[{\"rows\":12500}],\"maxJaccard\":" + jaccard + ",\"maxAbsSpearman\":" + rho
            + ",\"randomJaccard\":0.142857}");
    return new BenchMatrix.Measured(c, bench, List.of("bench", format),
        new BenchMatrix.Quality(format, true, quality, List.of("read", format)));
  }

  @Test
  void aFastButPoorlyMixedFormatDoesNotWinSilently() throws Exception {
    BenchMatrix.Measured sameRows = cell("parquet", 3e6, 1.0, 0.02);
    BenchMatrix.Measured fileOrder = cell("arrow", 2e6, 0.14, 0.86);
    BenchMatrix.Measured mixed = cell("npy", 1e6, 0.143, 0.01);
    assertThat(sameRows.wellMixed()).isFalse();
    assertThat(fileOrder.wellMixed()).isFalse();
    assertThat(mixed.wellMixed()).isTrue();
    List<BenchMatrix.Recommendation> best = BenchMatrix.recommendations(List.of(sameRows, fileOrder, mixed));
    assertThat(best).hasSize(1);
    assertThat(best.get(0).best()).isSameAs(sameRows);
    assertThat(best.get(0).bestMixed()).containsSame(mixed);
    assertThat(best.get(0).line()).contains("parquet (mmap, 1 worker), 3000000 records/s")
        .contains("POORLY MIXED: max jaccard 1.000 (random 0.143), max |rho| 0.020")
        .endsWith("; fastest well mixed: npy (mmap, 1 worker), 1000000 records/s");

    BenchMatrix.Recommendation ordered = BenchMatrix.recommendations(List.of(mixed, fileOrder)).get(0);
    assertThat(ordered.best()).isSameAs(fileOrder);
    assertThat(ordered.bestMixed()).containsSame(mixed);
    assertThat(BenchMatrix.recommendations(List.of(mixed)).get(0).line()).contains("; well mixed: max jaccard 0.143")
        .doesNotContain("fastest well mixed");
  }
}
