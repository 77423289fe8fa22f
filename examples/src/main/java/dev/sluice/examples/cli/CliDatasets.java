package dev.sluice.examples.cli;

import dev.sluice.core.Dataset;
import dev.sluice.core.Example;
import dev.sluice.io.DatasetFormat;
import dev.sluice.io.Formats;
import java.nio.file.Path;

/** Opening a {@code PATH} argument through the format registry, with an optional {@code --format}. */
final class CliDatasets {
  private CliDatasets() {}

  /** The format of {@code path}: {@code format} when given, else the registry's guess. */
  static DatasetFormat formatOf(Path path, String format) {
    return format == null ? Formats.detect(path) : Formats.named(format);
  }

  /** Closes {@code dataset} when it holds resources. */
  static void close(Dataset<Example> dataset) throws Exception {
    if (dataset instanceof AutoCloseable c) {
      c.close();
    }
  }
}
