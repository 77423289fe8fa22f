package dev.sluice.core.internal.shardfile;

import dev.sluice.core.DatasetClosedException;
import dev.sluice.core.DatasetFormatException;
import dev.sluice.core.DatasetIOException;
import dev.sluice.core.Example;
import dev.sluice.core.IoMode;
import dev.sluice.core.internal.mapped.MappedChunks;
import dev.sluice.core.internal.mapped.MappedReads;
import dev.sluice.core.internal.mapped.PositionedReader;
import dev.sluice.core.internal.shardfile.FieldLayout.Buffer;
import dev.sluice.core.internal.shardfile.FieldLayout.Kind;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.zip.CRC32C;

/**
 * One shard file, open: its frame checked against what the opener expects and the fields' layouts
 * on open, every block mapped read-only in chunks on first use. Rows are zero-copy views of the
 * mapping; {@link ShardRows} gathers rows of one or several shard files into a batch with bulk
 * copies.
 *
 * <p>No row of a field is delivered before the CRC32C of each of that field's blocks has been
 * checked against the block table: the first read of a field (from any thread) checks its blocks
 * once and the reader remembers the result, so later reads pay one volatile load per field. A
 * mismatch is a {@link DatasetFormatException} naming the file, the block (number, buffer, byte
 * range) and the expected and found checksums, and every later read of the field fails the same way.
 */
public final class ShardFileReader implements AutoCloseable {
  private final String resource;
  private final String name;
  private final FileChannel channel; // null for a file opened through a PositionedReader
  private final PositionedReader reader;
  private final AutoCloseable file;
  private final IoMode mode;
  private final ShardFile.Frame frame;
  private final long rows;
  private final ShardColumnReader[] columns;
  private volatile boolean closed;

  /**
   * What the opener of a shard file knows about it beforehand (a shard set's {@code metadata.json},
   * a cache's index entry): each check throws a {@link DatasetFormatException} naming the file when
   * the shard disagrees.
   */
  public interface Expectations {
    /** The error for a file that does not exist. */
    default RuntimeException missing(String resource, NoSuchFileException e) {
      return new DatasetIOException(resource, "no such file", e);
    }

    /** Checks the file's size in bytes, before its frame is read. */
    default void checkSize(String resource, long size) {}

    /** Checks the frame (rows, checksum) once it is read and found consistent. */
    default void checkFrame(String resource, ShardFile.Frame frame) {}

    /** Where the fields' layouts come from, for messages ({@code "metadata.json"}). */
    default String layoutSource() {
      return "the schema";
    }
  }

  private ShardFileReader(String resource, String name, FileChannel channel, PositionedReader reader,
      AutoCloseable file, ShardFile.Frame frame, List<FieldLayout> layouts, long maxChunkBytes, IoMode mode) {
    this.mode = mode;
    this.resource = resource;
    this.name = name;
    this.channel = channel;
    this.reader = reader;
    this.file = file;
    this.frame = frame;
    this.rows = frame.rows();
    this.columns = new ShardColumnReader[layouts.size()];
    for (int f = 0; f < columns.length; f++) {
      columns[f] = new ShardColumnReader(this, layouts.get(f), maxChunkBytes);
    }
  }

  /**
   * Opens the shard file {@code path} and checks its frame against {@code expected} and the layouts:
   * length (truncated / extended), header and footer checksums, block count and every block length
   * the rows determine, and, level by level, the first and last offset of every variable-length
   * field against the blocks below.
   *
   * @param maxChunkBytes the largest single mapping, in [1, {@link Integer#MAX_VALUE}]
   */
  public static ShardFileReader open(Path path, List<FieldLayout> layouts, long maxChunkBytes, Expectations expected) {
    return open(path, layouts, maxChunkBytes, expected, IoMode.MMAP);
  }

