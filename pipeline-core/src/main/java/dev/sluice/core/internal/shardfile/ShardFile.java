package dev.sluice.core.internal.shardfile;

import dev.sluice.core.DatasetFormatException;
import dev.sluice.core.UnsupportedFormatException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import dev.sluice.core.internal.mapped.PositionedReader;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.zip.CRC32C;

/**
 * The frame of one shard file: a 64-byte header, blocks at 64-byte aligned offsets, and a footer
 * (a block table and a 32-byte tail) at the end. All integers are little-endian.
 *
 * <pre>
 * header, bytes [0, 64):
 *   0  8  magic "SLUICESH"
 *   8  u32 format version (1)
 *  12  u32 block count B
 *  16  u64 rows
 *  24  u64 footer offset F = L - 24 B - 32, a multiple of 64
 *  32  u64 file length L
 *  40  20 zero bytes
 *  60  u32 CRC32C of bytes [0, 60)
 * blocks, each at a multiple of 64, in [64, F); every byte between blocks is zero
 * block table at F, B entries of 24 bytes: u64 offset, u64 length, u32 CRC32C of the block, u32 zero
 * tail, bytes [L - 32, L):
 *   0  u64 rows
 *   8  u64 file length L
 *  16  u32 block count B
 *  20  u32 format version (1)
 *  24  u32 footer checksum: CRC32C of bytes [F, L - 8)
 *  28  4  magic "SHRD"
 * </pre>
 */
public final class ShardFile {
  public static final int VERSION = 1;
  public static final int HEADER_BYTES = 64;
  public static final int ALIGNMENT = 64;
  public static final int BLOCK_ENTRY_BYTES = 24;
  public static final int TAIL_BYTES = 32;
  public static final byte[] MAGIC = "SLUICESH".getBytes(StandardCharsets.US_ASCII);
  public static final byte[] TAIL_MAGIC = "SHRD".getBytes(StandardCharsets.US_ASCII);
  /** The smallest shard: a header and a footer with no blocks. */
  public static final long MIN_BYTES = HEADER_BYTES + TAIL_BYTES;

  private ShardFile() {}

  /** One block: where it is, how long, and the CRC32C of its bytes. */
  public record Block(long offset, long length, int crc) {
    public long end() {
      return offset + length;
    }
  }

  /** What the header and the footer of a shard say, both checked. */
  public record Frame(long rows, long length, long footerOffset, List<Block> blocks, int checksum) {}

  /**
   * A completed shard file.
   *
   * @param file its file name
   * @param rows rows it holds
   * @param bytes its length in bytes
   * @param checksum the checksum its footer ends with (it covers the CRC32C of every block)
   */
  public record Summary(String file, long rows, long bytes, int checksum) {}

  /** {@code x} rounded up to a multiple of {@link #ALIGNMENT}. */
  public static long align(long x) {
    return (x + ALIGNMENT - 1) & -ALIGNMENT;
  }

  /** A shard checksum as text (as a shard set's {@code metadata.json} lists it): {@code crc32c:} and 8 lowercase hex digits. */
  public static String checksumText(int crc) {
    return String.format(Locale.ROOT, "crc32c:%08x", crc);
  }

  /** The footer offset of a file of {@code blocks} blocks whose last block ends at {@code dataEnd}. */
  public static long footerOffset(long dataEnd) {
    return align(Math.max(dataEnd, HEADER_BYTES));
  }

  /** The header bytes. */
  public static ByteBuffer header(long rows, int blockCount, long footerOffset, long length) {
    ByteBuffer h = ByteBuffer.allocate(HEADER_BYTES).order(ByteOrder.LITTLE_ENDIAN);
    h.put(MAGIC).putInt(VERSION).putInt(blockCount).putLong(rows).putLong(footerOffset).putLong(length);
    CRC32C crc = new CRC32C();
    crc.update(h.array(), 0, 60);
    h.putInt(60, (int) crc.getValue());
    return h.clear();
  }

