package dev.sluice.io;

/**
 * What a writer does when its output path already holds something. Either way the output is
 * written under a temporary name beside the path and renamed into place only when complete, so a
 * failed or killed write never leaves part of a dataset at the path.
 */
public enum ExistingOutput {
  /**
   * Replace it: a file atomically; a directory (a dataset of several files) by renaming the old one
   * aside, the new one into place, then deleting the old one. A writer refuses to replace a
   * directory that does not hold a dataset Sluice recognizes (or holds a subdirectory).
   */
  REPLACE,

  /**
   * Fail with a {@link dev.sluice.core.DatasetIOException} caused by a
   * {@link java.nio.file.FileAlreadyExistsException} when the path exists (an empty directory
   * counts as absent for a directory output), also when another writer completed it in the
   * meantime: of several writers of one path exactly one wins.
   */
  FAIL
}
