package dev.sluice.examples;

import dev.sluice.core.Batch;
import dev.sluice.core.DType;
import dev.sluice.core.Example;
import dev.sluice.core.HasSchema;
import dev.sluice.core.MemoryManager;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.PipelineIterator;
import dev.sluice.core.PipelineState;
import dev.sluice.core.RandomAccessDataset;
import dev.sluice.core.Schema;
import dev.sluice.core.Shape;
import dev.sluice.core.Tensor;
import dev.sluice.core.TensorSpec;
import dev.sluice.io.Formats;
import dev.sluice.io.WriteOptions;
import dev.sluice.io.parquet.Parquet;
import dev.sluice.io.parquet.ParquetDataset;
import dev.sluice.io.parquet.ParquetOptions;
import dev.sluice.operators.CacheMonitor;
import dev.sluice.operators.CacheSpec;
import dev.sluice.operators.CacheStats;
import dev.sluice.operators.Pipeline;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;

/**
 * A training input over a directory of Parquet files that survives a restart: projection (only
 * {@code x} and {@code label} are decoded; the files' {@code text} column never is), the node's
 * shared cache of the decoded rows, a block shuffle (blocks of every row group in a new order every
 * epoch, so the rank reads a different part of the data each time; rows shuffled within a window),
 * this rank's shard, batches decoded by parallel workers, and prefetch.
 *
 * <p>The run stops after {@code --stop-after} training steps, as a preempted job would, and writes
 * the pipeline's state next to where a model checkpoint would go; a second run resumes from that
 * file and reads the rest of the epochs. The example then reads the same epochs uninterrupted and
 * checks that the stopped and the resumed run together saw exactly its examples, in its order:
 * nothing lost, nothing repeated. The cache's counts show the first run filling it and the later
 * ones reading it.
 *
 * <pre>
 * java -cp examples/target/sluice.jar dev.sluice.examples.ParquetTrainingInput [--dir DIR] [--rows N] [--files F]
 *     [--epochs E] [--batch B] [--workers W] [--stop-after STEPS] [--cache-dir DIR]
 * </pre>
 *
 * <p>Defaults: a new temporary directory holding 40,000 rows in 4 files (written when DIR holds no
 * {@code .parquet} file), 2 epochs, batches of 256 decoded by 2 workers, a stop after 150 steps,
 * the cache in {@code /dev/shm/sluice-<user>/} ({@code sluice cache ls} lists it, {@code sluice
 * cache rm} removes it). The JVM needs the flags of the shared cache's index (the README's JVM
 * flags); without them the cache refuses to start and names them.
 */
public final class ParquetTrainingInput {
  private ParquetTrainingInput() {}