  /**
   * {@link #open(Path, List, long, Expectations)} with the blocks read in {@code mode}: mapped, or
   * with positioned reads ({@link IoMode#READ}).
   */
  public static ShardFileReader open(Path path, List<FieldLayout> layouts, long maxChunkBytes, Expectations expected,
      IoMode mode) {
    String resource = path.toString();
    FileChannel ch;
    try {
      ch = FileChannel.open(path, StandardOpenOption.READ);
    } catch (NoSuchFileException e) {
      throw expected.missing(resource, e);
    } catch (IOException e) {
      throw new DatasetIOException(resource, "cannot open: " + e, e);
    }
    try {
      long size = ch.size();
      expected.checkSize(resource, size);
      ShardFile.Frame frame = ShardFile.read(resource, ch, size);
      expected.checkFrame(resource, frame);
      checkBlocks(resource, frame, layouts, expected.layoutSource());
      return MappedReads.call(resource, null,
          () -> new ShardFileReader(resource, path.getFileName().toString(), ch, ch::read, ch, frame, layouts,
              maxChunkBytes, mode));
    } catch (IOException e) {
      closeQuietly(ch);
      throw new DatasetIOException(resource, "cannot read: " + e, e);
    } catch (RuntimeException | Error e) {
      closeQuietly(ch);
      throw e;
    }
  }

  /**
   * Opens a shard file read with positioned reads through {@code reader} (a remote file): the same
   * checks as {@link #open(Path, List, long, Expectations)}, the blocks read as
   * {@link IoMode#READ} does. The reader owns {@code file} and closes it on {@link #close()}, and
   * when the open fails.
   *
   * @param resource the file or URI, for messages
   * @param name the file's name
   * @param size the file's length in bytes
   */
  public static ShardFileReader open(String resource, String name, PositionedReader reader, long size,
      AutoCloseable file, List<FieldLayout> layouts, long maxChunkBytes, Expectations expected) {
    try {
      expected.checkSize(resource, size);
      ShardFile.Frame frame = ShardFile.read(resource, reader, size);
      expected.checkFrame(resource, frame);
      checkBlocks(resource, frame, layouts, expected.layoutSource());
      return new ShardFileReader(resource, name, null, reader, file, frame, layouts, maxChunkBytes, IoMode.READ);
    } catch (IOException e) {
      closeQuietly(file);
      throw new DatasetIOException(resource, "cannot read: " + e.getMessage(), e);
    } catch (RuntimeException | Error e) {
      closeQuietly(file);
      throw e;
    }
  }

  private static void checkBlocks(String resource, ShardFile.Frame frame, List<FieldLayout> layouts, String source) {
    int expected = 0;
    for (FieldLayout l : layouts) {
      expected += l.blockCount();
    }
    if (frame.blocks().size() != expected) {
      throw new DatasetFormatException(resource, "footer", "holds " + frame.blocks().size() + " blocks but the "
          + layouts.size() + " fields of " + source + " need " + expected);
    }
    for (FieldLayout l : layouts) {
      for (Buffer b : l.buffers()) {
        ShardFile.Block block = frame.blocks().get(l.block(b));
        long known;
        try {
          known = l.knownLength(b, frame.rows());
        } catch (ArithmeticException e) {
          throw new DatasetFormatException(resource, "header", "rows " + frame.rows() + " of " + l.spec() + " need a "
              + l.describe(b) + " block of more bytes than a file can hold");
        }
        if (known >= 0 && block.length() != known) {
          throw new DatasetFormatException(resource, "block " + l.block(b), l.describe(b) + " holds " + block.length()
              + " bytes but " + frame.rows() + " rows of " + l.spec() + " need " + known
              + " (" + source + " disagrees with the shard)");
        }
        if (b.equals(Buffer.VALUES) && l.kind() != Kind.FIXED
            && (l.itemBytes() == 0 ? block.length() != 0 : block.length() % l.itemBytes() != 0)) {
          throw new DatasetFormatException(resource, "block " + l.block(b), l.describe(b) + " holds " + block.length()
              + " bytes, not a whole number of " + l.itemBytes() + "-byte items of " + l.spec());
        }
      }
    }
  }

  private static void closeQuietly(AutoCloseable ch) {
    try {
      ch.close();
    } catch (Exception ignored) {
      // the open already failed; that error is the one to report
    }
  }

  /** The file, for messages. */
  public String resource() {
    return resource;
  }

  /** The file's name. */
  public String name() {
    return name;
  }

  /** Rows in the shard. */
  public long rows() {
    return rows;
  }

  /** The open file. */
  IoMode mode() {
    return mode;
  }

  /** The open channel; null for a file opened through a {@link PositionedReader}. */
  FileChannel channel() {
    return channel;
  }

  PositionedReader reader() {
    return reader;
  }

  /** The frame read on open. */
  public ShardFile.Frame frame() {
    return frame;
  }

  /** @throws DatasetClosedException once {@link #close()} was called */
  public void checkOpen() {
    if (closed) {
      throw new DatasetClosedException(resource);
    }
  }

