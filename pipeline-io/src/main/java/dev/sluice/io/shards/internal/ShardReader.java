package dev.sluice.io.shards.internal;

import dev.sluice.core.DatasetClosedException;
import dev.sluice.core.DatasetFormatException;
import dev.sluice.core.DatasetIOException;
import dev.sluice.core.Example;
import dev.sluice.core.Shape;
import dev.sluice.core.Tensor;
import dev.sluice.core.TensorSpec;
import dev.sluice.io.internal.MappedChunks;
import dev.sluice.io.internal.MappedReads;
import dev.sluice.io.internal.MappedRows;
import dev.sluice.io.shards.ShardInfo;
import dev.sluice.io.shards.internal.FieldLayout.Buffer;
import dev.sluice.io.shards.internal.FieldLayout.Kind;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.zip.CRC32C;

/**
 * One shard file, open: its frame checked against {@code metadata.json} and the fields' layouts on
 * open, every block mapped read-only in chunks on first use. Rows are zero-copy views of the
 * mapping; {@link #copyRows} gathers rows into a batch with bulk copies.
 */
final class ShardReader implements AutoCloseable {
  private static final ByteBuffer EMPTY = ByteBuffer.allocate(0);

  private final String resource;
  private final String name;
  private final FileChannel channel;
  private final ShardFile.Frame frame;
  private final long rows;
  private final ColumnReader[] columns;
  private volatile boolean closed;

  private ShardReader(String resource, String name, FileChannel channel, ShardFile.Frame frame,
      List<FieldLayout> layouts, long maxChunkBytes) {
    this.resource = resource;
    this.name = name;
    this.channel = channel;
    this.frame = frame;
    this.rows = frame.rows();
    this.columns = new ColumnReader[layouts.size()];
    for (int f = 0; f < columns.length; f++) {
      columns[f] = new ColumnReader(layouts.get(f), maxChunkBytes);
    }
  }

  /**
   * Opens shard {@code info} of the set in {@code dir} and checks its frame against {@code info}
   * and the layouts: length (truncated / extended), header and footer checksums, rows, shard
   * checksum, block count and every block length the rows determine, and the first and last offset
   * of every variable-length field.
   */
  static ShardReader open(Path dir, ShardInfo info, int number, int shardCount, List<FieldLayout> layouts,
      long maxChunkBytes) {
    Path path = dir.resolve(info.file());
    String resource = path.toString();
    FileChannel ch;
    try {
      ch = FileChannel.open(path, StandardOpenOption.READ);
    } catch (NoSuchFileException e) {
      throw new DatasetFormatException(resource, null, "missing: metadata.json lists it as shard " + number + " of "
          + shardCount, e);
    } catch (IOException e) {
      throw new DatasetIOException(resource, "cannot open: " + e, e);
    }
    try {
      long size = ch.size();
      if (size < info.bytes()) {
        throw new DatasetFormatException(resource, "byte " + size, "truncated: metadata.json says " + info.bytes()
            + " bytes but the file has " + size);
      }
      if (size > info.bytes()) {
        throw new DatasetFormatException(resource, "byte " + info.bytes(), "extended: metadata.json says "
            + info.bytes() + " bytes but the file has " + size + " (" + (size - info.bytes()) + " bytes more)");
      }
      ShardFile.Frame frame = ShardFile.read(resource, ch, size);
      String checksum = ShardFile.checksumText(frame.checksum());
      if (!checksum.equals(info.checksum())) {
        throw new DatasetFormatException(resource, "footer", "checksum mismatch (expected " + info.checksum()
            + " as metadata.json says, found " + checksum + ")");
      }
      if (frame.rows() != info.rows()) {
        throw new DatasetFormatException(resource, "footer", "holds " + frame.rows() + " rows but metadata.json says "
            + info.rows());
      }
      checkBlocks(resource, frame, layouts);
      ShardReader r = new ShardReader(resource, info.file(), ch, frame, layouts, maxChunkBytes);
      r.checkEnds();
      return r;
    } catch (IOException e) {
      closeQuietly(ch);
      throw new DatasetIOException(resource, "cannot read: " + e, e);
    } catch (RuntimeException | Error e) {
      closeQuietly(ch);
      if (e instanceof InternalError ie) {
        throw MappedReads.changedWhileMapped(resource, null, ie);
      }
      throw e;
    }
  }

