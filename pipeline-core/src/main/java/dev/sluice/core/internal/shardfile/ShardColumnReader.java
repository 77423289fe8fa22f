package dev.sluice.core.internal.shardfile;

import dev.sluice.core.DatasetFormatException;
import dev.sluice.core.Example;
import dev.sluice.core.IoMode;
import dev.sluice.core.Shape;
import dev.sluice.core.Tensor;
import dev.sluice.core.TensorSpec;
import dev.sluice.core.UnsupportedFormatException;
import dev.sluice.core.internal.mapped.MappedChunks;
import dev.sluice.core.internal.mapped.MappedReads;
import dev.sluice.core.internal.mapped.MappedRows;
import dev.sluice.core.internal.shardfile.FieldLayout.Buffer;
import dev.sluice.core.internal.shardfile.FieldLayout.Kind;
import dev.sluice.core.spi.ColumnBuilder;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import dev.sluice.core.internal.mapped.PositionedReader;
import java.nio.channels.FileChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.CRC32C;

/** The blocks of one field, each level checked against the next when opened. */
final class ShardColumnReader {
  private static final ByteBuffer EMPTY = ByteBuffer.allocate(0);

  private final String resource;
  private final FileChannel channel; // null for a file read through a PositionedReader only
  private final PositionedReader reader;
  private final IoMode mode;
  private final ShardFile.Frame frame;
  private final long rows;
  private final String name;
  private final FieldLayout layout;
  private final TensorSpec spec;
  private final int ragged;
  private final int levels; // offsets buffers: ragged + (string leaf ? 1 : 0)
  private final int itemBytes;
  private final MappedRows fixed; // FIXED: the values
  private final MappedChunks[] validity; // per depth; null where items are never null
  private final MappedChunks[] offsets; // per level
  private final MappedChunks values; // the innermost values of other kinds (null when the block is empty)
  private final long[] counts; // items per depth 0 .. ragged
  private final long valueUnits; // bytes (string leaf) or items in the values block
  private final Shape itemShape;
  private final List<MappedChunks> regions = new ArrayList<>(); // every block mapped, for mapAll
  private final MappedChunks[] blocks; // per buffer of the layout; null for an empty block
  private volatile boolean verified; // every block's CRC32C matched the block table
  private String mismatchAt; // the block whose CRC32C did not match, once found (guarded by this)
  private String mismatch; // expected versus found for it

  ShardColumnReader(ShardFileReader file, FieldLayout layout, long maxChunkBytes) {
    this.resource = file.resource();
    this.channel = file.channel();
    this.reader = file.reader();
    this.mode = file.mode();
    this.frame = file.frame();
    this.rows = file.rows();
    this.name = file.name();
    this.layout = layout;
    this.blocks = new MappedChunks[layout.blockCount()];
    this.spec = layout.spec();
    this.ragged = layout.ragged();
    this.levels = ragged + (layout.binaryLeaf() ? 1 : 0);
    this.itemBytes = layout.itemBytes();
    this.itemShape = spec.itemShape();
    this.validity = new MappedChunks[ragged + 1];
    this.offsets = new MappedChunks[levels];
    this.counts = new long[ragged + 1];
    counts[0] = rows;
    if (layout.kind() == Kind.FIXED) {
      this.validity[0] = spec.nullable() ? map(Buffer.VALIDITY, 1, maxChunkBytes) : null;
      this.fixed = new MappedRows(resource, itemBytes == 0 ? null : map(Buffer.VALUES, itemBytes, maxChunkBytes),
          rows, itemBytes);
      this.values = null;
      this.valueUnits = 0;
      return;
    }
    this.fixed = null;
    long valuesLength = frame.blocks().get(layout.block(Buffer.VALUES)).length();
    this.values = itemBytes == 0 ? null : map(Buffer.VALUES, itemBytes, maxChunkBytes);
    this.valueUnits = itemBytes == 0 ? 0 : valuesLength / itemBytes;
    for (int d = 0; d <= ragged; d++) {
      if (spec.nullableAt(d)) {
        Buffer v = new Buffer(FieldLayout.Role.VALIDITY, d);
        checkLength(v, counts[d], 0, 1);
        validity[d] = map(v, 1, maxChunkBytes);
      }
      if (d < levels) {
        Buffer o = new Buffer(FieldLayout.Role.OFFSETS, d);
        checkLength(o, counts[d], 1, 8);
        offsets[d] = map(o, 8, maxChunkBytes);
        long first = offset(d, 0);
        long last = offset(d, counts[d]);
        long limit = d + 1 < counts.length ? -1 : valueUnits;
        if (first != 0 || last < 0 || limit >= 0 && last != limit) {
          checkBlock(layout.buffers().indexOf(o)); // changed bytes are reported as such
          throw new DatasetFormatException(resource, layout.describe(o), "offsets run from " + first + " to " + last
              + " but must run from 0 to " + (limit >= 0 ? limit + ", the " + (layout.binaryLeaf() ? "bytes" : "items")
              + " of its values block" : "a count >= 0"));
        }
        if (d + 1 < counts.length) {
          counts[d + 1] = last;
        }
      }
    }
    if (!layout.binaryLeaf() && counts[ragged] != valueUnits) {
      throw new DatasetFormatException(resource, layout.describe(Buffer.VALUES), "holds " + valueUnits + " items but"
          + " the offsets above it count " + counts[ragged]);
    }
  }

