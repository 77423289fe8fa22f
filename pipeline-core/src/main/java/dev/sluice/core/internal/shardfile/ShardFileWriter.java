package dev.sluice.core.internal.shardfile;

import dev.sluice.core.Batch;
import dev.sluice.core.Column;
import dev.sluice.core.DatasetIOException;
import dev.sluice.core.Tensor;
import dev.sluice.core.TensorSpec;
import dev.sluice.core.internal.AtomicOutput;
import dev.sluice.core.internal.shardfile.FieldLayout.Buffer;
import dev.sluice.core.internal.shardfile.FieldLayout.Kind;
import dev.sluice.core.spi.BufferPool;
import dev.sluice.core.spi.PooledBuffer;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileAttribute;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.CRC32C;

/**
 * Writes one shard file from batches, streaming: the rows are known in advance, so every block
 * whose size follows from them (validity, offsets, fixed-length values) is written in place as the
 * batches arrive; the first block whose size only the data tells streams after them, and any
 * further one goes to a spill file beside the shard and is appended when the shard completes. The
 * shard is written under a temporary name in the target's directory ({@link AtomicOutput}) and
 * renamed into place by {@link #finish()}, replacing a file of that name; {@link #close()} before
 * that deletes everything it wrote.
 */
public final class ShardFileWriter implements AutoCloseable {
  private static final int STAGING_BYTES = 256 << 10;

  private final Path target;
  private final String shown; // the shard's name in messages
  private final AtomicOutput out;
  private final Path temp;
  private final FileChannel channel;
  private final List<FieldLayout> layouts;
  private final long rows;
  private final BufferPool pool;
  private final BlockOut[] blocks;
  private final FileAttribute<?>[] attrs; // of the file and its spill files
  private final long[][] written; // per field and depth: the last offset written so far
  private long rowsWritten;
  private boolean done;

  private ShardFileWriter(Path target, String shown, List<FieldLayout> layouts, long rows, BufferPool pool,
      FileAttribute<?>[] attrs) throws IOException {
    this.target = target;
    this.shown = shown;
    this.layouts = layouts;
    this.rows = rows;
    this.pool = pool;
    this.written = new long[layouts.size()][];
    for (int f = 0; f < layouts.size(); f++) {
      written[f] = new long[layouts.get(f).ragged() + 1];
    }
    this.attrs = attrs.clone();
    this.out = AtomicOutput.fileAmongMany(target, this.attrs);
    this.temp = out.temp();
    FileChannel ch;
    try {
      ch = FileChannel.open(temp, StandardOpenOption.WRITE, StandardOpenOption.READ);
    } catch (IOException | RuntimeException e) {
      out.close();
      throw e;
    }
    this.channel = ch;
    int count = 0;
    for (FieldLayout l : layouts) {
      count += l.blockCount();
    }
    this.blocks = new BlockOut[count];
  }

  /**
   * A writer of a shard of {@code rows} rows to {@code target}. The file and its spill files are
   * created with {@code attrs}: none gives the umask's permissions (a dataset others may read), a
   * mode of 0600 keeps them private (the node cache's segments) whatever the umask.
   *
   * @param pool where the staging buffers come from (returned by {@link #finish()} and {@link #close()})
   * @param attrs the attributes the files are created with, such as a POSIX mode
   */
  public static ShardFileWriter create(Path target, List<FieldLayout> layouts, long rows, BufferPool pool,
      FileAttribute<?>... attrs) {
    return create(target, target.toString(), layouts, rows, pool, attrs);
  }

  /**
   * {@link #create(Path, List, long, BufferPool, FileAttribute...)}, naming the shard {@code shown} in
   * messages (where {@code target} lies in a temporary directory that becomes {@code shown}'s).
   */
  public static ShardFileWriter create(Path target, String shown, List<FieldLayout> layouts, long rows,
      BufferPool pool, FileAttribute<?>... attrs) {
    ShardFileWriter w;
    try {
      w = new ShardFileWriter(target, shown, layouts, rows, pool, attrs);
    } catch (IOException e) {
      throw new DatasetIOException(shown, "cannot create a temporary file beside it: " + AtomicOutput.reason(e), e);
    }
    try {
      w.layOut();
      return w;
    } catch (IOException | RuntimeException e) {
      w.close();
      throw e instanceof IOException io ? w.ioError("cannot create", io) : (RuntimeException) e;
    }
  }

