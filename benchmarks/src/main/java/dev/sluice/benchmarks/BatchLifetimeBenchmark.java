package dev.sluice.benchmarks;

import dev.sluice.core.Batch;
import dev.sluice.core.DType;
import dev.sluice.core.MemoryManager;
import dev.sluice.core.Schema;
import dev.sluice.core.Shape;
import dev.sluice.core.Tensor;
import dev.sluice.core.TensorSpec;
import dev.sluice.core.spi.BatchBuilder;
import dev.sluice.core.spi.BufferPool;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What a batch's lifetime costs: reading a column value by value through {@link Tensor#getFloat}
 * with the use-after-close check on (the default) and off ({@code -Dsluice.tensor.checkElements=false}),
 * and building and closing one batch with the leak detector watching it (the default level) and not
 * ({@code -Dsluice.leakDetection=disabled}). Each pair differs only in that property, in a fork of
 * its own.
 *
 * <pre>
 * java -cp benchmarks/target/benchmarks.jar org.openjdk.jmh.Main BatchLifetimeBenchmark
 * </pre>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"-Xms512m", "-Xmx512m"})
public class BatchLifetimeBenchmark {
  private static final Schema SCHEMA = Schema.of(new TensorSpec("x", DType.FLOAT32, Shape.of(256)));
  private static final int ROWS = 256;

  private final MemoryManager memory = new MemoryManager();
  private final BufferPool pool = memory.pool("bench.lifetime");
  private Batch batch;
  private Tensor values;

  @Setup
  public void setUp() {
    batch = build();
    values = batch.column("x").values();
  }

  @TearDown
  public void tearDown() {
    batch.close();
  }

  private Batch build() {
    try (BatchBuilder b = BatchBuilder.create(SCHEMA, ROWS, pool)) {
      java.nio.ByteBuffer x = b.fixedColumn(0);
      for (int i = 0; i < ROWS * 256; i++) {
        x.putFloat(i * 4, i * 0.5f);
      }
      b.commitRange(0, ROWS);
      return b.build();
    }
  }

  /** Sums the 65,536 values of a batch's column one {@code getFloat} at a time: checked. */
  @Benchmark
  public float elementsChecked() {
    return sum(values);
  }

  /** The same sum with {@code -Dsluice.tensor.checkElements=false}. */
  @Benchmark
  @Fork(value = 1, jvmArgsAppend = {"-Xms512m", "-Xmx512m", "-Dsluice.tensor.checkElements=false"})
  public float elementsUnchecked() {
    return sum(values);
  }

  private static float sum(Tensor t) {
    float s = 0;
    for (long i = 0, n = t.numElements(); i < n; i++) {
      s += t.getFloat(i);
    }
    return s;
  }

  /** Builds a 64 KiB batch (the values already written) and closes it, watched by the leak detector. */
  @Benchmark
  public long batchWatched() {
    return buildAndClose();
  }

  /** The same with {@code -Dsluice.leakDetection=disabled}. */
  @Benchmark
  @Fork(value = 1, jvmArgsAppend = {"-Xms512m", "-Xmx512m", "-Dsluice.leakDetection=disabled"})
  public long batchUnwatched() {
    return buildAndClose();
  }

  private long buildAndClose() {
    try (BatchBuilder b = BatchBuilder.create(SCHEMA, ROWS, pool)) {
      b.commitRange(0, ROWS);
      try (Batch made = b.build()) {
        return made.column(0).values().byteSize();
      }
    }
  }
}
