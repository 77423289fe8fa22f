package dev.sluice.io.internal;

import dev.sluice.core.DatasetIOException;
import dev.sluice.core.internal.AtomicOutput;
import dev.sluice.io.ExistingOutput;
import dev.sluice.io.Formats;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;

/**
 * How the writers of this module put their output in place: written under a temporary name
 * ({@link AtomicOutput}) and committed under an {@link ExistingOutput} policy, with the same checks
 * and messages for every format.
 */
public final class Outputs {
  private Outputs() {}

  /**
   * A temporary file for the one-file output {@code out} (its directory created when missing),
   * after checking {@code existing}: under {@link ExistingOutput#FAIL} an existing {@code out} is
   * refused before anything is written.
   *
   * @throws DatasetIOException naming {@code out}
   */
  public static AtomicOutput file(Path out, ExistingOutput existing) {
    if (existing == ExistingOutput.FAIL && Files.exists(out, LinkOption.NOFOLLOW_LINKS)) {
      throw alreadyExists(out.toString(), null);
    }
    try {
      createParent(out);
      return AtomicOutput.file(out);
    } catch (IOException e) {
      throw new DatasetIOException(out.toString(), "cannot write: " + reason(e), e);
    }
  }

  /**
   * A temporary directory for the directory output {@code out} (its parent created when missing),
   * after checking {@code existing}: an empty directory at {@code out} is as good as none; under
   * {@link ExistingOutput#FAIL} anything else is refused, under {@link ExistingOutput#REPLACE} a
   * file or directory that is not a dataset Sluice recognizes, or a directory that holds a
   * subdirectory, is refused (the data of another program is never deleted).
   *
   * @throws DatasetIOException naming {@code out} when it exists under {@code FAIL} or cannot be written
   * @throws IllegalArgumentException when {@code out} is not a dataset that may be replaced
   */
  public static AtomicOutput directory(Path out, ExistingOutput existing) {
    if (Files.exists(out, LinkOption.NOFOLLOW_LINKS) && !isEmptyDirectory(out)) {
      if (existing == ExistingOutput.FAIL) {
        throw alreadyExists(out.toString(), null);
      }
      checkReplaceable(out);
    }
    try {
      createParent(out);
      return AtomicOutput.directory(out);
    } catch (IOException e) {
      throw new DatasetIOException(out.toString(), "cannot write: " + reason(e), e);
    }
  }

  /**
   * Renames the completed temporary into place under {@code existing}.
   *
   * @throws DatasetIOException naming {@code resource}, caused by a
   *     {@link FileAlreadyExistsException} when {@code FAIL} found the target taken
   */
  public static void commit(AtomicOutput out, ExistingOutput existing, String resource) {
    try {
      if (existing == ExistingOutput.FAIL) {
        out.commitNew();
      } else {
        out.commit();
      }
    } catch (FileAlreadyExistsException e) {
      throw alreadyExists(resource, e);
    } catch (IOException e) {
      throw new DatasetIOException(resource, "cannot write: " + reason(e), e);
    }
  }

  /** The failure of {@link ExistingOutput#FAIL}: {@code "<resource>: already exists"}. */
  public static DatasetIOException alreadyExists(String resource, Throwable cause) {
    FileAlreadyExistsException fae = cause instanceof FileAlreadyExistsException f ? f
        : new FileAlreadyExistsException(resource, null, "already exists");
    return new DatasetIOException(resource, "already exists", fae);
  }

  /** An I/O failure's reason without the temporary's name ({@link AtomicOutput#reason}). */
  public static String reason(IOException e) {
    return AtomicOutput.reason(e);
  }

  private static void checkReplaceable(Path path) {
    boolean directory = Files.isDirectory(path);
    boolean subdirectory = false;
    if (directory) {
      try (DirectoryStream<Path> s = Files.newDirectoryStream(path)) {
        for (Path p : s) {
          subdirectory |= Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS);
        }
      } catch (IOException e) {
        throw new DatasetIOException(path.toString(), "cannot list: " + reason(e), e);
      }
    }
    boolean dataset;
    try {
      Formats.detect(path);
      dataset = true;
    } catch (RuntimeException e) {
      dataset = false;
    }
    if (subdirectory || !dataset) {
      throw new IllegalArgumentException(path + (directory ? " is a directory that does not hold a dataset"
          : " is a file that is not a dataset") + " Sluice recognizes; not replacing it (remove it yourself or choose"
          + " another path)");
    }
  }

  private static void createParent(Path out) throws IOException {
    Path parent = out.toAbsolutePath().getParent();
    if (parent != null && !Files.isDirectory(parent)) {
      Files.createDirectories(parent);
    }
  }

  /** True for a directory with nothing in it. */
  public static boolean isEmptyDirectory(Path p) {
    if (!Files.isDirectory(p)) {
      return false;
    }
    try (DirectoryStream<Path> s = Files.newDirectoryStream(p)) {
      return !s.iterator().hasNext();
    } catch (IOException e) {
      return false;
    }
  }
}