  /** Places the blocks of known size one after the other, then the others (first in place, rest spilled). */
  private void layOut() throws IOException {
    long at = ShardFile.HEADER_BYTES;
    for (FieldLayout l : layouts) {
      for (Buffer b : l.buffers()) {
        long known = l.knownLength(b, rows);
        if (known >= 0) {
          blocks[l.block(b)] = new BlockOut(channel, null, at, known);
          at = ShardFile.align(at + known);
        }
      }
    }
    boolean first = true;
    for (FieldLayout l : layouts) {
      for (Buffer b : l.buffers()) {
        if (l.knownLength(b, rows) < 0) {
          if (first) {
            blocks[l.block(b)] = new BlockOut(channel, null, at, -1);
            first = false;
          } else {
            Path spill = AtomicOutput.newTemporaryFile(target, attrs);
            FileChannel ch = FileChannel.open(spill, StandardOpenOption.WRITE, StandardOpenOption.READ);
            blocks[l.block(b)] = new BlockOut(ch, spill, -1, -1);
          }
        }
      }
    }
    for (FieldLayout l : layouts) {
      for (Buffer b : l.buffers()) {
        if (b.role() == FieldLayout.Role.OFFSETS) {
          blocks[l.block(b)].putLong(0);
        }
      }
    }
  }

  /** The shard this writer completes. */
  public Path target() {
    return target;
  }

  /**
   * Appends the rows of {@code batch}, whose columns are those of the layouts' fields (matched by
   * name; other columns are ignored).
   *
   * @throws IllegalArgumentException when a column does not match its field or the batch holds more
   *     rows than the shard
   */
  public void write(Batch batch) {
    checkOpen();
    int n = batch.size();
    if (rowsWritten + n > rows) {
      throw new IllegalArgumentException(target.getFileName() + ": " + (rowsWritten + n) + " rows written but the shard"
          + " holds " + rows);
    }
    try {
      for (int f = 0; f < layouts.size(); f++) {
        FieldLayout l = layouts.get(f);
        writeColumn(f, l, batch.column(l.name()), n);
      }
    } catch (IOException e) {
      throw ioError("write failed", e);
    }
    rowsWritten += n;
  }

  private void writeColumn(int f, FieldLayout l, Column c, int n) throws IOException {
    TensorSpec spec = l.spec();
    TensorSpec given = c.spec();
    if (given.dtype() != spec.dtype() || !given.shape().equals(spec.shape())) {
      throw new IllegalArgumentException("field '" + spec.name() + "': a batch column " + given + " cannot be written"
          + " to a field " + spec);
    }
    BlockOut values = blocks[l.block(Buffer.VALUES)];
    ByteBuffer data = c.values().data();
    if (l.kind() == Kind.FIXED) {
      Tensor validity = validity(l, c, 0, 0, n);
      int rb = l.itemBytes();
      if (validity == null) {
        values.put(data, 0, n * rb);
      } else {
        for (int r = 0; r < n; r++) {
          if (validity.getBoolean(r)) {
            values.put(data, r * rb, rb);
          } else {
            values.putZeros(rb);
          }
        }
      }
      return;
    }
    // depth by depth: the items [base, base + count) of this batch at each depth, their validity and
    // offsets (rebased onto what the shard holds so far), then the innermost values
    int levels = l.ragged() + (l.binaryLeaf() ? 1 : 0);
    long base = 0;
    long count = n;
    for (int d = 0; d <= l.ragged(); d++) {
      Tensor validity = validity(l, c, d, base, count);
      if (d < levels) {
        Tensor off = c.offsets(d);
        BlockOut out = blocks[l.offsetsBlock(d)];
        long first = off.getLong(base);
        long previous = first;
        long written = written(f, d);
        for (long i = 0; i < count; i++) {
          long end = off.getLong(base + i + 1);
          if (end < previous) {
            throw new IllegalArgumentException("field '" + spec.name() + "' " + where(d, base + i) + ": the batch's"
                + " offsets decrease (" + previous + " then " + end + ")");
          }
          if (validity != null && !validity.getBoolean(base + i) && end != previous) {
            throw new IllegalArgumentException("field '" + spec.name() + "' " + where(d, base + i) + " is null but"
                + " holds " + (end - previous) + (d < l.ragged() ? " elements" : " bytes"));
          }
          written += end - previous;
          out.putLong(written);
          previous = end;
        }
        setWritten(f, d, written);
        base = first;
        count = previous - first;
      }
    }
    long ib = l.binaryLeaf() ? 1 : l.itemBytes();
    values.put(data, Math.toIntExact(base * ib), Math.toIntExact(count * ib));
  }

