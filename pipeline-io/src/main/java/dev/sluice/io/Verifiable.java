package dev.sluice.io;

/** A dataset whose files store checksums of their data, which {@link #verify()} checks in full. */
public interface Verifiable {
  /**
   * Reads every byte of the dataset and checks it against the stored checksums; opening the dataset
   * checks only what is cheap (headers and footers).
   *
   * @return what was checked
   * @throws dev.sluice.core.DatasetFormatException naming the file, the position and the expected
   *     versus the found checksum at the first mismatch
   */
  Verified verify();

  /**
   * What {@link #verify()} checked: {@code files} files (named {@code fileKind} in messages, such as
   * {@code "shard files"}) of {@code bytes} bytes in all, holding {@code blocks} blocks each checked
   * against its stored {@code checksum} (such as {@code "CRC32C"}).
   *
   * @param fileKind what the files are, plural
   * @param files the number of files
   * @param blocks the number of checksummed blocks
   * @param bytes the bytes of the files
   * @param checksum the name of the stored checksum
   */
  record Verified(String fileKind, int files, long blocks, long bytes, String checksum) {}
}
