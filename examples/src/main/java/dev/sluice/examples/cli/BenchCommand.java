package dev.sluice.examples.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sluice.core.Batch;
import dev.sluice.core.Dataset;
import dev.sluice.core.Example;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.RandomAccessDataset;
import dev.sluice.core.SplitDataset;
import dev.sluice.operators.Pipeline;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code sluice bench}: records/s of {@code [take N ->] [shuffle ->] shard(1 of 1) -> batch B ->
 * prefetch P} over PATH: one warm-up epoch, then {@code --epochs} measured epochs, reporting the
 * median, minimum and maximum rate.
 */
@Command(name = "bench", mixinStandardHelpOptions = true,
    description = "Measure records/s and bytes/s of a batched pipeline over PATH (one warm-up epoch, then E measured).")
final class BenchCommand implements Callable<Integer> {
  @Parameters(index = "0", paramLabel = "PATH", description = "A dataset file or directory.")
  Path path;

  @Option(names = "--format", paramLabel = "F", completionCandidates = DatasetRun.FormatNames.class,
      description = "Format (${COMPLETION-CANDIDATES}); default: recognized from the contents.")
  String format;

  @Option(names = "--num-samples", paramLabel = "N", description = "Use only the first N samples; default: all.")
  Long numSamples;

  @Option(names = "--shuffle", description = "Shuffle as sluice read --shuffle does: a new order every epoch.")
  boolean shuffle;

  @Option(names = "--seed", paramLabel = "S", defaultValue = "0", description = "Seed (default: ${DEFAULT-VALUE}).")
  long seed;

  @Option(names = "--num-workers", paramLabel = "W", defaultValue = "1", description = "Gather (index path) or decode "
      + "(columnar path) threads (default: ${DEFAULT-VALUE}).")
  int numWorkers;

  @Option(names = "--batch", paramLabel = "B", defaultValue = "256", description = "Batch size (default: ${DEFAULT-VALUE}).")
  int batch;

  @Option(names = "--prefetch", paramLabel = "P", defaultValue = "4", description = "Batches produced ahead, 0 for none (default: ${DEFAULT-VALUE}).")
  int prefetch;

  @Option(names = "--epochs", paramLabel = "E", defaultValue = "5", description = "Measured epochs after one warm-up epoch (default: ${DEFAULT-VALUE}).")
  int epochs;

  @Option(names = "--memory-limit", paramLabel = "BYTES", converter = ByteSize.class,
      description = "Limit the pooled off-heap memory (batches, decode buffers) to BYTES, e.g. 64m or 1g: the "
          + "pipeline then waits for memory to come back instead of growing past it. Default: no limit.")
  Long memoryLimit;

  @Option(names = "--columns", split = ",", paramLabel = "a,b",
      description = "Read only these fields (default: all); the others are not read.")
  List<String> columns = List.of();

  @Option(names = "--json", description = "Print a JSON summary as the last line.")
  boolean json;

  @Spec CommandSpec spec;

  @Override
  public Integer call() {
    OptionChecks.positive("--epochs", epochs);
    if (numSamples != null) {
      OptionChecks.nonNegative("--num-samples", numSamples);
    }
    OptionChecks.positive("--batch", batch);
    OptionChecks.positive("--num-workers", numWorkers);
    OptionChecks.nonNegative("--prefetch", prefetch);
    PrintWriter out = spec.commandLine().getOut();
    return DatasetRun.withMemoryLimit(memoryLimit, () -> bench(out));
  }

  private int bench(PrintWriter out) {
    Dataset<Example> data = DatasetRun.open(path, format, columns);
    try {
      Pipeline<Example> p = Pipeline.from(data);
      if (numSamples != null) {
        p = p.take(numSamples);
      }
      if (shuffle) {
        // Global permutation on a random-access source, split-order shuffle plus a 10,000-row
        // window on a split source, a 10,000-element buffer on any other stream (as sluice read).
        p = data instanceof RandomAccessDataset || data instanceof SplitDataset
            ? p.shuffle()
            : p.shuffle(ReadCommand.STREAMING_SHUFFLE_BUFFER);
      }
      Pipeline<Batch> b = p.shard(1, 0).batch(batch, false, numWorkers);
      if (prefetch > 0) {
        b = b.prefetch(prefetch);
      }
      PipelineContext ctx = PipelineContext.defaults().withSeed(seed);
      long rows = DatasetRun.knownRows(data);
      long perEpoch = rows < 0 ? -1 : numSamples == null ? rows : Math.min(rows, numSamples);
      try (Progress progress = Progress.start("bench", perEpoch < 0 ? -1 : perEpoch * (epochs + 1L), "rec", System.err)) {
        return run(b, ctx, progress, out);
      }
    } finally {
      DatasetRun.close(data);
    }
  }