  /**
   * The validity of items {@code [base, base + count)} at {@code depth}, written to the field's
   * validity block when the field may hold nulls there; null when every item is valid.
   */
  private Tensor validity(FieldLayout l, Column c, int depth, long base, long count) throws IOException {
    TensorSpec spec = l.spec();
    Tensor validity = c.hasValidity(depth) ? c.validity(depth) : null;
    if (validity != null && !spec.nullableAt(depth)) {
      for (long i = 0; i < count; i++) {
        if (!validity.getBoolean(base + i)) {
          throw new IllegalArgumentException("field '" + spec.name() + "' " + where(depth, base + i) + " is null but"
              + " the field " + spec + " allows no nulls there");
        }
      }
      return null;
    }
    if (spec.nullableAt(depth)) {
      BlockOut v = blocks[l.validityBlock(depth)];
      for (long i = 0; i < count; i++) {
        v.putByte(validity == null || validity.getBoolean(base + i) ? (byte) 1 : (byte) 0);
      }
    }
    return validity;
  }

  /** Items of field {@code f} written so far one depth below {@code depth} (bytes below the strings). */
  private long written(int f, int depth) {
    return written[f][depth];
  }

  private void setWritten(int f, int depth, long value) {
    written[f][depth] = value;
  }

  /** {@code "of example 17 of shard-00003.shard"} for a row, {@code "element 5 at depth 2"} below. */
  private String where(int depth, long item) {
    return depth == 0 ? "of example " + rowIndex((int) item) : "element " + item + " at depth " + depth + " (a batch of "
        + target.getFileName() + ")";
  }

  private String rowIndex(int r) {
    return String.valueOf(rowsWritten + r) + " of " + target.getFileName();
  }

  /**
   * Completes the shard: footer and header, flushed to disk, renamed to its name.
   *
   * @throws IllegalArgumentException when fewer rows than announced were written
   */
  public ShardFile.Summary finish() {
    checkOpen();
    if (rowsWritten != rows) {
      throw new IllegalArgumentException(target.getFileName() + ": the source gave " + rowsWritten + " rows but the"
          + " shard holds " + rows + " (did the source's size change while it was written?)");
    }
    try {
      long end = ShardFile.HEADER_BYTES;
      List<ShardFile.Block> table = new ArrayList<>(blocks.length);
      for (BlockOut b : blocks) {
        b.flush();
        if (b.offset >= 0) {
          if (b.expected >= 0 && b.length != b.expected) {
            throw new IllegalStateException("block of " + b.expected + " bytes holds " + b.length);
          }
          end = Math.max(end, b.offset + b.length);
        }
      }
      for (BlockOut b : blocks) {
        if (b.offset < 0) {
          b.offset = ShardFile.align(end);
          long done = 0;
          while (done < b.length) {
            done += b.channel.transferTo(done, b.length - done, channel.position(b.offset + done));
          }
          end = b.offset + b.length;
        }
        table.add(new ShardFile.Block(b.offset, b.length, (int) b.crc.getValue()));
      }
      long footerOffset = ShardFile.footerOffset(end);
      long length = footerOffset + (long) table.size() * ShardFile.BLOCK_ENTRY_BYTES + ShardFile.TAIL_BYTES;
      ByteBuffer footer = ShardFile.footer(rows, length, table);
      int checksum = ShardFile.footerChecksum(footer);
      writeFully(channel, footer, footerOffset);
      writeFully(channel, ShardFile.header(rows, table.size(), footerOffset, length), 0);
      channel.force(false);
      channel.close();
      out.commit();
      done = true;
      releaseBlocks();
      return new ShardFile.Summary(target.getFileName().toString(), rows, length, checksum);
    } catch (IOException e) {
      throw ioError("cannot complete", e);
    } finally {
      if (!done) {
        close();
      }
    }
  }

