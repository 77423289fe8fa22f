package dev.sluice.io.npy;

import dev.sluice.core.Dataset;
import dev.sluice.core.Example;
import dev.sluice.core.IoMode;
import dev.sluice.io.DatasetFormat;
import dev.sluice.io.WriteOptions;
import dev.sluice.io.npy.internal.NpyLayout;
import dev.sluice.io.npy.internal.NpyWriter;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;

/**
 * The {@code npy} entry of the format registry. Probe: a file starting with {@code \x93NUMPY}; a
 * directory of numbered {@code 0.npy … k.npy} (an npy stack; {@code metadata.json} optional) or of
 * named {@code .npy} arrays (aligned fields). A directory without {@code .npy} files is not npy, so
 * a Sluice shard set (which also holds a {@code metadata.json}) is left to its own format.
 */
public final class NpyFormat implements DatasetFormat {
  @Override
  public String name() {
    return "npy";
  }

  @Override
  public boolean probe(Path path) throws IOException {
    return NpyLayout.of(path) != null;
  }

  /** A regular file named {@code *.npy}, or a directory holding one. */
  @Override
  public boolean claimsByName(Path path) {
    if (Files.isRegularFile(path)) {
      return path.getFileName() != null && path.getFileName().toString().endsWith(".npy");
    }
    try {
      return Files.isDirectory(path) && !NpyLayout.npyFiles(path).isEmpty();
    } catch (RuntimeException e) {
      return false;
    }
  }

  @Override
  public Dataset<Example> open(Path path) {
    return Npy.open(path);
  }

  @Override
  public boolean canWrite() {
    return true;
  }

  /** One {@code .npy} per field in directory {@code out}; of the options the progress listener and the existing-output policy apply. */
  @Override
  public void write(Dataset<Example> dataset, Path out, WriteOptions options) {
    NpyWriter.write(dataset, out, options.existing(), options.progress());
  }

  @Override
  public Set<IoMode> ioModes() {
    return Set.of(IoMode.MMAP, IoMode.READ);
  }

  @Override
  public Dataset<Example> open(Path path, List<String> columns, IoMode io) {
    Dataset<Example> ds = Npy.open(path, io);
    return columns.isEmpty() ? ds : dev.sluice.io.internal.Projection.of(ds, columns);
  }
}
