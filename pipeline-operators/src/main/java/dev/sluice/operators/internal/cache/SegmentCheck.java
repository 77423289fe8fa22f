package dev.sluice.operators.internal.cache;

import dev.sluice.core.DatasetFormatException;
import dev.sluice.core.internal.shardfile.ShardFile;
import dev.sluice.core.internal.shardfile.ShardFileReader;

/**
 * What the cache's index says of a published segment, checked when the segment is opened: a missing
 * file, a size other than the entry's ("truncated" or "extended"), a checksum other than the entry's
 * and a row count other than the block's are each a {@link DatasetFormatException} naming the file.
 */
final class SegmentCheck implements ShardFileReader.Expectations {
  private final IndexEntry entry;
  private final int rows;

  /**
   * @param entry the published entry of the segment
   * @param rows the rows of the segment's block
   */
  SegmentCheck(IndexEntry entry, int rows) {
    this.entry = entry;
    this.rows = rows;
  }

  @Override
  public RuntimeException missing(String resource, java.nio.file.NoSuchFileException e) {
    return new DatasetFormatException(resource, null, "missing: the cache's index publishes it", e);
  }

  @Override
  public void checkSize(String resource, long size) {
    if (size != entry.bytes()) {
      throw new DatasetFormatException(resource, "byte " + Math.min(size, entry.bytes()), (size < entry.bytes()
          ? "truncated" : "extended") + ": the cache's index says " + entry.bytes() + " bytes but the file has " + size);
    }
  }

  @Override
  public void checkFrame(String resource, ShardFile.Frame frame) {
    if (frame.checksum() != entry.checksum()) {
      throw new DatasetFormatException(resource, "footer", "checksum mismatch (expected "
          + ShardFile.checksumText(entry.checksum()) + " as the cache's index says, found "
          + ShardFile.checksumText(frame.checksum()) + ")");
    }
    if (frame.rows() != rows || entry.rows() != rows) {
      throw new DatasetFormatException(resource, "footer", "holds " + frame.rows() + " rows but its block has " + rows);
    }
  }

  @Override
  public String layoutSource() {
    return "the cache's schema";
  }
}
