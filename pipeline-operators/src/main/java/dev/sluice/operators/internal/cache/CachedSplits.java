package dev.sluice.operators.internal.cache;

import dev.sluice.core.Batch;
import dev.sluice.core.BatchSplitDataset;
import dev.sluice.core.Example;
import dev.sluice.core.HasSchema;
import dev.sluice.core.Schema;
import dev.sluice.core.Split;
import dev.sluice.core.SplitDataset;
import dev.sluice.core.spi.BatchBuilder;
import dev.sluice.core.spi.BufferPool;
import dev.sluice.core.spi.StageCounters;
import dev.sluice.operators.internal.RebatchOperator;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import reactor.core.publisher.Flux;

/**
 * The cache of a split upstream, itself a split source with the same splits (a block never crosses
 * a split), so a split-order shuffle and a shard by rank apply behind it as they do without it. When
 * the upstream decodes into batches, so does the cache ({@link Batches}, on the columnar path).
 *
 * <p>A read of a row range walks its blocks in order: a published block is read from its segment
 * (zero-copy views for {@link #read}, bulk copies for {@link #readBatches}); a run of consecutive
 * blocks this pass can claim is decoded from upstream in one read, block by block, each block
 * published as soon as it is written; a run the cache cannot store (the budget is reached, a wait
 * timed out) is read from upstream in one read too. So the upstream reads each split's rows once
 * per pass, in order, whatever the cache holds.
 */
class CachedSplits implements SplitDataset<Example>, HasSchema, CachedDataset {
  private final CacheState state;
  private final PassCounters pass;
  private final BufferPool pool;
  private final List<Split> splits;
  private final Map<Split, Integer> parts = new HashMap<>();

  /** A view counting into {@code pass}; with null, the dataset itself, counting into counts of its own. */
  CachedSplits(CacheState state, PassCounters pass) {
    this.state = state;
    this.pass = pass != null ? pass : state.newPass();
    this.pool = state.upstream.options().memory().pool("cache");
    this.splits = state.upstream.splits();
    for (int k = 0; k < splits.size(); k++) {
      parts.put(splits.get(k), k);
    }
  }

  /** A view of the same kind counting into {@code counts}. */
  CachedSplits view(PassCounters counts) {
    return new CachedSplits(state, counts);
  }

  CacheState state() {
    return state;
  }