  /** The footer bytes (block table and tail); its checksum is {@link #footerChecksum}. */
  public static ByteBuffer footer(long rows, long length, List<Block> blocks) {
    int n = blocks.size();
    ByteBuffer f = ByteBuffer.allocate(n * BLOCK_ENTRY_BYTES + TAIL_BYTES).order(ByteOrder.LITTLE_ENDIAN);
    for (Block b : blocks) {
      f.putLong(b.offset()).putLong(b.length()).putInt(b.crc()).putInt(0);
    }
    f.putLong(rows).putLong(length).putInt(n).putInt(VERSION);
    CRC32C crc = new CRC32C();
    crc.update(f.array(), 0, f.position());
    f.putInt((int) crc.getValue()).put(TAIL_MAGIC);
    return f.clear();
  }

  /** The checksum a footer made by {@link #footer} carries. */
  public static int footerChecksum(ByteBuffer footer) {
    return footer.getInt(footer.limit() - 8);
  }

  /**
   * Reads and checks the header and footer of a shard: magic, version, both checksums, the length
   * the file claims against its size ("truncated" / "extended"), and the block table (aligned,
   * inside the data region, in order, not overlapping).
   *
   * @param resource the file, for messages
   * @param size the file's size in bytes
   */
  public static Frame read(String resource, FileChannel ch, long size) throws IOException {
    return read(resource, (PositionedReader) ch::read, size);
  }

