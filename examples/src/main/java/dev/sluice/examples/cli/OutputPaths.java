package dev.sluice.examples.cli;

import dev.sluice.core.Dataset;
import dev.sluice.core.DatasetIOException;
import dev.sluice.core.Example;
import dev.sluice.core.internal.AtomicOutput;
import dev.sluice.io.DatasetFormat;
import dev.sluice.io.ExistingOutput;
import dev.sluice.io.Formats;
import dev.sluice.io.WriteOptions;
import dev.sluice.io.internal.RemoteFiles;
import java.io.File;
import java.io.IOException;
import java.net.URI;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

/**
 * Where a command that writes a dataset ({@code generate}, {@code convert}) puts it, and how it
 * treats one already there: the same rules for every such command. The dataset is written under a
 * temporary name beside it and renamed into place when complete; of two commands writing one
 * {@code OUT} without {@code --force}, exactly one succeeds.
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
   * Checks before writing that {@code dataset} may be written: absent or an empty directory, or,
   * with {@code force}, a file or a directory without subdirectories that holds a dataset Sluice
   * recognizes. Nothing is deleted here: the writer replaces the old dataset only once the new one
   * is complete.
   *
   * @throws IllegalArgumentException naming the path and what to do
   */
  static void check(Path dataset, boolean force) {
    if (!Files.exists(dataset, LinkOption.NOFOLLOW_LINKS) || isEmptyDirectory(dataset)) {
      return;
    }
    if (!force) {
      throw alreadyExists(dataset);
    }
    if (!Files.isDirectory(dataset)) {
      return;
    }
    List<Path> entries;
    try (Stream<Path> s = Files.list(dataset)) {
      entries = s.toList();
    } catch (IOException e) {
      throw new DatasetIOException(dataset.toString(), "cannot replace: " + AtomicOutput.reason(e), e);
    }
    if (entries.stream().anyMatch(Files::isDirectory) || !holdsDataset(dataset)) {
      throw new IllegalArgumentException(dataset + " is a directory that does not hold a dataset Sluice recognizes;"
          + " not replacing it even with --force (remove it yourself or choose another OUT)");
    }
  }

  /**
   * Writes {@code data} in {@code format} to {@code target} for the dataset {@code dataset} (the
   * same path, or the directory holding {@code target}): under a temporary name, renamed into place
   * when complete, so that a failure leaves nothing at {@code dataset}. Without {@code force} an
   * existing dataset is never replaced, also when another process completed it meanwhile; with it,
   * the old dataset is replaced, and the other files of a directory that {@code target} was written
   * into are deleted once {@code target} is in place.
   *
   * @throws IllegalArgumentException {@code "<dataset> already exists; ..."} when it exists without {@code force}
   */
  /**
   * Writes {@code data} to OUT, a local path or a remote URI: a remote OUT is written to a local
   * temporary directory first and then published with {@link RemoteFiles#publish} (renamed into
   * place where a rename is atomic; on an object store without a rename, a shard set's
   * {@code metadata.json} last).
   *
   * @return where the data went, for the command's summary line
   */
  static String writeAnywhere(DatasetFormat format, Dataset<Example> data, String out, boolean force,
      WriteOptions options) throws IOException {
    URI remote = DatasetRun.remote(out);
    if (remote == null) {
      Path target = target(format, out);
      write(format, data, Path.of(out), target, force, options);
      return target.toString();
    }
    Path staging = Files.createTempDirectory("sluice-out");
    try {
      Path dataset = staging.resolve(RemoteFiles.name(remote));
      Path target = target(format, dataset + (out.endsWith("/") ? "/" : ""));
      write(format, data, dataset, target, true, options);
      RemoteFiles.publish(dataset, remote, force);
      String inside = dataset.relativize(target).toString();
      return inside.isEmpty() ? out : out.replaceAll("/+$", "") + "/" + inside;
    } finally {
      try (Stream<Path> all = Files.walk(staging)) {
        all.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
    }
  }

  static void write(DatasetFormat format, Dataset<Example> data, Path dataset, Path target, boolean force,
      WriteOptions options) {
    check(dataset, force);
    boolean existed = Files.exists(dataset, LinkOption.NOFOLLOW_LINKS);
    try {
      format.write(data, target, options.withExisting(force ? ExistingOutput.REPLACE : ExistingOutput.FAIL));
    } catch (RuntimeException e) {
      if (!existed && !target.equals(dataset) && isEmptyDirectory(dataset)) {
        try {
          Files.deleteIfExists(dataset); // the directory the write created for target
        } catch (IOException ignored) {
          // best effort: the error of the write is the one to report
        }
      }
      if (e instanceof DatasetIOException && e.getCause() instanceof FileAlreadyExistsException) {
        IllegalArgumentException taken = alreadyExists(dataset);
        taken.initCause(e);
        throw taken;
      }
      throw e;
    }
    if (force && !target.equals(dataset) && Files.isDirectory(dataset)) {
      removeOthers(dataset, target);
    }
  }

  private static IllegalArgumentException alreadyExists(Path dataset) {
    return new IllegalArgumentException(dataset + " already exists; pass --force to replace it");
  }

  /** Deletes the files of the old dataset in {@code dir} beside {@code kept}. */
  private static void removeOthers(Path dir, Path kept) {
    try (Stream<Path> s = Files.list(dir)) {
      for (Path p : s.toList()) {
        if (!p.getFileName().equals(kept.getFileName()) && !AtomicOutput.isTemporary(p.getFileName().toString())
            && !Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS)) {
          Files.deleteIfExists(p);
        }
      }
    } catch (IOException e) {
      throw new DatasetIOException(dir.toString(), "wrote " + kept.getFileName() + " but cannot remove the files of"
          + " the dataset it replaces: " + AtomicOutput.reason(e), e);
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