  @Override
  public Pass openPass() {
    PassCounters counts = state.newPass();
    return state.pass(counts, view(counts), store -> { });
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
  public List<Split> splits() {
    return splits;
  }

  @Override
  public Schema schema() {
    return state.schema();
  }

  /** The upstream's: a shuffle through the cache cuts the same blocks, so it orders the rows as one without it. */
  @Override
  public long[] blockStarts(Split split) {
    return state.upstream.blockStarts(split);
  }

  /** The upstream's: a shuffle through the cache aligns its blocks as one without it does. */
  @Override
  public long blockAlignment(Split split) {
    return state.upstream.blockAlignment(split);
  }

  private int part(Split split) {
    Integer k = parts.get(split);
    if (k == null) {
      throw new IllegalArgumentException("split " + split + " is not a split of " + this);
    }
    return k;
  }

  /** Rows {@code [fromRow, toRow)} of {@code split}: views of published segments, copies of rows read from upstream. */
  @Override
  public Flux<Example> read(Split split, long fromRow, long toRow) {
    return Flux.defer(() -> {
      int k = part(split);
      split.checkRows(fromRow, toRow);
      long rows = state.geometry.partRows(k);
      return pieces(k, Math.min(fromRow, rows), Math.min(toRow, rows)).concatMap(this::examples, 0);
    });
  }

  /**
   * Rows {@code [fromRow, toRow)} of {@code split} in batches of {@code batchSize} rows, cut from the
   * blocks in order: bulk copies from published segments (a block this pass fills is published
   * first), range copies from the batches read from upstream for rows the cache does not store.
   */
  public Flux<Batch> readBatches(Split split, long fromRow, long toRow, int batchSize) {
    return readBatches(split, fromRow, toRow, batchSize, batchSize);
  }

  /** As {@link #readBatches(Split, long, long, int)}, the first batch of {@code firstBatchSize} rows. */
  public Flux<Batch> readBatches(Split split, long fromRow, long toRow, int firstBatchSize, int batchSize) {
    BatchSplitDataset.checkBatchSizes(firstBatchSize, batchSize);
    split.checkRows(fromRow, toRow);
    int k = part(split);
    return Flux.defer(() -> {
      long rows = state.geometry.partRows(k);
      long a = Math.min(fromRow, rows);
      long b = Math.min(toRow, rows);
      Cutter cutter = new Cutter(state.geometry.partStart(k), a, b, firstBatchSize, batchSize);
      return pieces(k, a, b).concatMapIterable(cutter::accept, 1).doFinally(signal -> cutter.close());
    });
  }

  /**
   * Rows {@code [from, to)} of one block: a segment's rows, or rows read from upstream in
   * {@code batch}, whose first row is row {@code batchFirst} of the part (the reader closes it).
   */
  private record Piece(long block, long from, long to, CacheStore.Segment segment, Batch batch, long batchFirst,
      PassCounters.Bypass why) {}

  /** The pieces of rows {@code [a, b)} of part {@code k}, in order. */
  private Flux<Piece> pieces(int k, long a, long b) {
    if (a >= b) {
      return Flux.empty();
    }
    return Flux.defer(() -> {
      CacheStore store = state.store(pass);
      if (store == null) {
        return upstream(k, a, b, null);
      }
      Geometry g = state.geometry;
      long last = g.block(k, b - 1);
      Walk walk = new Walk(store, g.block(k, a));
      return Flux.<Flux<Piece>>generate(sink -> {
        long j = walk.next;
        if (j > last) {
          sink.complete();
          return;
        }
        Decision d = walk.pending != null ? walk.pending : store.decide(j, pass, state.timeoutNanos());
        walk.pending = null;
        List<Decision> run = new ArrayList<>();
        run.add(d);
        long end = j + 1;
        if (d.kind != Decision.Kind.HIT) { // extend a fill or an upstream read over the blocks after
          while (end <= last) {
            Decision e = store.tryDecide(end, pass);
            if (e == null) {
              break;
            }
            if (e.kind != d.kind || e.why != d.why) {
              walk.pending = e;
              break;
            }
            run.add(e);
            end++;
          }
        }
        walk.next = end;
        walk.runFirst = j;
        walk.run = run;
        long from = Math.max(a, g.blockFirstRow(j));
        long to = Math.min(b, g.blockFirstRow(end - 1) + g.blockSize(end - 1));
        sink.next(switch (d.kind) {
          case HIT -> Flux.just(new Piece(j, from, to, d.segment, null, 0, null));
          case UPSTREAM -> upstream(k, from, to, d.why);
          case FILL -> fill(store, k, j, run, from, to);
        });
      }).concatMap(f -> f, 0).doFinally(signal -> walk.close());
    });
  }

  /**
   * Where a walk over blocks is, the decision it took ahead, and the claims of the run it handed
   * out last: the claims it ends when the walk stops (ending a claim that was published meanwhile
   * does nothing).
   */
  private final class Walk implements AutoCloseable {
    final CacheStore store;
    long next;
    Decision pending;
    long runFirst;
    List<Decision> run = List.of();

    Walk(CacheStore store, long next) {
      this.store = store;
      this.next = next;
    }

    @Override
    public void close() {
      if (pending != null && pending.kind == Decision.Kind.FILL) {
        store.release(next, pending, pass);
      }
      pending = null;
      for (int i = 0; i < run.size(); i++) {
        if (run.get(i).kind == Decision.Kind.FILL) {
          store.release(runFirst + i, run.get(i), pass);
        }
      }
      run = List.of();
    }
  }

  /** Rows {@code [from, to)} of part {@code k} read from upstream in one read, one batch per block. */
  private Flux<Piece> upstream(int k, long from, long to, PassCounters.Bypass why) {
    Geometry g = state.geometry;
    long firstEnd = Math.min(to, g.blockFirstRow(g.block(k, from)) + g.blockSize(g.block(k, from)));
    return state.upstream.rangeBatches(splits.get(k), from, to, (int) (firstEnd - from), g.blockRows(), state.schema(),
        pool, g.partStart(k) + from).map(batch -> {
          long start = batch.index(0) - g.partStart(k);
          return new Piece(g.block(k, start), start, start + batch.size(), null, batch, start, why);
        });
  }

  /**
   * Blocks {@code first ..} of part {@code k}, claimed by this thread ({@code claims}, in order),
   * decoded from upstream in one read and published one by one; rows {@code [from, to)} of them
   * are read. The claims not yet ended when the read fails or is cancelled are released.
   */
  private Flux<Piece> fill(CacheStore store, int k, long first, List<Decision> claims, long from, long to) {
    Geometry g = state.geometry;
    long rowsFrom = g.blockFirstRow(first);
    long lastBlock = first + claims.size() - 1;
    long rowsTo = g.blockFirstRow(lastBlock) + g.blockSize(lastBlock);
    int[] settled = {0};
    return state.upstream.rangeBatches(splits.get(k), rowsFrom, rowsTo, g.blockSize(first), g.blockRows(),
        state.schema(), pool, g.partStart(k) + rowsFrom).map(batch -> {
          int i = settled[0]++;
          long block = first + i;
          CacheStore.Segment s;
          try {
            s = store.publish(block, claims.get(i), batch, pass, state.timeoutNanos());
          } catch (RuntimeException | Error e) {
            batch.close();
            throw e;
          }
          long start = g.blockFirstRow(block);
          long a = Math.max(from, start);
          long b = Math.min(to, start + g.blockSize(block));
          if (s != null) {
            batch.close();
            return new Piece(block, a, b, s, null, 0, null);
          }
          return new Piece(block, a, b, null, batch, start, pass.bypassed(block));
        }).filter(p -> {
          if (p.from() < p.to()) {
            return true;
          }
          if (p.batch() != null) {
            p.batch().close();
          }
          return false;
        }).doFinally(signal -> {
          for (int i = settled[0]; i < claims.size(); i++) {
            store.release(first + i, claims.get(i), pass);
          }
          settled[0] = claims.size();
        });
  }

  /** The rows of a piece as examples: views of the segment, or copies of the upstream batch's rows. */
  private Flux<Example> examples(Piece p) {
    long base = state.geometry.partStart(part(p));
    if (p.segment() != null) {
      return Flux.generate(() -> new long[] {base + p.from()}, (next, sink) -> {
        if (next[0] >= base + p.to()) {
          sink.complete();
        } else {
          sink.next(p.segment().rows().get(next[0]++));
          pass.served(p.block(), 1);
        }
        return next;
      });
    }
    return Flux.using(p::batch, batch -> Flux.<Example, long[]>generate(() -> new long[] {p.from()}, (row, sink) -> {
      if (row[0] >= p.to()) {
        sink.complete();
      } else {
        sink.next(batch.copyRow((int) (row[0]++ - p.batchFirst())));
        pass.servedFromUpstream(p.why(), 1);
      }
      return row;
    }), Batch::close);
  }

  private int part(Piece p) {
    return state.geometry.partOf(p.block());
  }

  /**
   * Cuts the pieces of a range, in order, into batches of {@code first} rows, then {@code size}
   * rows (the last shorter), through the one re-batcher ({@link RebatchOperator.Rows}): a segment's
   * rows are gathered from the store, an upstream batch's rows copied; closes every piece's batch
   * once copied; holds at most the batch being filled, closed by {@link #close()}.
   */
  private final class Cutter implements AutoCloseable {
    private final long base;
    private final long[] indices;
    private final RebatchOperator.Rows rows;

    Cutter(long base, long from, long to, int first, int size) {
      this.base = base;
      this.indices = new long[Math.max(first, size)];
      this.rows = new RebatchOperator.Rows(state.schema(), pool, first, size, to - from, "cache(" + state.upstream.source() + ")");
    }

    List<Batch> accept(Piece p) {
      try {
        long from = p.from();
        int count = (int) (p.to() - from);
        List<Batch> out;
        if (p.segment() != null) {
          out = rows.gather(count, targets -> {
            long pos = from;
            for (BatchBuilder t : targets) {
              int k = (int) Math.min(t.capacity() - t.size(), p.to() - pos);
              for (int i = 0; i < k; i++) {
                indices[i] = base + pos + i;
              }
              p.segment().rows().gather(indices, 0, k, t);
              pos += k;
            }
          });
          pass.served(p.block(), count);
        } else {
          int offset = (int) (from - p.batchFirst());
          out = rows.gather(count, targets -> {
            int q = offset;
            for (BatchBuilder t : targets) {
              int k = Math.min(offset + count - q, t.capacity() - t.size());
              t.appendRange(p.batch(), q, k);
              q += k;
            }
          });
          pass.servedFromUpstream(p.why(), count);
        }
        return out;
      } finally {
        if (p.batch() != null) {
          p.batch().close();
        }
      }
    }

    @Override
    public void close() {
      rows.close();
    }
  }

  @Override
  public String toString() {
    return "cache(" + state.upstream.source() + ")";
  }

  /** The cache of a split upstream that decodes into batches: it decodes into batches too. */
  static final class Batches extends CachedSplits implements BatchSplitDataset<Example> {
    Batches(CacheState state, PassCounters pass) {
      super(state, pass);
    }

    @Override
    CachedSplits view(PassCounters counts) {
      return new Batches(state(), counts);
    }

    /** The upstream's: the first pass decodes as many splits at once as it would without the cache. */
    @Override
    public int decodeParallelism() {
      return ((BatchSplitDataset<?>) state().upstream.source()).decodeParallelism();
    }
  }
}
