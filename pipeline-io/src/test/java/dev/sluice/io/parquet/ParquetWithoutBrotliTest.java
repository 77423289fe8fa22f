package dev.sluice.io.parquet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.io.Checksums;
import dev.sluice.io.parquet.ParquetTestFiles.Config;
import java.io.File;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.parquet.column.ParquetProperties.WriterVersion;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Brotli decoder is an optional dependency: in a child JVM whose class path has no
 * {@code org.brotli:dec} (nor Hadoop), a snappy file reads as usual, and opening a file whose
 * columns are Brotli-compressed fails at once with a {@link dev.sluice.core.MissingDependencyException}
 * naming the file, the row group, the column and the coordinates to add.
 */
class ParquetWithoutBrotliTest {
  @TempDir
  Path dir;

  @Test
  void snappyReadsWithoutBrotliAndABrotliFileNamesTheDecoderToAdd() throws Exception {
    Path snappy = dir.resolve("snappy.parquet");
    Path brotli = dir.resolve("brotli.parquet");
    ParquetTestFiles.write(snappy, ParquetTestFiles.WIDE, ParquetTestFiles.WIDE_META,
        new Config(CompressionCodecName.SNAPPY, WriterVersion.PARQUET_1_0, true, false, true), 120, 50, 20, 31);
    ParquetTestFiles.write(brotli, ParquetTestFiles.WIDE, ParquetTestFiles.WIDE_META,
        new Config(CompressionCodecName.BROTLI, WriterVersion.PARQUET_2_0, false, false, true), 120, 50, 20, 32);
    String expected = "sha " + Checksums.sha256(Parquet.open(snappy));
    String firstColumn = ParquetTestFiles.WIDE.getColumns().get(0).getPath()[0];

    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.addAll(ManagementFactory.getRuntimeMXBean().getInputArguments().stream()
        .filter(a -> a.startsWith("--add-") || a.startsWith("--enable-native-access") || a.startsWith("-Xmx"))
        .toList());
    cmd.add("-cp");
    List<String> all = List.of(System.getProperty("java.class.path").split(File.pathSeparator));
    List<String> kept = all.stream()
        .filter(p -> !Path.of(p).getFileName().toString().startsWith("hadoop-client"))
        .filter(p -> !p.replace(File.separatorChar, '/').contains("/org/brotli/"))
        .collect(Collectors.toList());
    assertTrue(all.stream().anyMatch(p -> p.replace(File.separatorChar, '/').contains("/org/brotli/")),
        "the test class path holds the Brotli decoder");
    cmd.add(String.join(File.pathSeparator, kept));
    cmd.add(HadoopFreeMain.class.getName());
    cmd.add(snappy.toString());
    cmd.add("--bad");
    cmd.add(brotli.toString());
    Path out = dir.resolve("out.txt");
    Path err = dir.resolve("err.txt");
    Process p = new ProcessBuilder(cmd).redirectOutput(out.toFile()).redirectError(err.toFile()).start();
    assertTrue(p.waitFor(120, TimeUnit.SECONDS), "the child JVM finished");
    String stderr = Files.readString(err);
    List<String> lines = Files.readAllLines(out, StandardCharsets.UTF_8);
    assertEquals(0, p.exitValue(), stderr);
    assertEquals(expected, lines.get(0), stderr);
    assertEquals("error MissingDependencyException " + brotli + ", row group 0, column '" + firstColumn
        + "': Reading Brotli-compressed Parquet pages needs org.brotli:dec on the class path (add it next to"
        + " pipeline-io; the sluice-bom manages its version)", lines.get(1), stderr);
  }
}
