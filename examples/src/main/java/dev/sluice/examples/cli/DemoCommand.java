package dev.sluice.examples.cli;

import dev.sluice.core.Batch;
import dev.sluice.core.Datasets;
import dev.sluice.core.Example;
import dev.sluice.core.HasSchema;
import dev.sluice.core.MemoryManager;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.RandomAccessDataset;
import dev.sluice.core.Schema;
import dev.sluice.operators.Pipeline;
import java.io.PrintWriter;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicLong;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/** {@code sluice demo}: the quick start on a generated dataset, no arguments needed. */
@Command(name = "demo", mixinStandardHelpOptions = true,
    description = "Run a pipeline over a generated dataset and print its rate.")
final class DemoCommand implements Callable<Integer> {
  @Option(names = "--rows", defaultValue = "1000000", description = "Rows to generate (default: ${DEFAULT-VALUE}).")
  long rows;

  @Option(names = "--dim", defaultValue = "64", description = "Floats per row of x (default: ${DEFAULT-VALUE}).")
  int dim;

  @Option(names = "--batch", defaultValue = "256", description = "Batch size (default: ${DEFAULT-VALUE}).")
  int batchSize;

  @Option(names = "--epochs", defaultValue = "2", description = "Epochs (default: ${DEFAULT-VALUE}).")
  int epochs;

  @Spec CommandSpec spec;

  @Override
  public Integer call() {
    OptionChecks.positive("--rows", rows);
    OptionChecks.positive("--dim", dim);
    OptionChecks.positive("--batch", batchSize);
    OptionChecks.positive("--epochs", epochs);
    PrintWriter out = spec.commandLine().getOut();
    RandomAccessDataset<Example> data = Datasets.synthetic(rows, dim, 42);
    Schema schema = ((HasSchema) data).schema();
    out.printf(Locale.ROOT, "sluice demo: synthetic dataset of %d rows %s%n", rows, schema);
    out.printf(Locale.ROOT, "pipeline: shuffle() -> batch(%d) by gather -> prefetch(4), %d epochs%n", batchSize, epochs);
    PipelineMetrics metrics = new PipelineMetrics("demo");
    Pipeline<Batch> pipeline = metrics.measure(Pipeline.from(data).shuffle().batch(batchSize).prefetch(4));
    PipelineContext ctx = PipelineContext.defaults().withSeed(42);

    AtomicLong examples = new AtomicLong();
    AtomicLong bytes = new AtomicLong();
    long started = System.nanoTime();
    for (int epoch = 0; epoch < epochs; epoch++) {
      long t0 = System.nanoTime();
      long before = examples.get();
      // one bar per epoch, erased before the epoch's line is printed
      try (Progress progress = Progress.start("demo epoch " + epoch, rows, "ex", System.err)) {
        pipeline.flux(ctx.withEpoch(epoch))
            .doOnNext(b -> {
              try (b) {
                examples.addAndGet(b.size());
                bytes.addAndGet(b.byteSize());
                progress.step(b.size());
              }
            })
            .blockLast();
      }
      double s = (System.nanoTime() - t0) / 1e9;
      out.printf(Locale.ROOT, "epoch %d: %d examples in %.3f s%n", epoch, examples.get() - before, s);
      out.flush();
    }
    double seconds = (System.nanoTime() - started) / 1e9;
    out.printf(Locale.ROOT, "%.0f examples/s, %.1f MB/s (%d examples, %d bytes, %.3f s)%n",
        examples.get() / seconds, bytes.get() / seconds / 1e6, examples.get(), bytes.get(), seconds);
    out.printf(Locale.ROOT, "off-heap bytes outstanding after the run: %d%n", MemoryManager.shared().outstandingBytes());
    out.println("stages:");
    metrics.print(out);
    return 0;
  }
}