  private DatasetIOException ioError(String what, IOException e) {
    return new DatasetIOException(shown, what + ": " + AtomicOutput.reason(e), e);
  }

  private void checkOpen() {
    if (done) {
      throw new IllegalStateException(target + ": the shard writer is already finished or closed");
    }
  }

  /** Deletes the temporary and spill files unless {@link #finish()} completed; idempotent. */
  @Override
  public void close() {
    if (done) {
      return;
    }
    done = true;
    try {
      channel.close();
    } catch (IOException ignored) {
      // the write already failed; that error is the one to report
    }
    out.close();
    releaseBlocks();
  }

  private void releaseBlocks() {
    for (BlockOut b : blocks) {
      if (b != null) {
        b.release();
      }
    }
  }

  private static void writeFully(FileChannel ch, ByteBuffer b, long position) throws IOException {
    long p = position;
    while (b.hasRemaining()) {
      p += ch.write(b, p);
    }
  }

  /** One block being written: staged, checksummed, written at its place (or to its spill file). */
  private final class BlockOut {
    final FileChannel channel;
    final Path spill; // null: written in place
    final long expected; // -1: only the data tells
    final CRC32C crc = new CRC32C();
    long offset; // in the shard; -1 for a spilled block until finish
    long length;
    PooledBuffer staging;

    BlockOut(FileChannel channel, Path spill, long offset, long expected) {
      this.channel = channel;
      this.spill = spill;
      this.offset = offset;
      this.expected = expected;
    }

    private ByteBuffer staging(int need) throws IOException {
      if (staging == null) {
        staging = pool.allocate(expected >= 0 ? Math.min(STAGING_BYTES, Math.max(expected, 8)) : STAGING_BYTES);
        staging.buffer().clear();
      }
      ByteBuffer s = staging.buffer();
      if (s.remaining() < need) {
        flush();
      }
      return s;
    }

    void putLong(long v) throws IOException {
      staging(8).putLong(v);
    }

    void putByte(byte v) throws IOException {
      staging(1).put(v);
    }

    void putZeros(int n) throws IOException {
      for (int i = 0; i < n; i++) {
        putByte((byte) 0);
      }
    }

    void put(ByteBuffer src, int from, int n) throws IOException {
      if (n >= STAGING_BYTES) { // large runs go straight from the batch to the file
        flush();
        ByteBuffer run = src.slice(from, n);
        crc.update(run.duplicate());
        writeFully(channel, run, (spill == null ? offset : 0) + length);
        length += n;
        return;
      }
      int done = 0;
      while (done < n) {
        ByteBuffer s = staging(1);
        int take = Math.min(n - done, s.remaining());
        s.put(s.position(), src, from + done, take);
        s.position(s.position() + take);
        done += take;
      }
    }

    void flush() throws IOException {
      if (staging == null) {
        return;
      }
      ByteBuffer s = staging.buffer();
      s.flip();
      crc.update(s.duplicate());
      long position = (spill == null ? offset : 0) + length;
      int n = s.remaining();
      writeFully(channel, s, position);
      length += n;
      s.clear();
    }

    void release() {
      if (staging != null) {
        staging.close();
        staging = null;
      }
      if (spill != null) {
        try {
          channel.close();
          Files.deleteIfExists(spill);
        } catch (IOException ignored) {
          // best effort: a spill file is never read once its shard completed or failed
        }
      }
    }
  }
}