  /**
   * Checks a block whose length the level above determines: {@code count + extra} values of
   * {@code unit} bytes (computed without overflow: {@code count} comes from the file).
   */
  private void checkLength(Buffer b, long count, int extra, int unit) {
    long length = frame.blocks().get(layout.block(b)).length();
    if (length % unit != 0 || length / unit - extra != count) {
      throw new DatasetFormatException(resource, layout.describe(b), "holds " + length + " bytes but the level above"
          + " it needs " + BigInteger.valueOf(count).add(BigInteger.valueOf(extra)).multiply(BigInteger.valueOf(unit)));
    }
  }

  private MappedChunks map(Buffer b, int unit, long maxChunkBytes) {
    ShardFile.Block block = frame.blocks().get(layout.block(b));
    if (block.length() == 0) {
      return null;
    }
    MappedChunks m = channel == null
        ? MappedChunks.positioned(resource, reader, block.offset(), block.length(), unit, maxChunkBytes)
        : MappedChunks.of(mode, resource, channel, block.offset(), block.length(), unit, maxChunkBytes);
    regions.add(m);
    blocks[layout.buffers().indexOf(b)] = m;
    return m;
  }

  /**
   * Checks the CRC32C of every block of the field against the block table once; afterwards a
   * volatile load. Call before delivering any row of the field.
   *
   * @return true when the field was not known to be checked on entry (this call checked it, or
   *     waited for another thread that did)
   * @throws DatasetFormatException naming the block whose bytes do not match, now and on every later call
   */
  boolean checkVerified() {
    if (!verified) {
      verifyBlocks(false);
      return true;
    }
    return false;
  }

  /** Whether every block of the field has been checked and matched. */
  boolean verified() {
    return verified;
  }

  /** Checks every block's CRC32C ({@code again}: even when it was checked before). */
  synchronized void verifyBlocks(boolean again) {
    if (verified && !again) {
      return;
    }
    if (mismatch != null && !again) {
      throw new DatasetFormatException(resource, mismatchAt, mismatch);
    }
    for (int i = 0; i < blocks.length; i++) {
      checkBlock(i);
    }
    mismatchAt = null;
    mismatch = null;
    verified = true;
  }

  /** Checks the CRC32C of the field's block {@code i} (its position in the layout's buffers). */
  private synchronized void checkBlock(int i) {
    Buffer b = layout.buffers().get(i);
    int k = layout.block(b);
    ShardFile.Block block = frame.blocks().get(k);
    int found = ShardFileReader.crc(blocks[i]);
    if (found != block.crc()) {
      verified = false;
      mismatchAt = "block " + k + " (" + layout.describe(b) + ", bytes " + block.offset() + ".." + block.end() + ")";
      mismatch = "checksum mismatch (expected " + ShardFile.checksumText(block.crc()) + ", found "
          + ShardFile.checksumText(found) + ")";
      throw new DatasetFormatException(resource, mismatchAt, mismatch);
    }
  }

  /** Maps every chunk of every block of the field now. */
  void mapAll() {
    for (MappedChunks m : regions) {
      for (int k = 0; k < m.chunkCount(); k++) {
        m.chunk(k);
      }
    }
  }

  FieldLayout layout() {
    return layout;
  }

  /** The rows of a fixed-length field. */
  MappedRows fixed() {
    return fixed;
  }

  boolean nullable() {
    return validity[0] != null;
  }

  /** The values block when it is mapped as one chunk, else null. */
  ByteBuffer singleValuesChunk() {
    return values != null && values.isMapped() && values.chunkCount() == 1 ? values.chunk(0) : null;
  }

  private long offset(int depth, long i) {
    MappedChunks m = offsets[depth];
    long at = i << 3;
    return m.chunk(m.chunkIndex(at)).getLong(m.positionInChunk(at));
  }

