package dev.sluice.examples.cli;

import dev.sluice.core.Datasets;
import dev.sluice.io.DatasetFormat;
import dev.sluice.io.Formats;
import dev.sluice.io.WriteOptions;
import java.nio.file.Path;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code sluice generate OUT --rows N --dim D [--format F] [--seed S] [--force]}: writes the seeded
 * synthetic dataset (fields {@code x} float32[D], {@code label} int64 = the row index) in any
 * registered format that can write.
 *
 * <p>{@code OUT} is the dataset: a directory for a format that writes several files ({@code npy}
 * writes {@code OUT/x.npy} and {@code OUT/label.npy}); for a one-file format, the file {@code OUT},
 * or {@code OUT/part-0.<format>} when {@code OUT} ends in {@code /} or is an existing directory. An
 * existing dataset is replaced only with {@code --force}, and then only when {@code OUT} is a file
 * or a directory of files that holds a dataset Sluice recognizes; an empty directory is used as is.
 * The dataset is written under a temporary name beside {@code OUT} and renamed into place when
 * complete: a failure leaves nothing at {@code OUT}.
 */
@Command(name = "generate", mixinStandardHelpOptions = true,
    description = "Write a seeded synthetic dataset: x float32[D], label int64 = row index.")
final class GenerateCommand implements Callable<Integer> {
  @Parameters(index = "0", paramLabel = "OUT",
      description = "The dataset to write: a directory, or a file for a one-file format (OUT/ writes OUT/part-0.<format>); "
          + "a Hadoop FileSystem URI (hdfs://…, s3a://…) is written locally, then copied so that readers never see it "
          + "half-written (hdfs://: renamed into place; s3a://: no rename, a shard set's metadata.json last).")
  String out;

  @Option(names = "--rows", required = true, paramLabel = "N", description = "Rows to write.")
  long rows;

  @Option(names = "--dim", required = true, paramLabel = "D", description = "Floats per row of x.")
  int dim;

  @Option(names = "--format", defaultValue = "npy", paramLabel = "F",
      completionCandidates = DatasetRun.WritableFormatNames.class,
      description = "Output format: ${COMPLETION-CANDIDATES} (default: ${DEFAULT-VALUE}).")
  String format;

  @Option(names = "--seed", defaultValue = "0", paramLabel = "S", description = "Seed of the values of x (default: ${DEFAULT-VALUE}).")
  long seed;

  @Option(names = "--row-group-size", paramLabel = "BYTES", converter = ByteSize.class,
      description = "Target row group size for formats that have row groups, e.g. 1m or 131072 (default: the format's).")
  long rowGroupBytes;

  @Option(names = "--force", description = "Replace an existing dataset at OUT.")
  boolean force;

  @Mixin
  HadoopConfOptions hadoop = new HadoopConfOptions();

  @Spec CommandSpec spec;

  @Override
  public Integer call() throws java.io.IOException {
    hadoop.apply();
    OptionChecks.nonNegative("--rows", rows);
    OptionChecks.positive("--dim", dim);
    OptionChecks.nonNegative("--row-group-size", rowGroupBytes);
    DatasetFormat f = Formats.named(format);
    if (!f.canWrite()) {
      throw new UnsupportedOperationException("format '" + f.name() + "' cannot write; formats that can: "
          + Formats.all().stream().filter(DatasetFormat::canWrite).map(DatasetFormat::name).toList());
    }
    String target;
    try (Progress progress = Progress.start("generate", rows, "rows", System.err)) {
      target = OutputPaths.writeAnywhere(f, Datasets.synthetic(rows, dim, seed), out, force,
          WriteOptions.defaults().withRowGroupBytes(rowGroupBytes).withProgress(progress::step));
    }
    spec.commandLine().getOut().printf(Locale.ROOT, "wrote %d rows (x float32[%d], label int64) to %s as %s%n",
        rows, dim, target, f.name());
    spec.commandLine().getOut().flush();
    return 0;
  }
}