  /** Puts the fields of row {@code row} (global index {@code index}) into {@code out}, as views of the mapping. */
  public void putRow(long row, long index, Example.Builder out) {
    checkOpen();
    for (ShardColumnReader c : columns) {
      c.checkVerified();
      c.put(row, index, out);
    }
  }

  /** The reader of field {@code f}'s blocks. */
  ShardColumnReader column(int f) {
    return columns[f];
  }

  /** The number of blocks the file's block table lists, each with its CRC32C. */
  public int blockCount() {
    return frame.blocks().size();
  }

  /** The file's length in bytes. */
  public long fileBytes() {
    return frame.length();
  }

  /**
   * Reads every byte of the shard: the CRC32C of every block against the block table, zero bytes
   * between blocks, every offset in order and inside its values, validity flags 0 or 1 and null rows
   * empty or zero.
   *
   * @throws DatasetFormatException naming what does not match, or "changed while mapped" when the
   *     file shrinks under its mapping during the check
   */
  public void verify() {
    checkOpen();
    MappedReads.run(resource, null, () -> {
      List<ShardFile.Block> blocks = frame.blocks();
      for (ShardColumnReader c : columns) {
        c.verifyBlocks(true);
        c.verifyLevels();
      }
      List<ShardFile.Block> byOffset = new ArrayList<>(blocks);
      byOffset.sort(Comparator.comparingLong(ShardFile.Block::offset));
      long at = ShardFile.HEADER_BYTES;
      for (ShardFile.Block b : byOffset) {
        checkZeros(at, b.offset());
        at = Math.max(at, b.end());
      }
      checkZeros(at, frame.footerOffset());
    });
  }

  /**
   * The CRC32C of a block ({@code null}: an empty one). The bytes go through a heap buffer, mapped
   * or not: a copy out of a mapping whose file shrank faults as an {@link InternalError} that the
   * read boundary ({@code MappedReads}) reports as "changed while mapped", where the checksum's
   * native loop run over the mapping itself would bring the JVM down.
   */
  static int crc(MappedChunks m) {
    CRC32C crc = new CRC32C();
    if (m != null) {
      ByteBuffer piece = ByteBuffer.allocate((int) Math.min(m.length(), 1 << 20));
      for (long at = 0; at < m.length(); at += piece.capacity()) {
        int n = (int) Math.min(piece.capacity(), m.length() - at);
        m.copyTo(at, n, piece, 0);
        crc.update(piece.duplicate().limit(n));
      }
    }
    return (int) crc.getValue();
  }

  private void checkZeros(long from, long to) {
    if (to <= from) {
      return;
    }
    try {
      for (long at = from; at < to; ) {
        int n = (int) Math.min(to - at, 1 << 20);
        ByteBuffer gap = ShardFile.readAt(reader, at, n);
        for (int i = 0; i < n; i++) {
          if (gap.get(i) != 0) {
            throw new DatasetFormatException(resource, "byte " + (at + i), "the bytes between blocks must be zero but"
                + " byte " + (at + i) + " is " + (gap.get(i) & 0xff));
          }
        }
        at += n;
      }
    } catch (IOException e) {
      throw new DatasetIOException(resource, "cannot read: " + e, e);
    }
  }

  /**
   * Maps every block now and closes the file, leaving the reader open: rows stay readable from the
   * mappings (released by the GC once the reader and its views are gone), and the process holds no
   * file descriptor for it. {@link #verify()} needs the file: call it before.
   *
   * @throws IllegalStateException when the reader was opened with {@link IoMode#READ}
   */
  public void detach() {
    checkOpen();
    if (mode == IoMode.READ) {
      throw new IllegalStateException(resource + ": a shard read with positioned reads needs its file; only a mapped"
          + " one can be detached");
    }
    MappedReads.run(resource, null, () -> {
      for (ShardColumnReader c : columns) {
        c.mapAll();
      }
    });
    try {
      channel.close();
    } catch (IOException e) {
      throw new DatasetIOException(resource, "cannot close: " + e, e);
    }
  }

  /** Closes the file; mappings stay until the GC drops their last view. Idempotent. */
  @Override
  public void close() {
    closed = true;
    try {
      file.close();
    } catch (RuntimeException e) {
      throw e;
    } catch (Exception e) {
      throw new DatasetIOException(resource, "cannot close: " + e, e);
    }
  }
}