  /** The warm-up epoch, the measured epochs and the report. */
  private int run(Pipeline<Batch> b, PipelineContext ctx, Progress progress, PrintWriter out) {
    long[] warm = epoch(b, ctx, progress);
    if (!json) {
      out.printf(Locale.ROOT, "warm-up epoch: %d records in %.3f s%n", warm[0], warm[3] / 1e9);
    }
    double[] rates = new double[epochs];
    double[] byteRates = new double[epochs];
    long records = 0;
    long batches = 0;
    long bytes = 0;
    long nanos = 0;
    long cpu0 = processCpuNanos();
    for (int e = 0; e < epochs; e++) {
      long[] r = epoch(b, ctx.withEpoch(e + 1), progress);
      records += r[0];
      batches += r[1];
      bytes += r[2];
      nanos += r[3];
      double s = r[3] / 1e9;
      rates[e] = r[0] / s;
      byteRates[e] = r[2] / s;
      if (!json) {
        out.printf(Locale.ROOT, "epoch %d: %d records in %.3f s, %.0f records/s, %.1f MB/s%n", e + 1, r[0], s, rates[e], byteRates[e] / 1e6);
      }
    }
    long cpu = processCpuNanos() - cpu0;
    double medianRate = median(rates);
    double medianBytes = median(byteRates);
    double min = Arrays.stream(rates).min().orElse(0);
    double max = Arrays.stream(rates).max().orElse(0);
    if (json) {
      ObjectNode o = DatasetRun.object();
      o.put("examples", records);
      o.put("batches", batches);
      o.put("epochs", epochs);
      o.put("seconds", DatasetRun.decimal(nanos / 1e9));
      o.put("bytes", bytes);
      o.put("recordsPerSecond", DatasetRun.decimal(medianRate));
      o.put("bytesPerSecond", DatasetRun.decimal(medianBytes));
      o.put("recordsPerSecondMin", DatasetRun.decimal(min));
      o.put("recordsPerSecondMax", DatasetRun.decimal(max));
      o.put("cpuSeconds", DatasetRun.decimal(cpu / 1e9));
      o.put("cpuSecondsPerMillionRecords", DatasetRun.decimal(records == 0 ? 0 : cpu / 1e3 / records));
      out.println(DatasetRun.line(o));
    } else {
      out.printf(Locale.ROOT, "median %.0f records/s (min %.0f, max %.0f), %.1f MB/s over %d epochs; "
          + "process CPU %.3f s per million records%n", medianRate, min, max, medianBytes / 1e6, epochs,
          records == 0 ? 0.0 : cpu / 1e3 / records);
    }
    out.flush();
    return 0;
  }

  /** One epoch: records, batches, bytes, nanoseconds. */
  private static long[] epoch(Pipeline<Batch> pipeline, PipelineContext ctx, Progress progress) {
    long[] r = new long[4];
    long t0 = System.nanoTime();
    pipeline.flux(ctx).doOnNext(b -> {
      try (b) {
        r[0] += b.size();
        r[1]++;
        r[2] += b.byteSize();
        progress.step(b.size());
      }
    }).blockLast(); // the consumer runs on prefetch's thread; this one only waits
    r[3] = System.nanoTime() - t0;
    return r;
  }

  /** CPU time of the whole process (every thread), ns; -1 when the JVM does not tell. */
  static long processCpuNanos() {
    java.lang.management.OperatingSystemMXBean os = java.lang.management.ManagementFactory.getOperatingSystemMXBean();
    return os instanceof com.sun.management.OperatingSystemMXBean sun ? sun.getProcessCpuTime() : -1;
  }

  static double median(double[] values) {
    double[] v = values.clone();
    Arrays.sort(v);
    int n = v.length;
    return n == 0 ? 0 : n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  }
}
