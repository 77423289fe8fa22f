package dev.sluice.io;

/** A dataset whose files store checksums of their data, which {@link #verify()} checks in full. */
public interface Verifiable {
  /**
   * Reads every byte of the dataset and checks it against the stored checksums; opening the dataset
   * checks only what is cheap (headers and footers).
   *
   * @throws dev.sluice.core.DatasetFormatException naming the file, the position and the expected
   *     versus the found checksum at the first mismatch
   */
  void verify();
}
