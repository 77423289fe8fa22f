package dev.sluice.core;

import dev.sluice.core.internal.CoreAccess;
import dev.sluice.core.spi.PooledBuffer;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;

/** The {@link CoreAccess} of this package: each method calls the member of the same name. */
final class CoreAccessImpl extends CoreAccess {
  @Override
  public ByteBuffer acquire(MemoryManager m, String stage, long asked, int sizeClass, long inProgress, Shelf shelf) {
    return m.acquire(stage, asked, sizeClass, inProgress, shelf);
  }

  @Override
  public void returned(MemoryManager m, int sizeClass, boolean kept) {
    m.returned(sizeClass, kept);
  }

  @Override
  public void unreserve(MemoryManager m, long bytes) {
    m.unreserve(bytes);
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
