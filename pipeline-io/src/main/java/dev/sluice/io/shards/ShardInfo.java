package dev.sluice.io.shards;

import java.util.Objects;

/**
 * One shard of a shard set as {@code metadata.json} lists it.
 *
 * @param file the shard's file name, inside the shard set's directory
 * @param rows rows in the shard, &gt;= 0
 * @param bytes the file's size in bytes
 * @param checksum the shard checksum: {@code crc32c:} and 8 lowercase hex digits, the CRC32C the
 *     shard's footer ends with (it covers the CRC32C of every block)
 */
public record ShardInfo(String file, long rows, long bytes, String checksum) {
  /** A shard entry; throws {@link IllegalArgumentException} for a negative count. */
  public ShardInfo {
    Objects.requireNonNull(file, "file");
    Objects.requireNonNull(checksum, "checksum");
    if (rows < 0) {
      throw new IllegalArgumentException("rows >= 0 required but it was " + rows);
    }
    if (bytes < 0) {
      throw new IllegalArgumentException("bytes >= 0 required but it was " + bytes);
    }
  }
}
