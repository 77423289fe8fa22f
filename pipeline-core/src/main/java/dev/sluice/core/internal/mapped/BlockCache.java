package dev.sluice.core.internal.mapped;

import dev.sluice.core.MemoryManager;
import dev.sluice.core.ReadCache;
import dev.sluice.core.spi.BufferPool;
import dev.sluice.core.spi.PooledBuffer;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.locks.LockSupport;
import java.util.function.LongSupplier;

/**
 * Positioned reads of one file through a cache of its aligned blocks, as {@link ReadCache}
 * describes: a read inside a cached block is a copy out of it; a read of a block not yet cached
 * reads the whole block with positioned reads into a pooled off-heap buffer, keeps it, and copies
 * from it. When the file is larger than the budget, when the budget (shared by every open file)
 * or the memory limit has no room for the block, and for reads of a block's size or more, the
 * read goes straight to the file: one positioned read per run of adjacent rows. The budget is
 * read each time a block is to be kept, so a budget set after the file was opened (a pipeline's
 * {@code Options.readCacheBytes}) applies to it.
 *
 * <p>Thread-safe and lock-free on the hot path: blocks sit in an array indexed by block number;
 * two threads that miss the same block may both read it, and one copy is kept. {@link #close()}
 * waits for reads in progress, then releases every block; a read after it throws
 * {@link ClosedChannelException}. A block whose read comes up short (the file shrank) is not kept,
 * and the read falls back to the file, which reports it as truncated.
 */
public final class BlockCache implements PositionedReader, AutoCloseable {
  private static final AtomicLong HELD = new AtomicLong();
  private static final int STRIPES = 16;
  private static final int PAD = 16; // ints per stripe: one 64-byte line each
  /** Files of at most this many blocks get a block table whatever the budget at their opening. */
  private static final long TABLE_BLOCKS = 1L << 20;

  private final PositionedReader reader;
  private final long size;
  private final int blockBytes;
  private final LongSupplier budget;
  private final AtomicReferenceArray<PooledBuffer> blocks; // null when the file is not cached
  private final AtomicIntegerArray users = new AtomicIntegerArray(STRIPES * PAD);
  private final BufferPool pool;
  private volatile boolean closed;

  private BlockCache(PositionedReader reader, long size, int blockBytes, LongSupplier budget) {
    this.reader = reader;
    this.size = size;
    this.blockBytes = blockBytes;
    this.budget = budget;
    long n = (size + blockBytes - 1) / blockBytes;
    boolean caching = size > 0 && n <= Integer.MAX_VALUE && (n <= TABLE_BLOCKS || size <= budget.getAsLong());
    this.blocks = caching ? new AtomicReferenceArray<>((int) n) : null;
    this.pool = caching ? MemoryManager.shared().pool(ReadCache.STAGE) : null;
  }

  /**
   * A cache over {@code reader}, a file of {@code size} bytes, with the budget
   * {@link ReadCache#budget()} (as it is when each block is to be kept) and blocks of
   * {@link ReadCache#BLOCK_BYTES}.
   */
  public static BlockCache over(PositionedReader reader, long size) {
    return new BlockCache(reader, size, ReadCache.BLOCK_BYTES, ReadCache::budget);
  }

  /** A cache with the given block size and budget (for tests). */
  static BlockCache over(PositionedReader reader, long size, int blockBytes, long budget) {
    return new BlockCache(reader, size, blockBytes, () -> budget);
  }

  /** True when this file's blocks are cached (its size is within the budget now). */
  public boolean isCaching() {
    return blocks != null && size <= budget.getAsLong();
  }

  /** Bytes of blocks every open cache holds, process-wide. */
  public static long heldBytes() {
    return HELD.get();
  }

