package dev.sluice.core.internal;

import dev.sluice.core.DatasetIOException;
import dev.sluice.core.Schema;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.concurrent.TimeUnit;

/** The parts sources build their {@link dev.sluice.core.spi.Fingerprinted#fingerprint()} from. */
public final class Fingerprints {
  private Fingerprints() {}

  /**
   * One line naming {@code file} with its absolute path, size in bytes and modification time in
   * nanoseconds: a rewrite, a touch or a truncation changes it.
   *
   * @throws DatasetIOException when the file cannot be read
   */
  public static String file(Path file) {
    try {
      BasicFileAttributes a = Files.readAttributes(file, BasicFileAttributes.class);
      return "file " + file.toAbsolutePath().normalize() + " " + a.size() + " "
          + a.lastModifiedTime().to(TimeUnit.NANOSECONDS) + "\n";
    } catch (IOException e) {
      throw new DatasetIOException(file.toString(), "cannot read its size and modification time: " + e, e);
    }
  }

  /** The lines of {@link #file} for every file, in order. */
  public static String files(Iterable<Path> files) {
    StringBuilder sb = new StringBuilder();
    for (Path f : files) {
      sb.append(file(f));
    }
    return sb.toString();
  }

  /** One line naming every field of {@code schema} (name, dtype, shape, nullability), in order. */
  public static String schema(Schema schema) {
    return "schema " + schema + "\n";
  }
}
