package dev.sluice.examples.deps;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.core.Datasets;
import dev.sluice.examples.internal.JvmCommand;
import dev.sluice.io.Formats;
import dev.sluice.io.WriteOptions;
import dev.sluice.io.npy.Npy;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A user of pipeline-operators and pipeline-io who reads npy needs none of the optional libraries:
 * in a child JVM whose class path is this one's without any Chronicle, OpenHFT, jnr, JavaPoet,
 * Arrow, Parquet, Hadoop, Netty or Brotli jar, an npy pipeline (format detection, global shuffle,
 * two shards, batch, prefetch) delivers every row exactly once; Parquet and Arrow files are still
 * recognized, and opening them, like {@code .cache(...)}, fails with one
 * {@link dev.sluice.core.MissingDependencyException} naming the Maven coordinates to add.
 */
class OptionalDependenciesTest {
  private static final int ROWS = 1_003;
  private static final int WORLD = 2;
  private static final Pattern OPTIONAL =
      Pattern.compile("chronicle|openhft|jnr|javapoet|arrow|parquet|hadoop|netty|brotli|jhdf");

  @TempDir
  Path dir;

  @Test
  void npyPipelineRunsWithoutTheOptionalLibrariesAndTheirFeaturesNameWhatToAdd() throws Exception {
    Path npy = dir.resolve("npy");
    Npy.write(Datasets.synthetic(ROWS, 4, 5), npy);
    Path parquet = dir.resolve("d.parquet");
    Formats.named("parquet").write(Datasets.synthetic(40, 4, 5), parquet, WriteOptions.defaults());
    Path arrow = dir.resolve("d.arrow");
    Formats.named("arrow").write(Datasets.synthetic(40, 4, 5), arrow, WriteOptions.defaults());

    List<String> cmd = new ArrayList<>(JvmCommand.of(WithoutOptionalLibraries.class, List.of(),
        List.of(npy.toString(), parquet.toString(), arrow.toString(), dir.resolve("cache").toString(),
            String.valueOf(WORLD), dir.resolve("d.h5").toString())));
    int cp = cmd.indexOf("-cp") + 1;
    List<String> kept = Stream.of(cmd.get(cp).split(File.pathSeparator))
        .filter(p -> !OPTIONAL.matcher(p.toLowerCase(Locale.ROOT)).find())
        .toList();
    assertThat(kept).hasSizeLessThan(cmd.get(cp).split(File.pathSeparator).length);
    cmd.set(cp, String.join(File.pathSeparator, kept));

    Path out = dir.resolve("out.txt");
    Path err = dir.resolve("err.txt");
    Process p = new ProcessBuilder(cmd).redirectOutput(out.toFile()).redirectError(err.toFile()).start();
    assertThat(p.waitFor(120, TimeUnit.SECONDS)).as("the child JVM finished").isTrue();
    String stderr = Files.readString(err, StandardCharsets.UTF_8);
    List<String> lines = Files.readAllLines(out, StandardCharsets.UTF_8);
    assertThat(p.exitValue()).as(stderr).isZero();
    assertThat(stderr).isEmpty();

    // the child really lacks the libraries
    assertThat(lines.subList(0, 4)).allSatisfy(l -> assertThat(l).startsWith("missing [").isNotEqualTo("missing []"));

    // every row exactly once across the shards, with its own values
    List<long[]> rows = lines.stream().filter(l -> l.startsWith("row "))
        .map(l -> l.substring(4).split(" "))
        .map(f -> new long[] {Long.parseLong(f[0]), Long.parseLong(f[1])})
        .collect(Collectors.toList());
    assertThat(rows).hasSize(ROWS);
    assertThat(rows).allSatisfy(r -> assertThat(r[1]).as("label of row %d", r[0]).isEqualTo(r[0]));
    assertThat(rows.stream().mapToLong(r -> r[0]).sorted().toArray())
        .isEqualTo(java.util.stream.LongStream.range(0, ROWS).toArray());
    assertThat(rows.stream().mapToLong(r -> r[0]).toArray()).as("shuffled")
        .isNotEqualTo(java.util.stream.LongStream.range(0, ROWS).toArray());

    List<String> tail = lines.stream().filter(l -> !l.startsWith("row ") && !l.startsWith("missing ")).toList();
    String parquetNeeds = "error MissingDependencyException " + parquet + ": Parquet support needs "
        + "org.apache.parquet:parquet-hadoop on the class path (add it next to pipeline-io; the sluice-bom manages"
        + " its version)";
    String arrowNeeds = "error MissingDependencyException " + arrow + ": Arrow IPC support needs "
        + "org.apache.arrow:arrow-vector, org.apache.arrow:arrow-memory-netty, io.netty:netty-buffer and "
        + "org.apache.arrow:arrow-compression on the class path (add them next to pipeline-io; the sluice-bom"
        + " manages their versions)";
    assertThat(tail).containsExactly(
        "detected parquet arrow",
        parquetNeeds,
        parquetNeeds,
        arrowNeeds,
        arrowNeeds,
        "error MissingDependencyException The shared cache (Pipeline.cache) needs net.openhft:chronicle-map on the"
            + " class path (add it next to pipeline-operators; the sluice-bom manages its version)",
        "error MissingDependencyException " + dir.resolve("d.h5") + ": HDF5 and netCDF-4 support needs io.jhdf:jhdf"
            + " on the class path (add it next to pipeline-io; the sluice-bom manages its version)");
  }
}
