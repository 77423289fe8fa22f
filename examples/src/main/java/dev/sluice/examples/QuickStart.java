package dev.sluice.examples;

import dev.sluice.core.Batch;
import dev.sluice.core.Datasets;
import dev.sluice.core.MemoryManager;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.PipelineIterator;
import dev.sluice.io.npy.Npy;
import dev.sluice.io.npy.NpyDataset;
import dev.sluice.operators.Pipeline;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;

/**
 * The README's quick start, end to end: an {@code .npy} dataset (generated when DIR holds none:
 * {@code x} float32[64], {@code label} int64 = the row index), globally shuffled, sharded by the
 * rank torchrun or Slurm gives this process, batched into pooled memory and prefetched, for two
 * epochs. It prints the first batches of each epoch, a line per epoch, and the off-heap bytes
 * still held at the end (0: every batch was closed).
 *
 * <pre>
 * java -cp examples/target/sluice.jar dev.sluice.examples.QuickStart [DIR] [rows]
 * </pre>
 *
 * <p>DIR defaults to a new temporary directory, rows to 100,000.
 */
public final class QuickStart {
  private QuickStart() {}

  /**
   * Runs the quick start.
   *
   * @param args {@code [DIR] [rows]}
   */
  public static void main(String[] args) throws IOException {
    Path dir = args.length > 0 ? Path.of(args[0]) : Files.createTempDirectory("sluice-quick");
    long rows = args.length > 1 ? Long.parseLong(args[1]) : 100_000;
    if (!Files.exists(dir.resolve("x.npy"))) {
      Npy.write(Datasets.synthetic(rows, 64, 0), dir); // what `sluice generate DIR --rows N --dim 64` writes
      System.out.printf(Locale.ROOT, "generated %d rows (x float32[64], label int64) in %s%n", rows, dir);
    }

    PipelineContext ctx = PipelineContext.fromEnvironment().withSeed(7); // rank and world from torchrun or Slurm
    try (NpyDataset data = Npy.open(dir)) {                                // fields label, x
      Pipeline<Batch> train = Pipeline.from(data)
          .shuffle()                            // a new permutation every epoch, the same on every rank
          .shard(ctx.worldSize(), ctx.rank())   // this rank's part of it
          .batch(256)                           // rows copied straight into pooled column memory
          .prefetch(4);                         // produced ahead on another thread
      for (int epoch = 0; epoch < 2; epoch++) {
        long batches = 0;
        long examples = 0;
        long started = System.nanoTime();
        // closing the iterator (also after a break or an exception) releases what the pass still holds
        try (PipelineIterator<Batch> pass = train.iterate(ctx.withEpoch(epoch))) {
          for (Batch batch : pass) {
            try (batch) {                       // a batch owns off-heap memory: close it
              if (batches < 3) {
                float first = batch.column("x").values().getFloat(0);
                System.out.printf(Locale.ROOT, "epoch %d batch %d: rows %d, first index %d, x[0][0] %.6f%n",
                    epoch, batches, batch.size(), batch.index(0), first);
              }
              batches++;
              examples += batch.size();
            }
          }
        }
        double seconds = (System.nanoTime() - started) / 1e9;
        System.out.printf(Locale.ROOT, "epoch %d: %d examples in %d batches (rank %d of %d), %.0f examples/s%n", epoch,
            examples, batches, ctx.rank(), ctx.worldSize(), examples / seconds);
      }
    }
    System.out.println("off-heap bytes outstanding: " + MemoryManager.shared().outstandingBytes());
  }
}