  /**
   * Runs the example.
   *
   * @param args {@code [--dir DIR] [--rows N] [--files F] [--epochs E] [--batch B] [--workers W]
   *     [--stop-after STEPS] [--cache-dir DIR]}
   */
  public static void main(String[] args) throws IOException {
    // Chronicle Map (the cache's index) logs its start-up at INFO; keep stderr to warnings
    System.setProperty("org.slf4j.simpleLogger.defaultLogLevel",
        System.getProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn"));
    System.setProperty("org.slf4j.simpleLogger.log.net.openhft",
        System.getProperty("org.slf4j.simpleLogger.log.net.openhft", "error"));
    ExampleArgs a = ExampleArgs.parse(args, List.of("--dir", "--rows", "--files", "--epochs", "--batch", "--workers",
        "--stop-after", "--cache-dir"), List.of());
    Path dir = a.path("--dir");
    Path cacheDir = a.path("--cache-dir");
    long rows = a.longValue("--rows", 40_000);
    int files = a.intValue("--files", 4);
    int epochs = a.intValue("--epochs", 2);
    int batchSize = a.intValue("--batch", 256);
    int workers = a.intValue("--workers", 2);
    long stopAfter = a.longValue("--stop-after", 150);
    dir = dir != null ? Files.createDirectories(dir) : Files.createTempDirectory("sluice-parquet-training");
    if (!hasParquet(dir)) {
      writeFiles(dir, rows, files);
      System.out.printf(Locale.ROOT, "wrote %d rows (x float32[16], label int64, text string) in %d Parquet files to %s%n",
          rows, files, dir);
    }
    Path checkpoint = dir.resolve("loader-state.json");

    PipelineContext ctx = PipelineContext.fromEnvironment().withSeed(11);
    CacheMonitor cache = new CacheMonitor();
    CacheSpec spec = CacheSpec.defaults().monitor(cache);
    try (ParquetDataset data = Parquet.open(dir, ParquetOptions.builder()
        .columns("x", "label")                  // projection: the text column is never decoded
        .decodeParallelism(workers)             // row groups decoded at once
        .build())) {
      Pipeline<Batch> train = Pipeline.from(data)
          .cache(cacheDir == null ? spec : spec.directory(cacheDir)) // decoded rows, shared by the node's ranks
          .shuffle()                            // blocks of every row group in a new order every epoch, a window shuffle
          .shard(ctx.worldSize(), ctx.rank())   // this rank's part
          .batch(batchSize, false, workers)     // batches built by parallel workers
          .prefetch(4);
      System.out.println(train.explain().stripTrailing()); // where each stage runs: the columnar path, its window shuffle

      // 1. A run that stops after some steps, as a preempted job would, leaving its state behind.
      List<Long> seen = new ArrayList<>();
      long steps = 0;
      try (PipelineIterator<Batch> batches = train.iterate(ctx, epochs)) {
        for (Batch batch : batches) {
          try (batch) {
            record(batch, seen);
          }
          if (++steps == stopAfter) {
            batches.state().write(checkpoint); // with the model's checkpoint, at the same step
            break;
          }
        }
      }
      PipelineState state = PipelineState.read(checkpoint);
      System.out.printf(Locale.ROOT, "stopped after %d steps (%d examples) at epoch %d; state in %s%n", steps,
          seen.size(), state.epoch(), checkpoint);
      print("cache after the first run", cache.total());

      // 2. The restarted job: the rest of the epochs, from the element after the saved one.
      CacheStats before = cache.total();
      long resumedSteps = 0;
      try (PipelineIterator<Batch> batches = train.iterate(ctx, PipelineState.read(checkpoint))) {
        for (Batch batch : batches) {
          try (batch) {
            record(batch, seen);
            resumedSteps++;
          }
        }
      }
      System.out.printf(Locale.ROOT, "resumed at epoch %d, position %d: %d more steps%n", state.epoch(),
          state.position(), resumedSteps);
      print("cache during the resumed run", minus(cache.total(), before));

      // 3. The same epochs without a stop: the two runs together must be exactly this.
      List<Long> whole = new ArrayList<>();
      try (PipelineIterator<Batch> batches = train.iterate(ctx, epochs)) {
        for (Batch batch : batches) {
          try (batch) {
            record(batch, whole);
          }
        }
      }
      if (!whole.equals(seen)) {
        throw new IllegalStateException("the stopped and resumed runs read " + seen.size()
            + " examples that differ from the uninterrupted run's " + whole.size());
      }
      System.out.printf(Locale.ROOT, "stopped + resumed = uninterrupted: %d examples over %d epochs in the same "
          + "order, none lost, none repeated%n", whole.size(), epochs);
    }
    System.out.println("off-heap bytes outstanding: " + MemoryManager.shared().outstandingBytes());
  }

  private static void record(Batch batch, List<Long> into) {
    Tensor label = batch.column("label").values();
    for (int i = 0; i < batch.size(); i++) {
      into.add(label.getLong(i));
    }
  }

  private static void print(String what, CacheStats s) {
    System.out.printf(Locale.ROOT, "%s: %d rows read from the cache, %d from the files, %d blocks written%n", what,
        s.hits(), s.misses(), s.blocksWritten());
  }

  private static CacheStats minus(CacheStats a, CacheStats b) {
    return new CacheStats(a.hits() - b.hits(), a.misses() - b.misses(), a.uncached() - b.uncached(),
        a.fallbacks() - b.fallbacks(), a.blocksWritten() - b.blocksWritten(), a.bytesWritten() - b.bytesWritten());
  }

  private static boolean hasParquet(Path dir) throws IOException {
    try (var files = Files.list(dir)) {
      return files.anyMatch(p -> p.getFileName().toString().endsWith(".parquet"));
    }
  }

  /** {@code rows} rows in {@code files} files: x float32[16], label int64 (the row index), text (a sentence). */
  static void writeFiles(Path dir, long rows, int files) {
    for (int f = 0; f < files; f++) {
      long from = rows * f / files;
      long to = rows * (f + 1) / files;
      Formats.named("parquet").write(new Rows(from, to), dir.resolve(String.format(Locale.ROOT, "part-%05d.parquet", f)),
          WriteOptions.defaults().withRowGroupBytes(128 << 10));
    }
  }

  /** Rows {@code from .. to-1} of the example's dataset. */
  private record Rows(long from, long to) implements RandomAccessDataset<Example>, HasSchema {
    @Override
    public Schema schema() {
      return Schema.of(new TensorSpec("x", DType.FLOAT32, Shape.of(16)),
          new TensorSpec("label", DType.INT64, Shape.scalar()),
          new TensorSpec("text", DType.STRING, Shape.scalar()));
    }

    @Override
    public long size() {
      return to - from;
    }

    @Override
    public Example get(long index) {
      long row = from + index;
      SplittableRandom random = new SplittableRandom(row);
      float[] x = new float[16];
      for (int j = 0; j < x.length; j++) {
        x[j] = (float) random.nextDouble();
      }
      return Example.builder(index)
          .put("x", Tensor.of(x))
          .put("label", Tensor.scalar(row))
          .put("text", Tensor.ofString("row " + row + " of the training set"))
          .build();
    }
  }
}
