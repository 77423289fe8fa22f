package dev.sluice.operators.internal.cache;

import dev.sluice.core.Batch;
import dev.sluice.core.Example;
import dev.sluice.core.HasSchema;
import dev.sluice.core.RandomAccessDataset;
import dev.sluice.core.Schema;
import dev.sluice.core.internal.shardfile.ShardRows;
import dev.sluice.core.spi.BatchBuilder;
import dev.sluice.core.spi.BufferPool;
import dev.sluice.core.spi.StageCounters;
import java.nio.file.Path;

/**
 * The cache of a random-access upstream, itself random access: {@link #get} and {@link #gather}
 * read published blocks from their segments (zero-copy views, bulk copies) and fill the blocks they
 * need that are not published yet, so a global shuffle or a shard after the cache reads only what
 * it needs, and once every block is published a batch is gathered across segments in one call.
 */
final class CachedRandomAccess implements RandomAccessDataset<Example>, HasSchema, CachedDataset {
  private final CacheState state;
  private final PassCounters pass;
  private final BufferPool pool;

  /** A view counting into {@code pass}; with null, the dataset itself, counting into counts of its own. */
  CachedRandomAccess(CacheState state, PassCounters pass) {
    this.state = state;
    this.pass = pass != null ? pass : state.newPass();
    this.pool = state.upstream.options().memory().pool("cache");
  }

  /** A pass that first opens every published segment it can, so a cache filled by others is read whole. */
  @Override
  public Pass openPass() {
    PassCounters counts = state.newPass();
    return state.pass(counts, new CachedRandomAccess(state, counts), store -> {
      if (store.complete() == null) {
        store.openPublished(counts, state.timeoutNanos());
      }
    });
  }

  @Override
  public void countInto(StageCounters counters) {
    pass.countInto(counters);
  }

  @Override
  public Path directory() {
    return state.dir;
  }

  @Override
  public long size() {
    return state.geometry.rows();
  }

  @Override
  public Schema schema() {
    return state.schema();
  }

  @Override
  public Example get(long index) {
    RandomAccessDataset.checkIndex(index, size(), this);
    CacheStore store = state.store(pass);
    if (store == null) {
      pass.miss(1);
      return state.upstream.element(index);
    }
    ShardRows all = store.complete();
    long block = state.geometry.blockOf(index);
    if (all != null) {
      pass.served(block, 1);
      return all.get(index);
    }
    Block b = block(store, block);
    try {
      if (b.segment != null) {
        pass.served(block, 1);
        return b.segment.rows().get(index);
      }
      if (b.batch != null) {
        pass.servedFromUpstream(b.why, 1);
        return b.batch.copyRow((int) (index - state.geometry.blockStart(block)));
      }
      pass.servedFromUpstream(b.why, 1);
      return state.upstream.element(index);
    } finally {
      b.close();
    }
  }

  /**
   * Copies the rows into {@code target}: across segments in one call once every block is open in
   * this process, else run by run of rows in one block, filling the blocks that are not published.
   */
  @Override
  public void gather(long[] indices, int from, int count, BatchBuilder target) {
    long size = size();
    CacheStore store = state.store(pass);
    if (store == null) {
      for (int i = from; i < from + count; i++) {
        RandomAccessDataset.checkIndex(indices[i], size, this);
        target.append(state.upstream.element(indices[i]));
      }
      pass.miss(count);
      return;
    }
    ShardRows all = store.complete();
    if (all != null) {
      all.gather(indices, from, count, target);
      countServed(indices, from, count);
      return;
    }
    int end = from + count;
    int i = from;
    while (i < end) {
      RandomAccessDataset.checkIndex(indices[i], size, this);
      long block = state.geometry.blockOf(indices[i]);
      int j = i + 1;
      while (j < end && indices[j] >= 0 && indices[j] < size && state.geometry.blockOf(indices[j]) == block) {
        j++;
      }
      Block b = block(store, block);
      try {
        if (b.segment != null) {
          b.segment.rows().gather(indices, i, j - i, target);
          pass.served(block, j - i);
        } else if (b.batch != null) {
          long start = state.geometry.blockStart(block);
          for (int k = i; k < j; k++) {
            target.append(b.batch.copyRow((int) (indices[k] - start)));
          }
          pass.servedFromUpstream(b.why, j - i);
        } else {
          for (int k = i; k < j; k++) {
            target.append(state.upstream.element(indices[k]));
          }
          pass.servedFromUpstream(b.why, j - i);
        }
      } finally {
        b.close();
      }
      i = j;
    }
  }

  private void countServed(long[] indices, int from, int count) {
    if (!pass.computedAny()) {
      pass.hit(count);
      return;
    }
    for (int i = from; i < from + count; i++) {
      pass.served(state.geometry.blockOf(indices[i]), 1);
    }
  }

  /** A block as this pass reads it: its segment, or its rows computed but not stored, or neither (upstream). */
  private static final class Block implements AutoCloseable {
    final CacheStore.Segment segment;
    final Batch batch;
    final PassCounters.Bypass why;

    Block(CacheStore.Segment segment, Batch batch, PassCounters.Bypass why) {
      this.segment = segment;
      this.batch = batch;
      this.why = why;
    }

    @Override
    public void close() {
      if (batch != null) {
        batch.close();
      }
    }
  }

  private Block block(CacheStore store, long block) {
    Decision d = store.decide(block, pass, state.timeoutNanos());
    switch (d.kind) {
      case HIT:
        return new Block(d.segment, null, null);
      case UPSTREAM:
        return new Block(null, null, d.why);
      default:
        break;
    }
    Batch rows;
    try {
      rows = state.computeBlock(block, pool);
    } catch (RuntimeException | Error e) {
      store.release(block, d, pass);
      throw e;
    }
    CacheStore.Segment s;
    try {
      s = store.publish(block, d, rows, pass, state.timeoutNanos());
    } catch (RuntimeException | Error e) {
      rows.close();
      throw e;
    }
    if (s != null) {
      rows.close();
      return new Block(s, null, null);
    }
    return new Block(null, rows, pass.bypassed(block));
  }

  @Override
  public String toString() {
    return "cache(" + state.upstream.source() + ")";
  }
}