  /** Whether item {@code i} at {@code depth} holds a value. */
  boolean isValid(int depth, long i) {
    MappedChunks m = validity[depth];
    return m == null || m.chunk(m.chunkIndex(i)).get(m.positionInChunk(i)) != 0;
  }

  boolean isValid(long row) {
    return isValid(0, row);
  }

  /** Units below {@code depth}'s offsets: the items one depth down, or the bytes of the strings. */
  private long limit(int depth) {
    return depth < ragged ? counts[depth + 1] : valueUnits;
  }

  /**
   * The range {@code [out[0], out[1])} one level below item {@code i} at {@code depth} (its list
   * elements, or its bytes), checked against the level below; {@code index} is the row's global
   * index, for messages.
   */
  void range(int depth, long i, long index, long[] out) {
    long start = offset(depth, i);
    long end = offset(depth, i + 1);
    checkRange(depth, i, index, start, end);
    out[0] = start;
    out[1] = end;
  }

  private void checkRange(int depth, long i, long index, long start, long end) {
    if (start > end) {
      throw new DatasetFormatException(resource, where(depth, i, index), "offsets decrease: offset[" + i + "] = "
          + start + " > offset[" + (i + 1) + "] = " + end + "; a record's values must not overlap the next record's");
    }
    if (start < 0 || end > limit(depth)) {
      throw new DatasetFormatException(resource, where(depth, i, index), "offsets [" + start + ", " + end + ") point"
          + " outside the " + (depth < levels - 1 ? "level below, of " + limit(depth) + " items"
          : "values block of " + limit(depth) + (layout.binaryLeaf() ? " bytes" : " items")));
    }
  }

  private String where(int depth, long i, long index) {
    return "field '" + spec.name() + "', record " + index + (depth == 0 ? " (row " + i + " of " + name + ")"
        : " (item " + i + " at depth " + depth + " of " + name + ")");
  }

  /** The item range of row {@code row} (global index {@code index}), checked. */
  void range(long row, long index, long[] out) {
    range(0, row, index, out);
  }

  /**
   * {@code n} as an int when one value (a tensor) can hold {@code n} {@code units} of
   * {@code unitBytes} each: at most {@link Integer#MAX_VALUE} bytes.
   */
  private int oneValue(long n, int unitBytes, String units) {
    long limit = Integer.MAX_VALUE / Math.max(1, unitBytes);
    if (n > limit) {
      throw new UnsupportedFormatException(resource, "field '" + spec.name() + "'", "a value of " + n + " " + units
          + " is more than one value can hold (" + limit + ")");
    }
    return (int) n;
  }

  /** Bytes {@code [from, to)} of {@code m}: a view when they lie in one chunk, else a copy. */
  private ByteBuffer slice(MappedChunks m, long from, long to) {
    int n = oneValue(to - from, 1, "bytes");
    if (n == 0) {
      return EMPTY;
    }
    if (!m.isMapped()) {
      ByteBuffer copy = ByteBuffer.allocate(n).order(ByteOrder.LITTLE_ENDIAN);
      m.copyTo(from, n, copy, 0);
      return copy;
    }
    int k = m.chunkIndex(from);
    ByteBuffer chunk = m.chunk(k);
    int pos = m.positionInChunk(from);
    if (pos + n <= chunk.limit()) {
      MappedReads.consume(chunk.get(pos) + chunk.get(pos + n - 1));
      return chunk.slice(pos, n).order(ByteOrder.LITTLE_ENDIAN);
    }
    ByteBuffer copy = ByteBuffer.allocate(n).order(ByteOrder.LITTLE_ENDIAN);
    MappedRows.copyRange(m, from, n, copy, 0);
    return copy;
  }

  /** Bytes {@code [from, to)} of the values block: a view when they lie in one chunk, else a copy. */
  ByteBuffer bytes(long from, long to) {
    return slice(values, from, to);
  }

  void put(long row, long index, Example.Builder out) {
    if (!isValid(0, row)) {
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
      case NESTED -> out.put(spec.name(), nested(row, index));
    }
  }

