package dev.sluice.examples.cli;

import dev.sluice.core.Datasets;
import dev.sluice.io.DatasetFormat;
import dev.sluice.io.Formats;
import dev.sluice.io.WriteOptions;
import java.nio.file.Path;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code sluice generate OUT --rows N --dim D [--format F] [--seed S]}: writes the seeded synthetic
 * dataset (fields {@code x} float32[D], {@code label} int64 = the row index) in any format of the
 * registry that can write. {@code --format npy} (the default) writes directory {@code OUT/} with
 * {@code x.npy} and {@code label.npy}.
 */
@Command(name = "generate", mixinStandardHelpOptions = true,
    description = "Write a seeded synthetic dataset: x float32[D], label int64 = row index.")
final class GenerateCommand implements Callable<Integer> {
  @Parameters(index = "0", paramLabel = "OUT", description = "Output file or directory.")
  Path out;

  @Option(names = "--rows", required = true, paramLabel = "N", description = "Rows to write.")
  long rows;

  @Option(names = "--dim", required = true, paramLabel = "D", description = "Floats per row of x.")
  int dim;

  @Option(names = "--format", defaultValue = "npy", paramLabel = "F",
      description = "npy, shards, parquet or arrow (default: ${DEFAULT-VALUE}).")
  String format;

  @Option(names = "--seed", defaultValue = "0", paramLabel = "S", description = "Seed of the values of x (default: ${DEFAULT-VALUE}).")
  long seed;

  @Option(names = "--row-group-size", defaultValue = "0", paramLabel = "BYTES",
      description = "Target row group size for formats that have row groups (default: the format's).")
  long rowGroupBytes;

  @Spec CommandSpec spec;

  @Override
  public Integer call() {
    if (rows < 0) {
      throw new IllegalArgumentException("--rows >= 0 required but it was " + rows);
    }
    if (dim <= 0) {
      throw new IllegalArgumentException("--dim > 0 required but it was " + dim);
    }
    if (rowGroupBytes < 0) {
      throw new IllegalArgumentException("--row-group-size >= 0 required but it was " + rowGroupBytes);
    }
    DatasetFormat f = Formats.named(format);
    if (!f.canWrite()) {
      throw new UnsupportedOperationException("format '" + f.name() + "' cannot write yet; writable formats: "
          + Formats.all().stream().filter(DatasetFormat::canWrite).map(DatasetFormat::name).toList());
    }
    f.write(Datasets.synthetic(rows, dim, seed), out, WriteOptions.defaults().withRowGroupBytes(rowGroupBytes));
    spec.commandLine().getOut().printf(Locale.ROOT, "wrote %d rows (x float32[%d], label int64) to %s as %s%n",
        rows, dim, out, f.name());
    spec.commandLine().getOut().flush();
    return 0;
  }
}
