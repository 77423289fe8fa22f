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
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.parquet.column.ParquetProperties.WriterVersion;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Local Parquet files read with no Hadoop on the class path (every codec, nested columns, Sluice's
 * own writer's output), a column chunk whose pages disagree with its metadata reported as a format
 * error naming it, and a URI that needs Hadoop refused naming the dependencies to add: in a
 * child JVM whose class path is this one's without the hadoop-client jars.
 */
class ParquetWithoutHadoopTest {
  @TempDir
  Path dir;

  @Test
  void localFilesReadWithoutHadoopAndUrisNameTheDependencyToAdd() throws Exception {
    List<String> files = new ArrayList<>();
    List<String> expected = new ArrayList<>();
    int k = 0;
    for (CompressionCodecName codec : List.of(CompressionCodecName.UNCOMPRESSED, CompressionCodecName.SNAPPY,
        CompressionCodecName.GZIP, CompressionCodecName.ZSTD, CompressionCodecName.LZ4_RAW, CompressionCodecName.LZ4,
        CompressionCodecName.BROTLI)) {
      Path f = dir.resolve("c" + k + ".parquet");
      Config c = new Config(codec, k % 2 == 0 ? WriterVersion.PARQUET_1_0 : WriterVersion.PARQUET_2_0, k % 3 == 0,
          false, true);
      ParquetTestFiles.write(f, k % 2 == 0 ? ParquetTestFiles.WIDE : ParquetNestedTest.LAYOUTS,
          k % 2 == 0 ? ParquetTestFiles.WIDE_META : Map.of(), c, 150, 60, 25, 70 + k);
      files.add(f.toString());
      expected.add("sha " + Checksums.sha256(Parquet.open(f)));
      k++;
    }
    String uri = dir.toUri() + "c0.parquet";
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.addAll(ManagementFactory.getRuntimeMXBean().getInputArguments().stream()
        .filter(a -> a.startsWith("--add-") || a.startsWith("--enable-native-access") || a.startsWith("-Xmx"))
        .toList());
    cmd.add("-cp");
    cmd.add(Stream.of(System.getProperty("java.class.path").split(File.pathSeparator))
        .filter(p -> !Path.of(p).getFileName().toString().startsWith("hadoop-client"))
        .collect(Collectors.joining(File.pathSeparator)));
    cmd.add(HadoopFreeMain.class.getName());
    cmd.addAll(files);
    Path miscounted = dir.resolve("miscounted.parquet");
    MiscountedChunk.write(miscounted);
    cmd.add("--bad");
    cmd.add(miscounted.toString());
    cmd.add("--uri");
    cmd.add(uri);
    Path out = dir.resolve("out.txt");
    Path err = dir.resolve("err.txt");
    Process p = new ProcessBuilder(cmd).redirectOutput(out.toFile()).redirectError(err.toFile()).start();
    assertTrue(p.waitFor(120, TimeUnit.SECONDS), "the child JVM finished");
    List<String> lines = Files.readAllLines(out, StandardCharsets.UTF_8);
    String stderr = Files.readString(err);
    assertEquals(0, p.exitValue(), stderr);
    assertEquals("hadoop absent", lines.get(lines.size() - 1));
    assertEquals(expected, lines.subList(0, files.size()), stderr);
    // parquet-java's own message needs Hadoop's Path: without it the chunk is still named, with the counts
    assertEquals("error DatasetFormatException " + miscounted + ", row group 0, column 'c': the column chunk's "
        + "metadata says 1 value but its 1 data page holds 3", lines.get(files.size()), stderr);
    String error = lines.get(files.size() + 1);
    assertTrue(error.startsWith("error UnsupportedFormatException " + uri), error);
    assertTrue(error.contains("needs Hadoop on the class path: add org.apache.hadoop:hadoop-client-api and "
        + "org.apache.hadoop:hadoop-client-runtime"), error);
  }
}
