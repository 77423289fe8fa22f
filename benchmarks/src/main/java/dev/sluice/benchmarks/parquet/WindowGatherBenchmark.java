package dev.sluice.benchmarks.parquet;

import dev.sluice.core.Batch;
import dev.sluice.core.DType;
import dev.sluice.core.MemoryManager;
import dev.sluice.core.Schema;
import dev.sluice.core.Shape;
import dev.sluice.core.TensorSpec;
import dev.sluice.core.spi.BatchBuilder;
import dev.sluice.core.spi.BufferPool;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
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
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;

/**
 * What the window shuffle's gather costs per value, against the floor of a random gather on the
 * machine: one operation moves one window of {@code windowRows} rows × 64 float32 columns in the
 * order of a fresh random permutation (made per operation, as the window shuffle makes one per
 * window), so the score in ns/op divided by {@code windowRows × 64} is the cost per value.
 *
 * <ul>
 *   <li>{@code sluice}: {@link BatchBuilder#appendRows(Batch, int[], int, int, List)} from a pooled
 *       window batch into 1,024-row pooled batches, built and closed, as the window shuffle does;
 *   <li>{@code byteBuffers}: the same loop over direct little-endian {@code ByteBuffer}s into
 *       reused buffers, without batches;
 *   <li>{@code addresses}: the same loop by address ({@code sun.misc.Unsafe}), from row indices;
 *   <li>{@code addressPairs}: by address as Sluice's gather runs where the JVM allows it: byte
 *       offsets made once per window, two columns per pass of them;
 *   <li>{@code addressPairsColdTargets}: the same into one of {@value #TARGET_SETS} sets of target
 *       buffers in turn (21 MB at 10,000 rows), so that, as in a pipeline, the targets are not in
 *       the L2 cache when they are written;
 *   <li>{@code heapArrays}: {@code int[]} to {@code int[]}, the floor in Java;
 *   <li>{@code scatter}: the same permutation applied in source order ({@code dst[inverse[i]] =
 *       src[i]}).
 * </ul>
 *
 * <pre>java -jar benchmarks/target/benchmarks.jar WindowGatherBenchmark</pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"-Xms1g", "-Xmx1g", "-XX:+AlwaysPreTouch"})
public class WindowGatherBenchmark {
  static final int COLUMNS = 64;
  static final int BATCH = 1024;
  static final int TARGET_SETS = 8;

  @Param({"2048", "4096", "10000", "20000"})
  public int windowRows;

  private MemoryManager memory;
  private BufferPool pool;
  private Schema schema;
  private Batch window;
  private ByteBuffer[] source;
  private ByteBuffer[][] target;
  private ByteBuffer[][][] coldTarget;
  private int turn;
  private int[][] heapSource;
  private int[][] heapTarget;
  private final SplittableRandom random = new SplittableRandom(7);

  @Setup(Level.Trial)
  public void setUp() {
    memory = new MemoryManager();
    pool = memory.pool("bench.window");
    List<TensorSpec> fields = new ArrayList<>();
    for (int c = 0; c < COLUMNS; c++) {
      fields.add(new TensorSpec("x" + c, DType.FLOAT32, Shape.scalar()));
    }
    schema = Schema.of(fields.toArray(new TensorSpec[0]));
    source = new ByteBuffer[COLUMNS];
    heapSource = new int[COLUMNS][windowRows];
    heapTarget = new int[COLUMNS][windowRows];
    int batches = (windowRows + BATCH - 1) / BATCH;
    target = new ByteBuffer[batches][COLUMNS];
    coldTarget = new ByteBuffer[TARGET_SETS][batches][COLUMNS];
    try (BatchBuilder b = BatchBuilder.create(schema, windowRows, pool)) {
      for (int c = 0; c < COLUMNS; c++) {
        ByteBuffer col = b.fixedColumn(c);
        source[c] = ByteBuffer.allocateDirect(4 * windowRows).order(ByteOrder.LITTLE_ENDIAN);
        for (int r = 0; r < windowRows; r++) {
          col.putFloat(4 * r, r * 0.5f + c);
          source[c].putFloat(4 * r, r * 0.5f + c);
          heapSource[c][r] = Float.floatToRawIntBits(r * 0.5f + c);
        }
        for (int k = 0; k < batches; k++) {
          target[k][c] = ByteBuffer.allocateDirect(4 * BATCH).order(ByteOrder.LITTLE_ENDIAN);
          for (ByteBuffer[][] set : coldTarget) {
            set[k][c] = ByteBuffer.allocateDirect(4 * BATCH).order(ByteOrder.LITTLE_ENDIAN);
          }
        }
      }
      b.commitRange(0, windowRows);
      window = b.build();
    }
  }

  @TearDown(Level.Trial)
  public void tearDown() {
    window.close();
    memory.checkNoOutstanding();
  }

  /** A uniform random permutation of the window (Fisher-Yates), made per operation like the window shuffle's. */
  private int[] permutation() {
    int[] p = new int[windowRows];
    for (int i = 0; i < p.length; i++) {
      p[i] = i;
    }
    for (int i = p.length - 1; i > 0; i--) {
      int j = random.nextInt(i + 1);
      int t = p[i];
      p[i] = p[j];
      p[j] = t;
    }
    return p;
  }

  @Benchmark
  public void sluice(Blackhole bh) {
    int[] order = permutation();
    List<BatchBuilder> targets = new ArrayList<>();
    for (int at = 0; at < windowRows; at += BATCH) {
      targets.add(BatchBuilder.create(schema, Math.min(BATCH, windowRows - at), pool));
    }
    BatchBuilder.appendRows(window, order, 0, windowRows, targets);
    for (BatchBuilder t : targets) {
      try (Batch b = t.build()) {
        bh.consume(b.size());
      }
    }
  }

  @Benchmark
  public void byteBuffers(Blackhole bh) {
    int[] order = permutation();
    for (int c = 0; c < COLUMNS; c++) {
      ByteBuffer src = source[c];
      for (int k = 0, at = 0; at < windowRows; k++, at += BATCH) {
        ByteBuffer dst = target[k][c];
        for (int i = 0, n = Math.min(BATCH, windowRows - at); i < n; i++) {
          dst.putInt(i << 2, src.getInt(order[at + i] << 2));
        }
      }
    }
    bh.consume(target[0][0].getInt(0));
  }

  private static final sun.misc.Unsafe U;
  private static final long ADDRESS;

  static {
    try {
      java.lang.reflect.Field f = sun.misc.Unsafe.class.getDeclaredField("theUnsafe");
      f.setAccessible(true);
      U = (sun.misc.Unsafe) f.get(null);
      ADDRESS = U.objectFieldOffset(java.nio.Buffer.class.getDeclaredField("address"));
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  @Benchmark
  public void addresses(Blackhole bh) {
    int[] order = permutation();
    for (int c = 0; c < COLUMNS; c++) {
      long src = U.getLong(source[c], ADDRESS);
      for (int k = 0, at = 0; at < windowRows; k++, at += BATCH) {
        long dst = U.getLong(target[k][c], ADDRESS);
        for (int i = 0, n = Math.min(BATCH, windowRows - at); i < n; i++) {
          U.putInt(dst + ((long) i << 2), U.getInt(src + ((long) order[at + i] << 2)));
        }
      }
    }
    bh.consume(target[0][0].getInt(0));
  }

  @Benchmark
  public void addressPairs(Blackhole bh) {
    pairs(permutation(), target);
    bh.consume(target[0][0].getInt(0));
  }

  @Benchmark
  public void addressPairsColdTargets(Blackhole bh) {
    ByteBuffer[][] set = coldTarget[turn++ % TARGET_SETS];
    pairs(permutation(), set);
    bh.consume(set[0][0].getInt(0));
  }

  private void pairs(int[] order, ByteBuffer[][] into) {
    int[] offsets = new int[windowRows];
    for (int i = 0; i < windowRows; i++) {
      offsets[i] = order[i] << 2;
    }
    for (int c = 0; c < COLUMNS; c += 2) {
      long a = U.getLong(source[c], ADDRESS);
      long b = U.getLong(source[c + 1], ADDRESS);
      for (int k = 0, at = 0; at < windowRows; k++, at += BATCH) {
        pair(a, b, offsets, at, Math.min(BATCH, windowRows - at), U.getLong(into[k][c], ADDRESS),
            U.getLong(into[k][c + 1], ADDRESS));
      }
    }
  }

  private static void pair(long a, long b, int[] offsets, int from, int count, long dstA, long dstB) {
    for (int i = 0; i < count; i++) {
      long o = offsets[from + i];
      long d = (long) i << 2;
      U.putInt(dstA + d, U.getInt(a + o));
      U.putInt(dstB + d, U.getInt(b + o));
    }
  }

  @Benchmark
  public void batchesOnly(Blackhole bh) {
    int[] order = permutation();
    for (int at = 0; at < windowRows; at += BATCH) {
      try (BatchBuilder t = BatchBuilder.create(schema, Math.min(BATCH, windowRows - at), pool)) {
        t.commitRange(at, t.capacity());
        try (Batch b = t.build()) {
          bh.consume(b.size());
        }
      }
    }
    bh.consume(order[0]);
  }

  @Benchmark
  public void viaHeap(Blackhole bh) {
    int[] order = permutation();
    int[] src = heapSource[0];
    int[] dst = heapTarget[0];
    for (int c = 0; c < COLUMNS; c++) {
      source[c].asIntBuffer().get(0, src, 0, windowRows);
      for (int i = 0; i < windowRows; i++) {
        dst[i] = src[order[i]];
      }
      for (int k = 0, at = 0; at < windowRows; k++, at += BATCH) {
        target[k][c].asIntBuffer().put(0, dst, at, Math.min(BATCH, windowRows - at));
      }
    }
    bh.consume(target[0][0].getInt(0));
  }

  @Benchmark
  public void heapArrays(Blackhole bh) {
    int[] order = permutation();
    for (int c = 0; c < COLUMNS; c++) {
      int[] src = heapSource[c];
      int[] dst = heapTarget[c];
      for (int i = 0; i < windowRows; i++) {
        dst[i] = src[order[i]];
      }
    }
    bh.consume(heapTarget[0][0]);
  }

  @Benchmark
  public void scatter(Blackhole bh) {
    int[] order = permutation();
    int[] inverse = new int[windowRows];
    for (int i = 0; i < windowRows; i++) {
      inverse[order[i]] = i;
    }
    for (int c = 0; c < COLUMNS; c++) {
      int[] src = heapSource[c];
      int[] dst = heapTarget[c];
      for (int i = 0; i < windowRows; i++) {
        dst[inverse[i]] = src[i];
      }
    }
    bh.consume(heapTarget[0][0]);
  }
}
