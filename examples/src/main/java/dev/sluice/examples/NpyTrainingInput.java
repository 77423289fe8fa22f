package dev.sluice.examples;

import dev.sluice.core.Batch;
import dev.sluice.core.DType;
import dev.sluice.core.Datasets;
import dev.sluice.core.Example;
import dev.sluice.core.MemoryManager;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.PipelineIterator;
import dev.sluice.core.Shape;
import dev.sluice.core.Tensor;
import dev.sluice.io.npy.Npy;
import dev.sluice.io.npy.NpyDataset;
import dev.sluice.operators.Pipeline;
import dev.sluice.operators.StageReport;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * A training input over NumPy arrays, as a data-parallel job would build it: {@code x.npy} and
 * {@code y.npy} read as one dataset of aligned fields, a global shuffle (a new permutation every
 * epoch, the same on every rank), this rank's shard from {@link PipelineContext#fromEnvironment()}
 * (torchrun's or Slurm's variables), an augmenting {@code map} whose noise comes from each sample's
 * own generator of (seed, epoch, index), batches, and prefetch. A simulated training step of
 * configurable cost consumes the batches; the augmentation can be given a cost per sample too. The pipeline reports to a Micrometer registry; at the end
 * the example prints the per-stage table and the line naming the bottleneck: with a cheap step the
 * input pipeline is ({@code input-bound: ...}), with a costly one the step is
 * ({@code consumer-bound: ...}).
 *
 * <pre>
 * java -cp examples/target/sluice.jar dev.sluice.examples.NpyTrainingInput [--dir DIR] [--rows N] [--dim D]
 *     [--epochs E] [--batch B] [--workers W] [--step-ms MS] [--augment-us US]
 * </pre>
 *
 * <p>Defaults: a new temporary directory holding 50,000 rows of {@code x} float32[32] and {@code y}
 * int64 (written when DIR has no {@code x.npy}), 2 epochs, batches of 128, 2 map workers, a 0 ms
 * step, no added augmentation cost ({@code --augment-us} makes each sample's augmentation work that
 * many microseconds more, standing for a costly decode or transform).
 */
public final class NpyTrainingInput {
  private NpyTrainingInput() {}

  /**
   * Runs the example.
   *
   * @param args {@code [--dir DIR] [--rows N] [--dim D] [--epochs E] [--batch B] [--workers W] [--step-ms MS]
   *     [--augment-us US]}
   */
  public static void main(String[] args) throws IOException {
    ExampleArgs a = ExampleArgs.parse(args,
        List.of("--dir", "--rows", "--dim", "--epochs", "--batch", "--workers", "--step-ms", "--augment-us"), List.of());
    Path dir = a.path("--dir");
    long rows = a.longValue("--rows", 50_000);
    int dim = a.intValue("--dim", 32);
    int epochs = a.intValue("--epochs", 2);
    int batchSize = a.intValue("--batch", 128);
    int workers = a.intValue("--workers", 2);
    double stepMs = a.doubleValue("--step-ms", 0);
    long augmentNanos = (long) (a.doubleValue("--augment-us", 0) * 1e3);
    dir = dir != null ? Files.createDirectories(dir) : Files.createTempDirectory("sluice-npy-training");
    if (!Files.exists(dir.resolve("x.npy"))) {
      writeArrays(dir, rows, dim);
      System.out.printf(Locale.ROOT, "wrote x.npy (%d x %d float32) and y.npy (%d int64) to %s%n", rows, dim, rows, dir);
    }

    PipelineContext ctx = PipelineContext.fromEnvironment().withSeed(42);
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    try (NpyDataset data = Npy.open(dir)) {                            // fields x and y, aligned by row
      Pipeline<Batch> train = Pipeline.from(data)
          .shuffle()                                                    // global permutation per epoch
          .shard(ctx.worldSize(), ctx.rank())                           // this rank's part of it
          .mapWithContext((e, c) -> augment(e, c, augmentNanos), workers, true) // noise from (seed, epoch, index)
          .batch(batchSize)
          .prefetch(4);
      train = train.withOptions(train.options().toBuilder().metrics(registry).name("train").build());
      for (int epoch = 0; epoch < epochs; epoch++) {
        long started = System.nanoTime();
        long seen = 0;
        double labels = 0;
        long steps = 0;
        try (PipelineIterator<Batch> pass = train.iterate(ctx.withEpoch(epoch))) {
          for (Batch batch : pass) {
            try (batch) {
              labels += step(batch, stepMs);
              seen += batch.size();
              steps++;
            }
          }
        }
        double seconds = (System.nanoTime() - started) / 1e9;
        System.out.printf(Locale.ROOT, "epoch %d (rank %d of %d): %d examples in %d steps, %.0f examples/s, mean label %.3f%n",
            epoch, ctx.rank(), ctx.worldSize(), seen, steps, seen / seconds, labels / Math.max(1, seen));
      }
    }
    StageReport report = StageReport.of(registry, "train");
    System.out.print(report.table());
    System.out.println(report.bottleneck());
    System.out.println("off-heap bytes outstanding: " + MemoryManager.shared().outstandingBytes());
  }

  /** Seeded {@code x} in [0, 1) and labels {@code y} in [0, 10), written as {@code x.npy} and {@code y.npy}. */
  static void writeArrays(Path dir, long rows, int dim) {
    if (rows * dim > Integer.MAX_VALUE / 4) {
      throw new IllegalArgumentException("--rows x --dim must stay below " + Integer.MAX_VALUE / 4 + " values here");
    }
    ByteBuffer x = ByteBuffer.allocate((int) (rows * dim * 4)).order(ByteOrder.LITTLE_ENDIAN);
    ByteBuffer y = ByteBuffer.allocate((int) (rows * 8)).order(ByteOrder.LITTLE_ENDIAN);
    SplittableRandom random = new SplittableRandom(1);
    for (long r = 0; r < rows; r++) {
      for (int j = 0; j < dim; j++) {
        x.putFloat((float) random.nextDouble());
      }
      y.putLong(random.nextInt(10));
    }
    Map<String, Tensor> fields = new LinkedHashMap<>();
    fields.put("x", Tensor.wrap(DType.FLOAT32, Shape.of(rows, dim), x.flip()));
    fields.put("y", Tensor.wrap(DType.INT64, Shape.of(rows), y.flip()));
    Npy.write(Datasets.fromTensors(fields), dir);
  }

  /** The example's augmentation, working {@code extraNanos} more without sleeping. */
  static Example augment(Example e, PipelineContext ctx, long extraNanos) {
    Example out = TrainingLoopExample.augment(e, ctx);
    work(extraNanos);
    return out;
  }

  /** Busy for {@code nanos}: work, not a sleep, as a model step or a decode would be. */
  static void work(long nanos) {
    long until = System.nanoTime() + nanos;
    while (System.nanoTime() < until) {
      Thread.onSpinWait();
    }
  }

  /**
   * A simulated training step: it reads the batch (the sum of its labels, which it returns) and then
   * works without sleeping for {@code stepMs}, standing for the forward and backward pass of a
   * model; 0 makes the step nearly free, so that the input pipeline is what limits the rate.
   */
  static double step(Batch batch, double stepMs) {
    Tensor y = batch.column("y").values();
    double sum = 0;
    for (int r = 0; r < batch.size(); r++) {
      sum += y.getLong(r);
    }
    work((long) (stepMs * 1e6));
    return sum;
  }
}
