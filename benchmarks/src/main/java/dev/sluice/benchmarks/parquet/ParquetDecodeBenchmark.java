package dev.sluice.benchmarks.parquet;

import dev.sluice.io.parquet.ParquetDataset;
import java.io.IOException;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * One decode thread over a generated 1,000,000-row snappy file with x = 64 float32 per row, stored
 * as a pyarrow-style LIST column or as 64 flat float columns: Sluice's columnar path versus
 * parquet-java's read-and-decompress-only ceiling (every page read through {@code PageReader}, no
 * decoding) versus parquet-java's record API with a custom {@code ReadSupport}. One operation reads
 * the whole file: rows/s = {@code rows} / (seconds per op).
 *
 * <pre>
 * java -Xms2g -Xmx2g -XX:+AlwaysPreTouch -jar benchmarks/target/benchmarks.jar ParquetDecodeBenchmark
 * </pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"-Xms2g", "-Xmx2g", "-XX:+AlwaysPreTouch",
    "--add-opens=java.base/java.nio=ALL-UNNAMED", "--enable-native-access=ALL-UNNAMED"})
public class ParquetDecodeBenchmark {
  @Param({"LIST", "FLAT"})
  public BenchFiles.Layout layout;

  @Param("1000000")
  public long rows;

  @Param("64")
  public int dim;

  @Param("4096")
  public int batchSize;

  private Path file;
  private ParquetDataset dataset;

  @Setup(Level.Trial)
  public void setUp() throws IOException {
    file = BenchFiles.file(layout, rows, dim, 128L << 20);
    dataset = Readers.open(file);
  }

  @Benchmark
  public long sluiceColumnar() {
    return Readers.sluiceColumnar(dataset, batchSize);
  }

  @Benchmark
  public long parquetJavaPagesOnly() throws IOException {
    return Readers.pagesOnly(file);
  }

  @Benchmark
  public long parquetJavaRecordApi() throws IOException {
    return Readers.recordApi(file, dim);
  }
}
