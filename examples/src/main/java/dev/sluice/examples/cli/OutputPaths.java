package dev.sluice.examples.cli;

import dev.sluice.core.DatasetIOException;
import dev.sluice.io.DatasetFormat;
import dev.sluice.io.Formats;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

/**
 * Where a command that writes a dataset ({@code generate}, {@code convert}) puts it, and how it
 * treats one already there: the same rules for every such command.
 */
final class OutputPaths {
  private OutputPaths() {}

  /**
   * The path {@code format} writes to for {@code out}: {@code out} itself, or
   * {@code out/part-0.<format>} for a one-file format when {@code out} ends in {@code /} or is an
   * existing directory.
   */
  static Path target(DatasetFormat format, String out) {
    Path dataset = Path.of(out);
    boolean namedDirectory = out.endsWith("/") || out.endsWith(File.separator) || Files.isDirectory(dataset);
    return format.writesOneFile() && namedDirectory ? dataset.resolve("part-0." + format.name()) : dataset;
  }

  /**
   * Leaves {@code dataset} absent or an empty directory: refuses an existing one without
   * {@code force}, and with it deletes a file, or the files of a directory that holds a
   * recognized dataset and no subdirectory.
   *
   * @throws IllegalArgumentException naming the path and what to do
   */
  static void makeRoom(Path dataset, boolean force) {
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

  /** True for a directory with nothing in it. */
  static boolean isEmptyDirectory(Path p) {
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
