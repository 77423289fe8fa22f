package dev.sluice.io.directory;

import dev.sluice.core.Dataset;
import dev.sluice.core.Example;
import dev.sluice.io.DatasetFormat;
import java.nio.file.Path;

/**
 * The {@code directory} entry of the format registry: a directory of one file per sample
 * ({@link Directory}). Its probe recognizes nothing, since any directory of files would qualify and
 * the formats with their own layout must win; name it with {@code --format directory}.
 */
public final class DirectoryFormat implements DatasetFormat {
  @Override
  public String name() {
    return "directory";
  }

  @Override
  public boolean probe(Path path) {
    return false;
  }

  @Override
  public Dataset<Example> open(Path path) {
    return Directory.open(path);
  }
}
