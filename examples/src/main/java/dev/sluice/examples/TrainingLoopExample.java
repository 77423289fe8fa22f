package dev.sluice.examples;

import dev.sluice.core.Batch;
import dev.sluice.core.DType;
import dev.sluice.core.Datasets;
import dev.sluice.core.Example;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.PipelineIterator;
import dev.sluice.core.Shape;
import dev.sluice.core.Tensor;
import dev.sluice.operators.Pipeline;
import dev.sluice.operators.SampleRandom;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Locale;
import java.util.SplittableRandom;

/**
 * A toy training loop on the element path: an augmenting {@code map} (noise from a per-sample
 * generator of (seed, epoch, index), so the same sample is augmented the same way in a rerun
 * whatever the parallelism), a buffer shuffle, batch and prefetch. Per epoch it prints the batches
 * consumed, the time and the first indices, so the reshuffle is visible.
 *
 * <pre>
 * java -cp examples/target/sluice.jar dev.sluice.examples.TrainingLoopExample [rows] [epochs]
 * </pre>
 */
public final class TrainingLoopExample {
  private TrainingLoopExample() {}

  public static void main(String[] args) {
    long rows = args.length > 0 ? Long.parseLong(args[0]) : 20_000;
    int epochs = args.length > 1 ? Integer.parseInt(args[1]) : 3;
    PipelineContext ctx = PipelineContext.fromEnvironment().withSeed(42);

    Pipeline<Batch> train = Pipeline.from(Datasets.synthetic(rows, 16, 7))
        .mapWithContext(TrainingLoopExample::augment, 2, true) // ordered parallel map, chunks to 2 workers
        .shuffle(1_000)                                        // tf.data buffer shuffle, per (seed, epoch)
        .batch(64)                                             // element-path collation into pooled columns
        .prefetch(4);                                          // produced ahead on another thread

    double[] weights = new double[16];
    for (int epoch = 0; epoch < epochs; epoch++) {
      long started = System.nanoTime();
      long batches = 0;
      double loss = 0;
      StringBuilder first = new StringBuilder();
      // closing the iterator (also after a break or an exception) releases what the pass still holds
      try (PipelineIterator<Batch> pass = train.iterate(ctx.withEpoch(epoch))) {
        for (Batch batch : pass) {
          try (batch) {
            if (batches++ == 0) {
              for (int i = 0; i < Math.min(8, batch.size()); i++) {
                first.append(i == 0 ? "" : " ").append(batch.index(i));
              }
            }
            loss += step(batch, weights);
          }
        }
      }
      double seconds = (System.nanoTime() - started) / 1e9;
      System.out.printf(Locale.ROOT, "epoch %d: %d batches in %.3f s, loss %.4f, first indices: %s%n",
          epoch, batches, seconds, loss / Math.max(1, batches), first);
    }
  }

  /** Adds uniform noise in [-0.05, 0.05) to x, drawn from the sample's own generator. */
  static Example augment(Example e, PipelineContext ctx) {
    SplittableRandom random = SampleRandom.of(ctx, e.index());
    Tensor x = e.tensor("x");
    int n = (int) x.numElements();
    ByteBuffer out = ByteBuffer.allocate(n * 4).order(ByteOrder.LITTLE_ENDIAN);
    for (int i = 0; i < n; i++) {
      out.putFloat(i * 4, x.getFloat(i) + (float) (random.nextDouble() * 0.1 - 0.05));
    }
    return e.with("x", Tensor.wrap(DType.FLOAT32, Shape.of(n), out));
  }

  /** One step of least squares towards label parity: the "model" the loop trains. */
  static double step(Batch batch, double[] w) {
    Tensor x = batch.column("x").values();
    Tensor label = batch.column("label").values();
    int dim = w.length;
    double loss = 0;
    for (int r = 0; r < batch.size(); r++) {
      double y = label.getLong(r) % 2;
      double p = 0;
      for (int j = 0; j < dim; j++) {
        p += w[j] * x.getFloat((long) r * dim + j);
      }
      double g = p - y;
      loss += g * g;
      for (int j = 0; j < dim; j++) {
        w[j] -= 0.01 * g * x.getFloat((long) r * dim + j) / batch.size();
      }
    }
    return loss / batch.size();
  }
}