  /** {@link #read(String, FileChannel, long)} through any positioned reader (a local channel, a remote file). */
  public static Frame read(String resource, PositionedReader ch, long size) throws IOException {
    if (size < HEADER_BYTES) {
      throw new DatasetFormatException(resource, "byte " + size,
          "truncated: " + size + " bytes, shorter than the " + HEADER_BYTES + "-byte shard header");
    }
    ByteBuffer h = readAt(ch, 0, HEADER_BYTES);
    byte[] magic = new byte[MAGIC.length];
    h.get(0, magic);
    if (!java.util.Arrays.equals(magic, MAGIC)) {
      throw new DatasetFormatException(resource, "byte 0", "not a Sluice shard: expected magic \"SLUICESH\" but found "
          + hex(magic));
    }
    CRC32C crc = new CRC32C();
    crc.update(h.array(), 0, 60);
    int expectedHeader = h.getInt(60);
    if ((int) crc.getValue() != expectedHeader) {
      throw new DatasetFormatException(resource, "header", "header checksum mismatch (expected "
          + checksumText(expectedHeader) + ", found " + checksumText((int) crc.getValue()) + ")");
    }
    int version = h.getInt(8);
    if (version != VERSION) {
      throw new UnsupportedFormatException(resource, "header", "shard format version " + version
          + " is not supported (this version of Sluice reads version " + VERSION + ")");
    }
    int blockCount = h.getInt(12);
    long rows = h.getLong(16);
    long footerOffset = h.getLong(24);
    long length = h.getLong(32);
    if (length < size) {
      throw new DatasetFormatException(resource, "byte " + length, "extended: the header says " + length
          + " bytes but the file has " + size + " (" + (size - length) + " bytes after the footer)");
    }
    if (length > size) {
      throw new DatasetFormatException(resource, "byte " + size, "truncated: the header says " + length
          + " bytes but the file has " + size);
    }
    if (blockCount < 0 || rows < 0 || footerOffset % ALIGNMENT != 0 || footerOffset < HEADER_BYTES
        || footerOffset != length - (long) blockCount * BLOCK_ENTRY_BYTES - TAIL_BYTES) {
      throw new DatasetFormatException(resource, "header", "inconsistent header: " + blockCount + " blocks, "
          + rows + " rows, footer at byte " + footerOffset + " of " + length);
    }
    if (length - footerOffset > Integer.MAX_VALUE) {
      throw new UnsupportedFormatException(resource, "header", "a block table of " + blockCount + " blocks ("
          + (length - footerOffset) + " bytes with the tail) is more than one read can hold (" + Integer.MAX_VALUE
          + " bytes)");
    }
    ByteBuffer f = readAt(ch, footerOffset, (int) (length - footerOffset));
    int tail = f.limit() - TAIL_BYTES;
    byte[] tailMagic = new byte[TAIL_MAGIC.length];
    f.get(f.limit() - 4, tailMagic);
    if (!java.util.Arrays.equals(tailMagic, TAIL_MAGIC)) {
      throw new DatasetFormatException(resource, "byte " + (length - 4), "no shard footer: expected magic \"SHRD\" "
          + "at the end but found " + hex(tailMagic));
    }
    crc.reset();
    crc.update(f.array(), 0, f.limit() - 8);
    int checksum = f.getInt(f.limit() - 8);
    if ((int) crc.getValue() != checksum) {
      throw new DatasetFormatException(resource, "footer", "footer checksum mismatch (expected "
          + checksumText(checksum) + ", found " + checksumText((int) crc.getValue()) + ")");
    }
    if (f.getLong(tail) != rows || f.getLong(tail + 8) != length || f.getInt(tail + 16) != blockCount
        || f.getInt(tail + 20) != version) {
      throw new DatasetFormatException(resource, "footer", "the footer says " + f.getLong(tail) + " rows, "
          + f.getLong(tail + 8) + " bytes, " + f.getInt(tail + 16) + " blocks, version " + f.getInt(tail + 20)
          + " but the header says " + rows + " rows, " + length + " bytes, " + blockCount + " blocks, version " + version);
    }
    List<Block> blocks = new ArrayList<>(blockCount);
    long previousEnd = HEADER_BYTES;
    for (int i = 0; i < blockCount; i++) {
      int at = i * BLOCK_ENTRY_BYTES;
      Block b = new Block(f.getLong(at), f.getLong(at + 8), f.getInt(at + 16));
      blocks.add(b);
      if (b.offset() % ALIGNMENT != 0 || b.offset() < HEADER_BYTES || b.length() < 0
          || b.offset() > footerOffset || b.length() > footerOffset - b.offset()) {
        throw new DatasetFormatException(resource, "block " + i, "block of " + b.length() + " bytes at byte "
            + b.offset() + " is not a 64-byte aligned range inside the data region [64, " + footerOffset + ")");
      }
    }
    List<Block> byOffset = new ArrayList<>(blocks);
    byOffset.sort(java.util.Comparator.comparingLong(Block::offset));
    for (Block b : byOffset) {
      if (b.offset() < previousEnd) {
        throw new DatasetFormatException(resource, "block " + blocks.indexOf(b), "block [" + b.offset() + ", "
            + b.end() + ") overlaps the block before it, which ends at byte " + previousEnd);
      }
      previousEnd = b.end();
    }
    return new Frame(rows, length, footerOffset, List.copyOf(blocks), checksum);
  }

  /** {@code length} bytes at {@code position}, read fully (little-endian, position 0). */
  public static ByteBuffer readAt(FileChannel ch, long position, int length) throws IOException {
    return readAt((PositionedReader) ch::read, position, length);
  }

  /** {@link #readAt(FileChannel, long, int)} through any positioned reader. */
  public static ByteBuffer readAt(PositionedReader ch, long position, int length) throws IOException {
    ByteBuffer b = ByteBuffer.allocate(length).order(ByteOrder.LITTLE_ENDIAN);
    while (b.hasRemaining()) {
      int n = ch.read(b, position + b.position());
      if (n < 0) {
        throw new java.io.EOFException("end of file at byte " + (position + b.position()));
      }
    }
    return b.clear();
  }

  private static String hex(byte[] b) {
    StringBuilder sb = new StringBuilder();
    for (byte x : b) {
      sb.append(String.format(Locale.ROOT, "%02x", x & 0xff));
    }
    return sb.toString();
  }
}