  private static void checkBlocks(String resource, ShardFile.Frame frame, List<FieldLayout> layouts) {
    int expected = 0;
    for (FieldLayout l : layouts) {
      expected += l.blockCount();
    }
    if (frame.blocks().size() != expected) {
      throw new DatasetFormatException(resource, "footer", "holds " + frame.blocks().size() + " blocks but the "
          + layouts.size() + " fields of metadata.json need " + expected);
    }
    for (FieldLayout l : layouts) {
      for (Buffer b : l.buffers()) {
        ShardFile.Block block = frame.blocks().get(l.block(b));
        long known = l.knownLength(b, frame.rows());
        if (known >= 0 && block.length() != known) {
          throw new DatasetFormatException(resource, "block " + l.block(b), l.describe(b) + " holds " + block.length()
              + " bytes but " + frame.rows() + " rows of " + l.spec() + " need " + known
              + " (metadata.json disagrees with the shard)");
        }
        if (b == Buffer.VALUES && l.kind() != Kind.FIXED && block.length() % l.itemBytes() != 0) {
          throw new DatasetFormatException(resource, "block " + l.block(b), l.describe(b) + " holds " + block.length()
              + " bytes, not a whole number of " + l.itemBytes() + "-byte items of " + l.spec());
        }
      }
    }
  }

  /** The first offset of every variable-length field is 0 and the last one ends its values. */
  private void checkEnds() {
    for (ColumnReader c : columns) {
      if (c.offsets != null) {
        long first = c.offset(0);
        long last = c.offset(rows);
        if (first != 0 || last != c.items) {
          throw new DatasetFormatException(resource, c.layout.describe(Buffer.OFFSETS), "offsets run from " + first
              + " to " + last + " but must run from 0 to " + c.items + ", the " + (c.layout.kind() == Kind.BINARY
              ? "bytes" : "items") + " of its values block");
        }
      }
    }
    MappedReads.endRead();
  }

  private static void closeQuietly(FileChannel ch) {
    try {
      ch.close();
    } catch (IOException ignored) {
      // the open already failed; that error is the one to report
    }
  }

  String resource() {
    return resource;
  }

  String name() {
    return name;
  }

  long rows() {
    return rows;
  }

  void checkOpen() {
    if (closed) {
      throw new DatasetClosedException(resource);
    }
  }

  /** Puts the fields of row {@code row} (global index {@code index}) into {@code out}, as views of the mapping. */
  void putRow(long row, long index, Example.Builder out) {
    checkOpen();
    for (ColumnReader c : columns) {
      c.put(row, index, out);
    }
  }

  /** The reader of field {@code f}'s blocks. */
  ColumnReader column(int f) {
    return columns[f];
  }

  /**
   * Reads every byte of the shard: the CRC32C of every block against the block table, zero bytes
   * between blocks, every offset in order and inside its values, validity flags 0 or 1 and null rows
   * empty or zero.
   */
  void verify() {
    checkOpen();
    List<ShardFile.Block> blocks = frame.blocks();
    for (ColumnReader c : columns) {
      for (Buffer b : c.layout.buffers()) {
        int k = c.layout.block(b);
        ShardFile.Block block = blocks.get(k);
        int found = crc(block.offset(), block.length());
        if (found != block.crc()) {
          throw new DatasetFormatException(resource, c.layout.describe(b) + " (bytes " + block.offset() + ".."
              + block.end() + ")", "checksum mismatch (expected " + ShardFile.checksumText(block.crc()) + ", found "
              + ShardFile.checksumText(found) + ")");
        }
      }
      c.verifyRows();
    }
    List<ShardFile.Block> byOffset = new ArrayList<>(blocks);
    byOffset.sort(Comparator.comparingLong(ShardFile.Block::offset));
    long at = ShardFile.HEADER_BYTES;
    for (ShardFile.Block b : byOffset) {
      checkZeros(at, b.offset());
      at = Math.max(at, b.end());
    }
    checkZeros(at, frame.footerOffset());
    MappedReads.endRead();
  }