  /**
   * Row {@code row} of a nested field as a ragged tensor: its values (and validity) are views of
   * the mapping, its offsets copies rebased to start at 0.
   */
  private Tensor nested(long row, long index) {
    long[] r = new long[2];
    range(0, row, index, r);
    long a = r[0];
    long b = r[1];
    long[] dims = new long[spec.shape().rank()];
    dims[0] = b - a;
    for (int d = 1; d < ragged; d++) {
      dims[d] = -1;
    }
    long[] item = itemShape.dims();
    System.arraycopy(item, 0, dims, ragged, item.length);
    List<ByteBuffer> off = new ArrayList<>(levels - 1);
    List<ByteBuffer> valid = new ArrayList<>(ragged);
    boolean anyValidity = false;
    for (int d = 1; d <= ragged; d++) {
      ByteBuffer v = validity[d] == null ? null : slice(validity[d], a, b);
      valid.add(v);
      anyValidity |= v != null;
      if (d < levels) {
        ByteBuffer o = ByteBuffer.allocate(oneValue(b - a + 1, 8, "offsets") * 8).order(ByteOrder.LITTLE_ENDIAN);
        long first = offset(d, a);
        long previous = first;
        for (long i = a; i < b; i++) {
          long end = offset(d, i + 1);
          checkRange(d, i, index, previous, end);
          o.putLong((int) (i - a + 1) * 8, end - first);
          previous = end;
        }
        if (a == b) {
          checkRange(d, a, index, first, first);
        }
        off.add(o);
        a = first;
        b = previous;
      }
    }
    ByteBuffer data = layout.binaryLeaf() ? bytes(a, b) : bytes(a * itemBytes, b * itemBytes);
    return Tensor.wrapRagged(spec.dtype(), Shape.of(dims), data, off, anyValidity ? valid : List.of());
  }

  /**
   * The bytes of the innermost values under row {@code row}: {@code out[0]}, {@code out[1]} the
   * byte range in the values block (ranges checked on the way down).
   */
  void leafBytes(long row, long index, long[] out) {
    long[] r = new long[2];
    range(0, row, index, r);
    long a = r[0];
    long b = r[1];
    for (int d = 1; d < levels; d++) {
      long first = offset(d, a);
      long last = offset(d, b);
      checkRange(d, a, index, first, last);
      a = first;
      b = last;
    }
    long unit = layout.binaryLeaf() ? 1 : itemBytes;
    out[0] = a * unit;
    out[1] = b * unit;
  }

  /**
   * Appends row {@code row} (global index {@code index}, a valid row) to {@code target}, level by
   * level: lists started, null elements added as nulls, runs of fixed-width items copied in bulk.
   */
  void appendNested(long row, long index, ColumnBuilder target) {
    appendItem(0, row, index, target, new long[2]);
  }

  private void appendItem(int depth, long i, long index, ColumnBuilder target, long[] r) {
    if (depth == ragged) {
      if (layout.binaryLeaf()) {
        range(depth, i, index, r);
        ByteBuffer b = bytes(r[0], r[1]);
        target.addBytes(b, b.position(), b.remaining());
      } else {
        int at = target.reserveValues(1);
        MappedRows.copyRange(values, i * itemBytes, itemBytes, target.valueBuffer(), at);
      }
      return;
    }
    target.startList(depth);
    range(depth, i, index, r);
    long a = r[0];
    long b = r[1];
    int child = depth + 1;
    if (child == ragged && !layout.binaryLeaf() && validity[child] == null) {
      int at = target.reserveValues(oneValue(b - a, itemBytes, "items"));
      if (b > a) {
        MappedRows.copyRange(values, a * itemBytes, (b - a) * itemBytes, target.valueBuffer(), at);
      }
      return;
    }
    for (long j = a; j < b; j++) {
      if (isValid(child, j)) {
        appendItem(child, j, index, target, r);
      } else {
        target.addNull(child);
      }
    }
  }

  /** Every validity flag 0 or 1, every offset in order and inside the level below, every null item empty. */
  void verifyLevels() {
    for (int d = 0; d <= ragged; d++) {
      if (validity[d] != null) {
        for (long i = 0; i < counts[d]; i++) {
          MappedChunks m = validity[d];
          byte v = m.chunk(m.chunkIndex(i)).get(m.positionInChunk(i));
          if (v != 0 && v != 1) {
            throw new DatasetFormatException(resource, layout.describe(new Buffer(FieldLayout.Role.VALIDITY, d))
                + ", item " + i, "a validity flag must be 0 or 1 but it is " + (v & 0xff));
          }
        }
      }
      if (d < levels) {
        long[] r = new long[2];
        for (long i = 0; i < counts[d]; i++) {
          range(d, i, i, r);
          if (r[1] != r[0] && !isValid(d, i)) {
            throw new DatasetFormatException(resource, where(d, i, i), "a null " + (d == 0 ? "record" : "item")
                + " must be empty but holds " + (r[1] - r[0]) + (d < ragged ? " elements" : " bytes"));
          }
        }
      }
    }
  }
}
