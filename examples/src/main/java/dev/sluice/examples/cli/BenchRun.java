package dev.sluice.examples.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sluice.core.Batch;
import dev.sluice.core.Dataset;
import dev.sluice.core.Example;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.RandomAccessDataset;
import dev.sluice.core.SplitDataset;
import dev.sluice.examples.cli.BenchData.Access;
import dev.sluice.io.DatasetFormat;
import dev.sluice.io.Formats;
import dev.sluice.operators.Pipeline;
import java.io.PrintWriter;
import java.net.URI;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * One measurement of {@code sluice bench}: {@code [take N ->] [shuffle ->] shard(1 of 1) -> batch B
 * (W workers) -> prefetch P} over a dataset, {@code warmup} warm-up epochs, then {@code epochs}
 * measured ones.
 *
 * @param path the dataset
 * @param format its format
 * @param access how its files are read: a mapping, or positioned reads (for Parquet: each column chunk copied out)
 * @param numSamples only the first N records, or null for all
 * @param shuffle a new order every epoch (global permutation, or split order plus a window or buffer)
 * @param shuffleMode how a random-access source is shuffled (global permutation or block shuffle)
 * @param seed the seed of the shuffle
 * @param workers gather (index path) or decode (columnar path) threads, &ge; 1
 * @param batch records per batch, &ge; 1
 * @param prefetch batches produced ahead, &ge; 0
 * @param warmup warm-up epochs, not measured, &ge; 0
 * @param epochs measured epochs, &ge; 1
 * @param columns the fields read (empty: all)
 * @param remote the dataset's Hadoop URI ({@code hdfs://…}), read with positioned reads; null for a local path
 * @param remoteCache the node-local cache a remote dataset is read through ({@code --remote-cache}); null: none
 * @param caches the read cache and page cache budgets the pipeline asks for ({@code --read-cache}, {@code --page-cache})
 */