  private int crc(long offset, long length) {
    CRC32C crc = new CRC32C();
    if (length == 0) {
      return (int) crc.getValue();
    }
    MappedChunks m = new MappedChunks(resource, channel, offset, length, 1, 1 << 26);
    for (int k = 0; k < m.chunkCount(); k++) {
      crc.update(m.chunk(k).duplicate());
    }
    return (int) crc.getValue();
  }

  private void checkZeros(long from, long to) {
    if (to <= from) {
      return;
    }
    try {
      ByteBuffer gap = ShardFile.readAt(channel, from, Math.toIntExact(to - from));
      for (int i = 0; i < gap.limit(); i++) {
        if (gap.get(i) != 0) {
          throw new DatasetFormatException(resource, "byte " + (from + i), "the bytes between blocks must be zero but"
              + " byte " + (from + i) + " is " + (gap.get(i) & 0xff));
        }
      }
    } catch (IOException e) {
      throw new DatasetIOException(resource, "cannot read: " + e, e);
    }
  }

  /** Closes the file; mappings stay until the GC drops their last view. Idempotent. */
  @Override
  public void close() {
    closed = true;
    try {
      channel.close();
    } catch (IOException e) {
      throw new DatasetIOException(resource, "cannot close: " + e, e);
    }
  }

  /** The blocks of one field. */
  final class ColumnReader {
    final FieldLayout layout;
    final TensorSpec spec;
    final MappedRows fixed; // FIXED: the values
    final MappedChunks validity; // nullable fields, else null
    final MappedChunks offsets; // BINARY and LIST, else null
    final MappedChunks values; // BINARY and LIST (null when the block is empty), else null
    final long items; // BINARY and LIST: bytes or items of the values block
    final int itemBytes;
    final Shape itemShape; // LIST: the shape of one item

    ColumnReader(FieldLayout layout, long maxChunkBytes) {
      this.layout = layout;
      this.spec = layout.spec();
      this.itemBytes = layout.itemBytes();
      this.validity = spec.nullable() ? map(Buffer.VALIDITY, 1, maxChunkBytes) : null;
      if (layout.kind() == Kind.FIXED) {
        this.fixed = new MappedRows(resource, itemBytes == 0 ? null : map(Buffer.VALUES, itemBytes, maxChunkBytes),
            rows, itemBytes);
        this.offsets = null;
        this.values = null;
        this.items = 0;
        this.itemShape = null;
      } else {
        this.fixed = null;
        this.offsets = map(Buffer.OFFSETS, 8, maxChunkBytes);
        this.values = itemBytes == 0 ? null : map(Buffer.VALUES, itemBytes, maxChunkBytes);
        long length = frame.blocks().get(layout.block(Buffer.VALUES)).length();
        this.items = itemBytes == 0 ? 0 : length / itemBytes;
        this.itemShape = layout.kind() == Kind.LIST ? spec.shape().dropFirst() : null;
      }
    }

    private MappedChunks map(Buffer b, int unit, long maxChunkBytes) {
      ShardFile.Block block = frame.blocks().get(layout.block(b));
      if (block.length() == 0) {
        return null;
      }
      return new MappedChunks(resource, channel, block.offset(), block.length(), unit, maxChunkBytes);
    }

    long offset(long i) {
      long at = i << 3;
      ByteBuffer chunk = offsets.chunk(offsets.chunkIndex(at));
      return chunk.getLong(offsets.positionInChunk(at));
    }

    FieldLayout layout() {
      return layout;
    }

    /** The rows of a fixed-length field. */
    MappedRows fixed() {
      return fixed;
    }