  @Override
  public int read(ByteBuffer dst, long position) throws IOException {
    if (blocks == null || dst.remaining() >= blockBytes || position < 0 || position >= size) {
      return direct(dst, position);
    }
    int stripe = enter();
    try {
      if (closed) {
        throw new ClosedChannelException();
      }
      int k = (int) (position / blockBytes);
      PooledBuffer b = blocks.get(k);
      if (b == null && (b = load(k)) == null) {
        return reader.read(dst, position);
      }
      ByteBuffer block = b.buffer();
      int at = (int) (position - (long) k * blockBytes);
      int n = Math.min(dst.remaining(), block.limit() - at);
      dst.put(dst.position(), block, at, n);
      dst.position(dst.position() + n);
      return n;
    } finally {
      exit(stripe);
    }
  }

  /**
   * Copies file bytes {@code [position, position + length)} to {@code dst} at {@code at} (its
   * position and limit unchanged) out of cached blocks, reading the blocks not yet cached; the
   * index path's fast way in, with no per-call allocation.
   *
   * @return false, having copied nothing that counts, when the range is not served from the cache
   *     (the file is not cached, the range is a block or more, or a block cannot be kept): the
   *     caller then reads it from the file
   * @throws ClosedChannelException after {@link #close()}
   * @throws IOException when reading a block fails
   */
  public boolean copy(long position, int length, ByteBuffer dst, int at) throws IOException {
    if (blocks == null || length >= blockBytes || position < 0 || position + length > size) {
      return false;
    }
    int stripe = enter();
    try {
      if (closed) {
        throw new ClosedChannelException();
      }
      return copyBlocks(position, length, dst, at);
    } finally {
      exit(stripe);
    }
  }

  /**
   * Loads one byte of each of the first {@code lines} (1 to 4) cache lines of the rows at file
   * offsets {@code base + rows[positions[j]] * rowBytes}, {@code j} in {@code [from, to)}, that lie
   * in blocks already cached (others are skipped; nothing is read from the file), so that the copies
   * that follow find them in the CPU's cache. Returns the sum of the loads.
   */
  int touch(long base, long[] rows, int[] positions, int from, int to, int rowBytes, int lines) {
    if (blocks == null) {
      return 0;
    }
    int stripe = enter();
    try {
      if (closed) {
        return 0;
      }
      int sum = 0;
      for (int j = from; j < to; j++) {
        long p = base + rows[positions[j]] * rowBytes;
        int k = (int) (p / blockBytes);
        PooledBuffer b = k < blocks.length() ? blocks.get(k) : null;
        if (b != null) {
          ByteBuffer block = b.buffer();
          int in = (int) (p - (long) k * blockBytes);
          sum += RawTouch.raw(block) ? RawTouch.byAddress(block, in, lines) : RawTouch.byHandle(block, in, lines);
        }
      }
      return sum;
    } finally {
      exit(stripe);
    }
  }

  /**
   * A gather out of the cache: copies rows {@code indices[from..from+count) - base}, each
   * {@code rowBytes} bytes at file offset {@code dataOffset + row * rowBytes}, to {@code dst} at byte
   * {@code (dstRow + i) * rowBytes} (its position and limit unchanged). First makes sure every
   * row's block is cached and loads one byte of each of the row's first {@code lines} cache lines,
   * so that the misses of the scattered rows overlap, then copies. The rows must exist.
   *
   * @return false when some row's block cannot be kept (the file is not cached, no room): the
   *     caller then reads the rows from the file, overwriting what was copied
   * @throws ClosedChannelException after {@link #close()}
   * @throws IOException when reading a block fails
   */
  public boolean copyRows(long dataOffset, long[] indices, int from, int count, long base, int rowBytes,
      ByteBuffer dst, int dstRow, int lines) throws IOException {
    if (blocks == null || rowBytes >= blockBytes) {
      return false;
    }
    int stripe = enter();
    try {
      if (closed) {
        throw new ClosedChannelException();
      }
      int sum = 0;
      for (int i = 0; i < count; i++) {
        long p = dataOffset + (indices[from + i] - base) * rowBytes;
        int k = (int) (p / blockBytes);
        PooledBuffer b = blocks.get(k);
        if (b == null && (b = load(k)) == null) {
          return false;
        }
        ByteBuffer block = b.buffer();
        int in = (int) (p - (long) k * blockBytes);
        sum += RawTouch.raw(block) ? RawTouch.byAddress(block, in, lines) : RawTouch.byHandle(block, in, lines);
      }
      MappedReads.consume(sum);
      for (int i = 0; i < count; i++) {
        if (!copyBlocks(dataOffset + (indices[from + i] - base) * rowBytes, rowBytes, dst, (dstRow + i) * rowBytes)) {
          return false;
        }
      }
      return true;
    } finally {
      exit(stripe);
    }
  }

