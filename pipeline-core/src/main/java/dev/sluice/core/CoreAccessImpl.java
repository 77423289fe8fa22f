package dev.sluice.core;

import dev.sluice.core.internal.CoreAccess;
import dev.sluice.core.spi.PooledBuffer;
import dev.sluice.core.spi.WaitCancellation;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;

/** The {@link CoreAccess} of this package: each method calls the member of the same name. */
final class CoreAccessImpl extends CoreAccess {
  @Override
  public MemoryLimitException tooLarge(MemoryManager m, String stage, long asked, long sizeClass) {
    return m.tooLarge(stage, asked, sizeClass);
  }

  @Override
  public void handedOut(MemoryManager m, long bytes) {
    m.handedOut(bytes);
  }

  @Override
  public boolean tryReserve(MemoryManager m, long bytes) {
    return m.tryReserve(bytes);
  }

  @Override
  public void unreserve(MemoryManager m, long bytes) {
    m.unreserve(bytes);
  }

  @Override
  public boolean fits(MemoryManager m, long bytes) {
    return m.fits(bytes);
  }

  @Override
  public boolean keepsBuffers(MemoryManager m) {
    return m.keepsBuffers();
  }

  @Override
  public boolean trimFor(MemoryManager m, long bytes) {
    return m.trimFor(bytes);
  }

  @Override
  public long maxWaitNanos(MemoryManager m) {
    return m.maxWaitNanos();
  }

  @Override
  public void beginWait(MemoryManager m, long inProgress) {
    m.beginWait(inProgress);
  }

  @Override
  public void endWait(MemoryManager m, long inProgress) {
    m.endWait(inProgress);
  }

  @Override
  public boolean nothingComesBack(MemoryManager m) {
    return m.nothingComesBack();
  }

  @Override
  public boolean await(MemoryManager m, BooleanSupplier done, long deadlineNanos, WaitCancellation cancel)
      throws InterruptedException {
    return m.await(done, deadlineNanos, cancel);
  }

  @Override
  public void signal(MemoryManager m) {
    m.signal();
  }

  @Override
  public MemoryLimitException deadlocked(MemoryManager m, String stage, long asked, long sizeClass, long inProgress) {
    return m.deadlocked(stage, asked, sizeClass, inProgress);
  }

  @Override
  public MemoryLimitException limitReached(MemoryManager m, String stage, long asked, long sizeClass,
      Throwable cause) {
    return m.limitReached(stage, asked, sizeClass, cause);
  }

  @Override
  public void checkCanHold(MemoryManager m, String what, long rows, long total, Map<String, Long> parts) {
    m.checkCanHold(what, rows, total, parts);
  }

  @Override
  public String bytes(long n) {
    return MemoryManager.bytes(n);
  }

  @Override
  public ByteBuffer rawData(Tensor t) {
    return t.rawData();
  }

  @Override
  public ByteBuffer[] rawOffsets(Tensor t) {
    return t.rawOffsets();
  }

  @Override
  public ByteBuffer[] rawValidity(Tensor t) {
    return t.rawValidity();
  }

  @Override
  public Batch builtBatch(Schema schema, List<Column> columns, long[] indices, long first, int size,
      PooledBuffer[] buffers) {
    return Batch.ofBuilt(schema, columns, indices, first, size, buffers);
  }
}
