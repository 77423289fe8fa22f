package dev.sluice.examples.cli;

import dev.sluice.core.Dataset;
import dev.sluice.core.Example;
import dev.sluice.io.DatasetFormat;
import dev.sluice.io.Formats;
import dev.sluice.io.WriteOptions;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicLong;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code sluice convert IN OUT --to npy|shards|parquet|arrow [--num-shards N] [--workers W] [--codec C] [--force]}:
 * reads IN in any readable format and writes it to OUT in a format that can write, rows in order.
 * Equal {@code sluice checksum}s of IN and OUT mean nothing was lost. OUT follows {@code generate}'s
 * rules: an existing dataset is replaced only with {@code --force}; a one-file format named into a
 * directory writes {@code OUT/part-0.<format>}.
 */
@Command(name = "convert", mixinStandardHelpOptions = true,
    description = "Convert a dataset to another format, rows in order (equal checksums before and after).")
final class ConvertCommand implements Callable<Integer> {
  @Parameters(index = "0", paramLabel = "IN", description = "A dataset file or directory, or a Hadoop FileSystem URI "
      + "(hdfs://…, s3a://…) read with positioned reads; - reads an Arrow IPC stream from standard input.")
  String in;

  @Parameters(index = "1", paramLabel = "OUT",
      description = "The dataset to write: a directory, or a file for a one-file format (OUT/ writes OUT/part-0.<format>); "
          + "a Hadoop FileSystem URI (hdfs://…, s3a://…) is written locally, then copied so that readers never see it "
          + "half-written (hdfs://: renamed into place; s3a://: no rename, a shard set's metadata.json last).")
  String out;

  @Option(names = "--to", required = true, paramLabel = "F", completionCandidates = DatasetRun.WritableFormatNames.class,
      description = "Output format: ${COMPLETION-CANDIDATES}.")
  String to;

  @Option(names = "--format", paramLabel = "F", completionCandidates = DatasetRun.FormatNames.class,
      description = "Format of IN (${COMPLETION-CANDIDATES}); default: recognized from its contents "
          + "(--format directory: one file per sample).")
  String format;

  @Option(names = "--num-shards", paramLabel = "N", defaultValue = "1",
      description = "Shards to write (--to shards; default: ${DEFAULT-VALUE}).")
  int numShards;

  @Option(names = "--workers", paramLabel = "W",
      description = "Shards written at once (--to shards; default: the number of cores, at most N).")
  Integer workers;

  @Option(names = "--codec", paramLabel = "C", description = "Compression codec: --to parquet: uncompressed, snappy, gzip, zstd, lz4_raw; --to arrow: none, lz4, zstd.")
  String codec;

  @Option(names = "--force", description = "Replace an existing dataset at OUT.")
  boolean force;

  @Mixin
  HadoopConfOptions hadoop = new HadoopConfOptions();

  @Spec CommandSpec spec;

  @Override
  public Integer call() throws IOException {
    OptionChecks.positive("--num-shards", numShards);
    int w = workers != null ? workers : Math.min(numShards, Runtime.getRuntime().availableProcessors());
    OptionChecks.positive("--workers", w);
    DatasetFormat target = Formats.named(to);
    if (!target.canWrite()) {
      throw new UnsupportedOperationException("format '" + target.name() + "' cannot write; formats that can: "
          + Formats.all().stream().filter(DatasetFormat::canWrite).map(DatasetFormat::name).toList());
    }
    hadoop.apply();
    URI remoteIn = DatasetRun.remote(in);
    Path inPath = remoteIn == null ? DatasetRun.localPath(in) : null;
    boolean stdin = inPath != null && DatasetRun.isStdin(inPath);
    if (inPath != null && !stdin && !Files.exists(inPath)) {
      throw new IllegalArgumentException(in + ": no such file or directory");
    }
    URI remoteOut = DatasetRun.remote(out);
    boolean remote = remoteOut != null;
    Path dataset = remote ? null : Path.of(out);
    if (inPath != null && !remote && !stdin && Files.exists(dataset) && Files.isSameFile(inPath, dataset)
        || remoteIn != null && remoteIn.normalize().equals(remoteOut == null ? null : remoteOut.normalize())) {
      throw new IllegalArgumentException(out + " is IN itself; write to another path");
    }
    String sourceName;
    Dataset<Example> data;
    if (remoteIn == null) {
      DatasetFormat source = DatasetRun.formatOf(inPath, format);
      sourceName = source.name();
      data = source.open(inPath);
    } else {
      sourceName = DatasetRun.formatName(in, format);
      data = DatasetRun.open(in, sourceName, List.of(), null);
    }
    try {
      if (!remote) {
        OutputPaths.check(dataset, force);
      }
      long total = DatasetRun.knownRows(data);
      AtomicLong written = new AtomicLong();
      String path;
      long t0 = System.nanoTime();
      try (Progress progress = Progress.start("convert", total, "rows", System.err)) {
        WriteOptions options = WriteOptions.defaults().withNumShards(numShards).withWorkers(w).withCodec(codec)
            .withProgress(n -> {
              written.addAndGet(n);
              progress.step(n);
            });
        path = OutputPaths.writeAnywhere(target, data, out, force, options);
      }
      double seconds = (System.nanoTime() - t0) / 1e9;
      long rows = total >= 0 ? total : written.get();
      String how = target.name().equals("shards")
          ? String.format(Locale.ROOT, " (%d shard%s, %d worker%s)", numShards, numShards == 1 ? "" : "s", w,
              w == 1 ? "" : "s")
          : "";
      spec.commandLine().getOut().printf(Locale.ROOT, "converted %d rows of %s (%s) to %s as %s%s in %.2f s%n",
          rows, in, sourceName, path, target.name(), how, seconds);
      spec.commandLine().getOut().flush();
      return 0;
    } finally {
      DatasetRun.close(data);
    }
  }
}