record BenchRun(Path path, DatasetFormat format, Access access, Long numSamples, boolean shuffle,
    dev.sluice.operators.RandomAccessShuffle shuffleMode, long seed,
    int workers, int batch, int prefetch, int warmup, int epochs, List<String> columns, URI remote,
    dev.sluice.io.RemoteCache remoteCache, ReadCacheOptions caches) {

  /**
   * The figures of a run.
   *
   * @param fixedLength whether every record has the same length (null when the dataset does not tell)
   * @param warmupNanos the warm-up epochs' wall time
   * @param records records over the measured epochs
   * @param batches batches over the measured epochs
   * @param bytes bytes of the batches over the measured epochs
   * @param nanos wall time of the measured epochs
   * @param rates records/s of each measured epoch
   * @param byteRates bytes/s of each measured epoch
   * @param cpuNanos the process's CPU time over the measured epochs, -1 when the JVM does not tell
   */
  record Result(BenchRun run, Boolean fixedLength, long warmupNanos, long records, long batches, long bytes,
      long nanos, double[] rates, double[] byteRates, long cpuNanos) {

    double recordsPerSecond() {
      return median(rates);
    }

    double bytesPerSecond() {
      return median(byteRates);
    }

    double min() {
      return Arrays.stream(rates).min().orElse(0);
    }

    double max() {
      return Arrays.stream(rates).max().orElse(0);
    }

    /** CPU ns of the whole process per record; 0 without records. */
    double cpuNanosPerRecord() {
      return records == 0 || cpuNanos < 0 ? 0 : (double) cpuNanos / records;
    }

    /**
     * The JSON object {@code bench --json} prints last: the command-line contract's fields, then
     * what was measured (format, access, record kind, shuffle, workers, batch).
     */
    ObjectNode json() {
      ObjectNode o = DatasetRun.object();
      o.put("examples", records);
      o.put("batches", batches);
      o.put("epochs", run.epochs);
      o.put("warmupEpochs", run.warmup);
      o.put("seconds", DatasetRun.decimal(nanos / 1e9));
      o.put("bytes", bytes);
      o.put("recordsPerSecond", DatasetRun.decimal(recordsPerSecond()));
      o.put("bytesPerSecond", DatasetRun.decimal(bytesPerSecond()));
      o.put("recordsPerSecondMin", DatasetRun.decimal(min()));
      o.put("recordsPerSecondMax", DatasetRun.decimal(max()));
      o.put("cpuSeconds", DatasetRun.decimal(cpuNanos < 0 ? 0 : cpuNanos / 1e9));
      o.put("cpuSecondsPerMillionRecords", DatasetRun.decimal(cpuNanosPerRecord() / 1e3));
      o.put("format", run.format.name());
      o.put("access", run.access.label);
      if (fixedLength == null) {
        o.putNull("fixedLength");
      } else {
        o.put("fixedLength", fixedLength);
      }
      o.put("shuffle", run.shuffle);
      o.put("workers", run.workers);
      o.put("batch", run.batch);
      return o;
    }
  }

  /**
   * Opens {@link #path} as {@link #format} with {@link #access}.
   *
   * @throws IllegalArgumentException when the format does not offer that access
   */
  Dataset<Example> open() {
    if (!BenchData.accessModes(format.name()).contains(access)) {
      throw BenchData.accessNotAChoice("--io " + access.label, format.name());
    }
    if (remote != null) {
      return Formats.openRemote(remote, format.name(), columns, remoteCache);
    }
    if (DatasetRun.isStdin(path) || !format.ioModes().contains(access.io)) {
      return format.open(path, columns);
    }
    return format.open(path, columns, access.io);
  }

  /**
   * Runs the benchmark; prints a line per epoch to {@code progress} unless it is null, and shows a
   * progress bar on stderr when {@code bar} is true and stderr is a terminal.
   */
  Result measure(PrintWriter progress, boolean bar) {
    Dataset<Example> data = open();
    try {
      long rows = DatasetRun.knownRows(data);
      long perEpoch = rows < 0 ? -1 : numSamples == null ? rows : Math.min(rows, numSamples);
      return measure(data, progress, bar ? perEpoch : NO_BAR);
    } finally {
      DatasetRun.close(data);
    }
  }

  /** {@code barTotal} of a run that shows no bar. */
  private static final long NO_BAR = Long.MIN_VALUE;

  /**
   * Runs warm-up and measured epochs; with {@code barTotal} other than {@link #NO_BAR}, each epoch
   * has a bar of its own (that many records, -1 when unknown), erased before its line is printed.
   */
  private Result measure(Dataset<Example> data, PrintWriter progress, long barTotal) {
    Pipeline<Example> p = caches.apply(Pipeline.from(data));
    if (numSamples != null) {
      p = p.take(numSamples);
    }
    if (shuffle) {
      // Global permutation on a random-access source, split-order shuffle plus a 10,000-row
      // window on a split source, a 10,000-element buffer on any other stream (as sluice read).
      p = data instanceof RandomAccessDataset ? p.shuffle(shuffleMode)
          : data instanceof SplitDataset ? p.shuffle()
          : p.shuffle(ReadCommand.STREAMING_SHUFFLE_BUFFER);
    }
    Pipeline<Batch> b = p.shard(1, 0).batch(batch, false, workers);
    if (prefetch > 0) {
      b = b.prefetch(prefetch);
    }
    PipelineContext ctx = PipelineContext.defaults().withSeed(seed);
    long warmNanos = 0;
    for (int w = 0; w < warmup; w++) { // epochs 0 .. warmup - 1, then the measured ones
      long[] warm = epoch(b, ctx.withEpoch(w), barTotal, "bench warm-up " + (w + 1) + "/" + warmup);
      warmNanos += warm[3];
      if (progress != null) {
        progress.printf(Locale.ROOT, "warm-up epoch%s: %d records in %.3f s%n",
            warmup == 1 ? "" : " " + (w + 1) + " of " + warmup, warm[0], warm[3] / 1e9);
        progress.flush();
      }
    }
    double[] rates = new double[epochs];
    double[] byteRates = new double[epochs];
    long records = 0;
    long batches = 0;
    long bytes = 0;
    long nanos = 0;
    long cpu0 = processCpuNanos();
    for (int e = 0; e < epochs; e++) {
      long[] r = epoch(b, ctx.withEpoch(warmup + e), barTotal, "bench epoch " + (e + 1) + "/" + epochs);
      records += r[0];
      batches += r[1];
      bytes += r[2];
      nanos += r[3];
      double s = r[3] / 1e9;
      rates[e] = r[0] / s;
      byteRates[e] = r[2] / s;
      if (progress != null) {
        progress.printf(Locale.ROOT, "epoch %d: %d records in %.3f s, %.0f records/s, %.1f MB/s%n", e + 1, r[0], s,
            rates[e], byteRates[e] / 1e6);
        progress.flush();
      }
    }
    long cpu1 = processCpuNanos();
    long cpu = cpu0 < 0 || cpu1 < 0 ? -1 : cpu1 - cpu0;
    return new Result(this, BenchData.fixedLength(data), warmNanos, records, batches, bytes, nanos, rates, byteRates, cpu);
  }

  /** One epoch: records, batches, bytes, nanoseconds; with a bar named {@code task} unless {@code barTotal} is {@link #NO_BAR}. */
  private static long[] epoch(Pipeline<Batch> pipeline, PipelineContext ctx, long barTotal, String task) {
    long[] r = new long[4];
    try (Progress bar = barTotal == NO_BAR ? Progress.none() : Progress.start(task, barTotal, "rec", System.err)) {
      long t0 = System.nanoTime();
      pipeline.flux(ctx).doOnNext(b -> {
        try (b) {
          r[0] += b.size();
          r[1]++;
          r[2] += b.byteSize();
          bar.step(b.size());
        }
      }).blockLast(); // the consumer runs on prefetch's thread; this one only waits
      r[3] = System.nanoTime() - t0;
    }
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