  private int direct(ByteBuffer dst, long position) throws IOException {
    if (closed) {
      throw new ClosedChannelException();
    }
    return reader.read(dst, position);
  }

  /** Reads and keeps block {@code k}; null when it cannot be kept (no room, or the file is short). */
  /**
   * Copies file bytes {@code [position, position + length)} to {@code dst} at {@code at} out of
   * the blocks, loading those not cached; false when a block cannot be kept (the caller reads the
   * file). The caller holds a use of the cache.
   */
  private boolean copyBlocks(long position, int length, ByteBuffer dst, int at) throws IOException {
    long p = position;
    int done = 0;
    while (done < length) {
      int k = (int) (p / blockBytes);
      PooledBuffer b = blocks.get(k);
      if (b == null && (b = load(k)) == null) {
        return false;
      }
      ByteBuffer block = b.buffer();
      int in = (int) (p - (long) k * blockBytes);
      int n = Math.min(length - done, block.limit() - in);
      dst.put(at + done, block, in, n);
      done += n;
      p += n;
    }
    return true;
  }

  private PooledBuffer load(int k) throws IOException {
    long start = (long) k * blockBytes;
    int length = (int) Math.min(blockBytes, size - start);
    if (!take(length, budget.getAsLong())) {
      return null;
    }
    PooledBuffer b = null;
    boolean kept = false;
    try {
      MemoryManager m = MemoryManager.shared();
      if (m.limit() != MemoryManager.UNLIMITED && m.limit() - m.reservedBytes() < 2L * blockBytes) {
        return null; // never wait for memory, nor take the last of it
      }
      b = pool.allocate(length);
      ByteBuffer fill = b.buffer().duplicate();
      while (fill.hasRemaining()) {
        if (reader.read(fill, start + fill.position()) < 0) {
          return null;
        }
      }
      if (blocks.compareAndSet(k, null, b)) {
        kept = true;
        return b;
      }
      return blocks.get(k);
    } finally {
      if (!kept) {
        if (b != null) {
          b.close();
        }
        HELD.addAndGet(-length);
      }
    }
  }

  /** Counts {@code length} more bytes held by every open cache; false when the file or those bytes exceed {@code budget}. */
  private boolean take(int length, long budget) {
    if (size > budget) {
      return false;
    }
    for (;;) {
      long held = HELD.get();
      if (held + length > budget) {
        return false;
      }
      if (HELD.compareAndSet(held, held + length)) {
        return true;
      }
    }
  }

  private boolean inUse() {
    for (int s = 0; s < STRIPES; s++) {
      if (users.get(s * PAD) != 0) {
        return true;
      }
    }
    return false;
  }

  /** Waits for reads in progress to finish, then releases every block; idempotent. Does not close the file. */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    if (blocks == null) {
      return;
    }
    while (inUse()) {
      LockSupport.parkNanos(10_000);
    }
    for (int k = 0; k < blocks.length(); k++) {
      PooledBuffer b = blocks.getAndSet(k, null);
      if (b != null) {
        long n = b.size();
        b.close();
        HELD.addAndGet(-n);
      }
    }
  }

  /** Counts the calling thread as a user of the blocks until {@link #exit}; returns its stripe. */
  private int enter() {
    int stripe = (Thread.currentThread().hashCode() & (STRIPES - 1)) * PAD;
    users.incrementAndGet(stripe);
    return stripe;
  }

  /** Ends the use {@link #enter} counted in {@code stripe}. */
  private void exit(int stripe) {
    users.decrementAndGet(stripe);
  }
}