    boolean nullable() {
      return validity != null;
    }

    /** The values block when it is mapped as one chunk, else null. */
    ByteBuffer singleValuesChunk() {
      return values != null && values.chunkCount() == 1 ? values.chunk(0) : null;
    }

    boolean isValid(long row) {
      ByteBuffer chunk = validity.chunk(validity.chunkIndex(row));
      return chunk.get(validity.positionInChunk(row)) != 0;
    }

    /** The item range {@code [out[0], out[1])} of row {@code row} (global index {@code index}), checked. */
    void range(long row, long index, long[] out) {
      long start = offset(row);
      long end = offset(row + 1);
      if (start > end) {
        throw new DatasetFormatException(resource, "field '" + spec.name() + "', record " + index + " (row " + row
            + " of " + name + ")", "offsets decrease: offset[" + row + "] = " + start + " > offset[" + (row + 1)
            + "] = " + end + "; a record's values must not overlap the next record's");
      }
      if (start < 0 || end > items) {
        throw new DatasetFormatException(resource, "field '" + spec.name() + "', record " + index + " (row " + row
            + " of " + name + ")", "offsets [" + start + ", " + end + ") point outside the values block of " + items
            + (layout.kind() == Kind.BINARY ? " bytes" : " items"));
      }
      out[0] = start;
      out[1] = end;
    }

    /** Bytes {@code [from, to)} of the values block: a view when they lie in one chunk, else a copy. */
    ByteBuffer bytes(long from, long to) {
      int n = Math.toIntExact(to - from);
      if (n == 0) {
        return EMPTY;
      }
      int k = values.chunkIndex(from);
      ByteBuffer chunk = values.chunk(k);
      int pos = values.positionInChunk(from);
      if (pos + n <= chunk.limit()) {
        MappedReads.consume(chunk.get(pos) + chunk.get(pos + n - 1));
        return chunk.slice(pos, n).order(ByteOrder.LITTLE_ENDIAN);
      }
      ByteBuffer copy = ByteBuffer.allocate(n).order(ByteOrder.LITTLE_ENDIAN);
      MappedRows.copyRange(values, from, n, copy, 0);
      return copy;
    }

    void put(long row, long index, Example.Builder out) {
      if (validity != null && !isValid(row)) {
        out.putNull(spec.name());
        return;
      }
      switch (layout.kind()) {
        case FIXED -> out.put(spec.name(), Tensor.wrap(spec.dtype(), spec.shape(), fixed.view(row)));
        case BINARY -> {
          long[] r = new long[2];
          range(row, index, r);
          out.put(spec.name(), Tensor.wrap(spec.dtype(), Shape.scalar(), bytes(r[0], r[1])));
        }
        case LIST -> {
          long[] r = new long[2];
          range(row, index, r);
          ByteBuffer b = bytes(r[0] * itemBytes, r[1] * itemBytes);
          out.put(spec.name(), Tensor.wrap(spec.dtype(), itemShape.prepend(r[1] - r[0]), b));
        }
      }
    }

    void verifyRows() {
      if (validity != null) {
        for (long r = 0; r < rows; r++) {
          ByteBuffer chunk = validity.chunk(validity.chunkIndex(r));
          byte v = chunk.get(validity.positionInChunk(r));
          if (v != 0 && v != 1) {
            throw new DatasetFormatException(resource, layout.describe(Buffer.VALIDITY) + ", row " + r,
                "a validity flag must be 0 or 1 but it is " + (v & 0xff));
          }
        }
      }
      if (offsets == null) {
        return;
      }
      long[] r = new long[2];
      for (long row = 0; row < rows; row++) {
        range(row, row, r);
        if (validity != null && r[1] != r[0] && !isValid(row)) {
          throw new DatasetFormatException(resource, "field '" + spec.name() + "', row " + row, "a null record must"
              + " be empty but holds " + (r[1] - r[0]) + (layout.kind() == Kind.BINARY ? " bytes" : " items"));
        }
      }
    }
  }
}
