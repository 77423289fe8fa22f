package dev.sluice.examples.cli;

import dev.sluice.core.DatasetIOException;
import dev.sluice.core.Datasets;
import dev.sluice.io.DatasetFormat;
import dev.sluice.io.Formats;
import dev.sluice.io.WriteOptions;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.stream.Stream;
import picocli.CommandLine.Command;
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
 */
@Command(name = "generate", mixinStandardHelpOptions = true,
    description = "Write a seeded synthetic dataset: x float32[D], label int64 = row index.")
final class GenerateCommand implements Callable<Integer> {
  @Parameters(index = "0", paramLabel = "OUT",
      description = "The dataset to write: a directory, or a file for a one-file format (OUT/ writes OUT/part-0.<format>).")
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

  @Option(names = "--row-group-size", defaultValue = "0", paramLabel = "BYTES",
      description = "Target row group size for formats that have row groups (default: the format's).")
  long rowGroupBytes;

  @Option(names = "--force", description = "Replace an existing dataset at OUT.")
  boolean force;

  @Spec CommandSpec spec;

  @Override
  public Integer call() {
    OptionChecks.nonNegative("--rows", rows);
    OptionChecks.positive("--dim", dim);
    OptionChecks.nonNegative("--row-group-size", rowGroupBytes);
    DatasetFormat f = Formats.named(format);
    if (!f.canWrite()) {
      throw new UnsupportedOperationException("format '" + f.name() + "' cannot write; formats that can: "
          + Formats.all().stream().filter(DatasetFormat::canWrite).map(DatasetFormat::name).toList());
    }
    Path dataset = Path.of(out);
    boolean namedDirectory = out.endsWith("/") || out.endsWith(File.separator) || Files.isDirectory(dataset);
    Path target = f.writesOneFile() && namedDirectory ? dataset.resolve("part-0." + f.name()) : dataset;
    makeRoom(dataset);
    f.write(Datasets.synthetic(rows, dim, seed), target, WriteOptions.defaults().withRowGroupBytes(rowGroupBytes));
    spec.commandLine().getOut().printf(Locale.ROOT, "wrote %d rows (x float32[%d], label int64) to %s as %s%n",
        rows, dim, target, f.name());
    spec.commandLine().getOut().flush();
    return 0;
  }

  /**
   * Leaves {@code dataset} absent or an empty directory: refuses an existing one without
   * {@code --force}, and with it deletes a file, or the files of a directory that holds a
   * recognized dataset and no subdirectory.
   */
  private void makeRoom(Path dataset) {
    if (!Files.exists(dataset) || isEmptyDirectory(dataset)) {
      return;
    }
    if (!force) {
      throw new IllegalArgumentException(dataset + " already exists; pass --force to replace it");
    }
    try {
      if (!Files.isDirectory(dataset)) {
        Files.delete(dataset);
        return;
      }
      List<Path> entries;
      try (Stream<Path> s = Files.list(dataset)) {
        entries = s.toList();
      }
      if (entries.stream().anyMatch(Files::isDirectory) || !holdsDataset(dataset)) {
        throw new IllegalArgumentException(dataset + " is a directory that does not hold a dataset Sluice recognizes;"
            + " not replacing it even with --force (remove it yourself or choose another OUT)");
      }
      for (Path p : entries) {
        Files.delete(p);
      }
    } catch (IOException e) {
      throw new DatasetIOException(dataset.toString(), "cannot replace: " + e.getMessage(), e);
    }
  }

  private static boolean isEmptyDirectory(Path p) {
    if (!Files.isDirectory(p)) {
      return false;
    }
    try (Stream<Path> s = Files.list(p)) {
      return s.findAny().isEmpty();
    } catch (IOException e) {
      return false;
    }
  }

  private static boolean holdsDataset(Path dir) {
    try {
      Formats.detect(dir);
      return true;
    } catch (RuntimeException e) {
      return false;
    }
  }
}
