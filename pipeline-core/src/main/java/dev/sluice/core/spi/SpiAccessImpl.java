package dev.sluice.core.spi;

import dev.sluice.core.MemoryManager;
import dev.sluice.core.Tensor;
import dev.sluice.core.TensorSpec;
import dev.sluice.core.internal.SpiAccess;
import java.nio.ByteBuffer;
import java.util.List;

/** The {@link SpiAccess} of the pools and column builders, registered by {@link BufferPool}. */
final class SpiAccessImpl extends SpiAccess {
  @Override
  public BufferPool newPool(String stage, MemoryManager manager, BufferPool parent, long retainBudget) {
    return new BufferPool(stage, manager, parent, retainBudget);
  }

  @Override
  public boolean dropOneRetained(BufferPool pool) {
    return pool.dropOneRetained();
  }

  @Override
  public MemoryManager manager(PooledBuffer buffer) {
    return buffer.pool().manager();
  }

  @Override
  public Tensor heapList(TensorSpec spec, List<Tensor> elements) {
    ColumnBuilder b = new ColumnBuilder(spec, 1, null);
    b.startList(0);
    for (Tensor t : elements) {
      if (t == null) {
        b.addNull(1);
      } else {
        b.appendItem(1, t);
      }
    }
    return b.build(1).row(0);
  }

  @Override
  public void rebase(ByteBuffer so, long a, long n, long base, ByteBuffer dst, long c) {
    RowGathers.rebase(so, a, n, base, dst, c);
  }
}
