package dev.sluice.benchmarks;

import dev.sluice.core.Batch;
import dev.sluice.core.MemoryManager;
import dev.sluice.core.Schema;
import dev.sluice.core.spi.BatchBuilder;
import dev.sluice.core.spi.BufferPool;
import dev.sluice.io.npy.Npy;
import dev.sluice.io.npy.NpyDataset;
import dev.sluice.io.npy.internal.NpyWriter;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Comparator;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
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
 * Gathering 256-row batches from a page-cached 2,000,000 × 256-byte {@code .npy} (uint8[256] rows,
 * 512 MB): Sluice's {@code gather} into {@link BatchBuilder} memory (pooled, a fresh batch per
 * operation, built and closed as a pipeline does) against a plain Java loop doing the same copies
 * from a mapping of the same file into one reused buffer: one {@code ByteBuffer} bulk copy per
 * contiguous run of indices (one per batch in order, one per row shuffled). One operation = one
 * batch. The data file is generated in a temp directory (or taken from {@code -Dsluice.bench.npy}).
 *
 * <p>Run side by side with {@link NpyGatherRatio}, which alternates the two for 5 rounds.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 1)
@Fork(value = 1, jvmArgsAppend = {"-Xms1g", "-Xmx1g", "-XX:+AlwaysPreTouch"})
public class NpyGatherBenchmark {
  public static final int ROWS = 2_000_000;
  public static final int ROW_BYTES = 256;
  public static final int BATCH = 256;
  public static final String FILE_PROPERTY = "sluice.bench.npy";

  @Param({"inOrder", "shuffled"})
  public String order;

  private Path tempDir;
  private NpyDataset dataset;
  private Schema schema;
  private BufferPool pool;
  private MappedByteBuffer plainMapping;
  private ByteBuffer plainTarget;
  private long[] indices;
  private int cursor;

  @Setup(Level.Trial)
  public void setUp() throws IOException {
    String given = System.getProperty(FILE_PROPERTY);
    Path file;
    if (given != null) {
      file = Path.of(given);
    } else {
      tempDir = Files.createTempDirectory("sluice-npy-bench");
      file = generate(tempDir.resolve("rows.npy"));
    }
    dataset = Npy.open(file);
    schema = dataset.schema();
    pool = MemoryManager.shared().pool("bench.gather");
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
      long dataOffset = ch.size() - (long) ROWS * ROW_BYTES;
      plainMapping = ch.map(FileChannel.MapMode.READ_ONLY, dataOffset, (long) ROWS * ROW_BYTES);
    }
    plainTarget = ByteBuffer.allocateDirect(BATCH * ROW_BYTES).order(ByteOrder.LITTLE_ENDIAN);
    indices = new long[ROWS];
    for (int i = 0; i < ROWS; i++) {
      indices[i] = i;
    }
    if (order.equals("shuffled")) {
      Random r = new Random(42);
      for (int i = ROWS - 1; i > 0; i--) {
        int j = r.nextInt(i + 1);
        long t = indices[i];
        indices[i] = indices[j];
        indices[j] = t;
      }
    }
    // page in both mappings once, so neither contender pays first-touch faults in the measurement
    long sum = 0;
    for (long p = 0; p < (long) ROWS * ROW_BYTES; p += 4096) {
      sum += plainMapping.get((int) p);
    }
    for (long i = 0; i < ROWS; i += 16) {
      sum += dataset.get(i).tensor("rows").getByte(0);
    }
    if (sum == 42) {
      System.out.print("");
    }
  }

  /** Writes the 512 MB benchmark file: row r holds bytes (r + column) mod 256. */
  public static Path generate(Path file) throws IOException {
    byte[] header = NpyWriter.header("|u1", new long[] {ROWS, ROW_BYTES}, 0);
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
        StandardOpenOption.TRUNCATE_EXISTING)) {
      ch.write(ByteBuffer.wrap(header));
      ByteBuffer block = ByteBuffer.allocateDirect(4096 * ROW_BYTES);
      for (int r = 0; r < ROWS; r += 4096) {
        block.clear();
        int n = Math.min(4096, ROWS - r);
        for (int i = 0; i < n; i++) {
          for (int c = 0; c < ROW_BYTES; c++) {
            block.put((byte) (r + i + c));
          }
        }
        block.flip();
        while (block.hasRemaining()) {
          ch.write(block);
        }
      }
    }
    return file;
  }

  private int nextBatch() {
    int from = cursor;
    cursor += BATCH;
    if (cursor + BATCH > ROWS) {
      cursor = 0;
    }
    return from;
  }

  @Benchmark
  public void sluiceGather(Blackhole bh) {
    int from = nextBatch();
    try (BatchBuilder b = BatchBuilder.create(schema, BATCH, pool)) {
      dataset.gather(indices, from, BATCH, b);
      try (Batch batch = b.build()) {
        bh.consume(batch.column(0).values().getByte(BATCH * ROW_BYTES - 1));
      }
    }
  }

  /**
   * The batch machinery alone (create, commit, build, close a {@code BatchBuilder} of 256 rows with
   * no copy): the part of {@link #sluiceGather} that the plain loop does not pay.
   */
  @Benchmark
  public void batchOnly(Blackhole bh) {
    int from = nextBatch();
    try (BatchBuilder b = BatchBuilder.create(schema, BATCH, pool)) {
      b.commitRows(indices, from, BATCH);
      try (Batch batch = b.build()) {
        bh.consume(batch.size());
      }
    }
  }

  @Benchmark
  public void plainLoop(Blackhole bh) {
    int from = nextBatch();
    ByteBuffer dst = plainTarget;
    int i = 0;
    while (i < BATCH) {
      long first = indices[from + i];
      int run = 1;
      while (i + run < BATCH && indices[from + i + run] == first + run) {
        run++;
      }
      dst.put(i * ROW_BYTES, plainMapping, (int) (first * ROW_BYTES), run * ROW_BYTES);
      i += run;
    }
    bh.consume(dst.get(BATCH * ROW_BYTES - 1));
  }

  @TearDown(Level.Trial)
  public void tearDown() throws IOException {
    dataset.close();
    if (tempDir != null) {
      try (Stream<Path> s = Files.walk(tempDir)) {
        for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
          Files.deleteIfExists(p);
        }
      }
    }
  }
}
