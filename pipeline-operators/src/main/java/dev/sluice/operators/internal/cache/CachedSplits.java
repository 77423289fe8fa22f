package dev.sluice.operators.internal.cache;

import dev.sluice.core.Batch;
import dev.sluice.core.BatchBuilder;
import dev.sluice.core.BatchSplitDataset;
import dev.sluice.core.BufferPool;
import dev.sluice.core.Dataset;
import dev.sluice.core.Example;
import dev.sluice.core.HasSchema;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.Schema;
import dev.sluice.core.Split;
import dev.sluice.core.SplitDataset;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The cache of a split upstream, itself a split source with the same splits (a block never crosses
 * a split), so a split-order shuffle and a shard by rank apply behind it as they do without it.
 * {@link #read} serves published blocks from their segments and fills the others from the
 * upstream's rows of the split. When the upstream decodes into batches, so does the cache
 * ({@link Batches}, on the columnar path): {@link #readBatches} gathers published blocks straight
 * into batches.
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

  @Override
  public Pass openPass() {
    PassCounters counts = state.newPass();
    CachedSplits view = view(counts);
    try {
      state.store(counts);
    } catch (RuntimeException e) {
      counts.close();
      throw e;
    }
    return new Pass() {
      @Override
      public Dataset<Example> dataset() {
        return view;
      }

      @Override
      public void close() {
        counts.close();
      }
    };
  }

  CacheState state() {
    return state;
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

  private int part(Split split) {
    Integer k = parts.get(split);
    if (k == null) {
      throw new IllegalArgumentException("split " + split + " is not a split of " + this);
    }
    return k;
  }

  private static void checkRange(Split split, long fromRow, long toRow) {
    if (fromRow < 0 || toRow < fromRow) {
      throw new IllegalArgumentException("rows [" + fromRow + ", " + toRow + ") of " + split
          + ": expected 0 <= fromRow <= toRow");
    }
  }

  @Override
  public Flux<Example> read(Split split, long fromRow, long toRow) {
    return Flux.defer(() -> {
      int k = part(split);
      checkRange(split, fromRow, toRow);
      long rows = state.geometry.partRows(k);
      long a = Math.min(fromRow, rows);
      long b = Math.min(toRow, rows);
      if (a >= b) {
        return Flux.empty();
      }
      Geometry g = state.geometry;
      long first = g.block(k, a);
      long last = g.block(k, b - 1);
      return Flux.<Long, Long>generate(() -> first, (block, sink) -> {
        if (block > last) {
          sink.complete();
        } else {
          sink.next(block);
        }
        return block + 1;
      }).concatMap(block -> {
        long start = g.blockFirstRow(block);
        return blockRows(k, block, Math.max(a, start), Math.min(b, start + g.blockSize(block)));
      }, 0);
    });
  }

  /** Rows {@code [a, b)} of part {@code k}, all in {@code block}. */
  private Flux<Example> blockRows(int k, long block, long a, long b) {
    return Flux.defer(() -> {
      CacheStore store = state.store(pass);
      if (store == null) {
        return upstream(k, a, b, null);
      }
      CacheStore.Decision d = store.decide(block, pass, state.timeoutNanos());
      switch (d.kind) {
        case HIT:
          return rows(d.segment, k, block, a, b);
        case UPSTREAM:
          return upstream(k, a, b, d.why);
        default:
          return fill(store, d, k, block).flatMapMany(filled -> {
            if (filled instanceof CacheStore.Segment s) {
              return rows(s, k, block, a, b);
            }
            Batch rows = (Batch) filled;
            long first = state.geometry.blockFirstRow(block);
            PassCounters.Bypass why = pass.bypassed(block);
            return Flux.using(() -> rows, r -> Flux.<Example, long[]>generate(() -> new long[] {a}, (row, sink) -> {
              if (row[0] >= b) {
                sink.complete();
              } else {
                sink.next(r.copyRow((int) (row[0]++ - first)));
                pass.servedFromUpstream(why, 1);
              }
              return row;
            }), Batch::close);
          });
      }
    });
  }

  /** Rows {@code [a, b)} of part {@code k} from {@code segment}, views of its mapping. */
  private Flux<Example> rows(CacheStore.Segment segment, int k, long block, long a, long b) {
    long base = state.geometry.partStart(k);
    return Flux.generate(() -> new long[] {base + a}, (next, sink) -> {
      if (next[0] >= base + b) {
        sink.complete();
      } else {
        sink.next(segment.rows().get(next[0]++));
        pass.served(block, 1);
      }
      return next;
    });
  }

  /** Rows {@code [a, b)} of part {@code k} read from the upstream, not cached. */
  private Flux<Example> upstream(int k, long a, long b, PassCounters.Bypass why) {
    long base = state.geometry.partStart(k);
    long[] next = {base + a};
    return state.upstream.range(splits.get(k), a, b, PipelineContext.defaults()).map(e -> {
      Upstream.checked(e, next[0]++);
      pass.servedFromUpstream(why, 1);
      return e;
    });
  }

  /**
   * Computes block {@code block} of part {@code k} from upstream and publishes it: its segment, or
   * its rows in a batch when they were not stored (the caller closes it). The claim ends on every
   * path, also on error and cancel.
   */
  private Mono<Object> fill(CacheStore store, CacheStore.Decision d, int k, long block) {
    Geometry g = state.geometry;
    long first = g.blockFirstRow(block);
    int n = g.blockSize(block);
    long start = g.partStart(k) + first;
    AtomicBoolean settled = new AtomicBoolean();
    Mono<Batch> rows = Mono.using(() -> BatchBuilder.create(state.schema(), n, pool),
        builder -> state.upstream.range(splits.get(k), first, first + n, PipelineContext.defaults())
            .doOnNext(e -> builder.append(Upstream.checked(e, start + builder.size())))
            .then(Mono.fromCallable(builder::build)),
        BatchBuilder::close);
    return rows.<Object>map(batch -> {
      settled.set(true);
      CacheStore.Segment s;
      try {
        s = store.publish(block, d, batch, pass, state.timeoutNanos());
      } catch (RuntimeException | Error e) {
        batch.close();
        throw e;
      }
      if (s != null) {
        batch.close();
        return s;
      }
      return batch;
    }).doFinally(signal -> {
      if (settled.compareAndSet(false, true)) {
        store.release(block, d, pass);
      }
    });
  }

  /**
   * Rows {@code [fromRow, toRow)} of {@code split} in batches of {@code batchSize} rows: a batch whose
   * blocks are all published is gathered from their segments with bulk copies; any other is
   * collated from {@link #read}, which fills its blocks.
   */
  public Flux<Batch> readBatches(Split split, long fromRow, long toRow, int batchSize) {
    return readBatches(split, fromRow, toRow, batchSize, batchSize);
  }

  /** As {@link #readBatches(Split, long, long, int)}, the first batch of {@code firstBatchSize} rows. */
  public Flux<Batch> readBatches(Split split, long fromRow, long toRow, int firstBatchSize, int batchSize) {
    if (batchSize <= 0) {
      throw new IllegalArgumentException("batchSize > 0 required but it was " + batchSize);
    }
    if (firstBatchSize <= 0) {
      throw new IllegalArgumentException("firstBatchSize > 0 required but it was " + firstBatchSize);
    }
    checkRange(split, fromRow, toRow);
    int k = part(split);
    return Flux.defer(() -> {
      long rows = state.geometry.partRows(k);
      long a = Math.min(fromRow, rows);
      long b = Math.min(toRow, rows);
      return Flux.<Long, Long>generate(() -> a, (pos, sink) -> {
        if (pos >= b) {
          sink.complete();
        } else {
          sink.next(pos);
        }
        return pos + (pos == a ? firstBatchSize : batchSize);
      }).concatMap(pos -> {
        int n = (int) Math.min(pos == a ? firstBatchSize : batchSize, b - pos);
        Batch fast = gathered(k, pos, n);
        return fast != null ? Mono.just(fast) : collated(split, pos, n);
      }, 0);
    });
  }

  /** Rows {@code [pos, pos + n)} of part {@code k} gathered from published segments, or null when a block is not. */
  private Batch gathered(int k, long pos, int n) {
    CacheStore store = state.store(pass);
    if (store == null) {
      return null;
    }
    Geometry g = state.geometry;
    long last = g.block(k, pos + n - 1);
    for (long block = g.block(k, pos); block <= last; block++) {
      if (store.lookup(block, pass) == null) {
        return null;
      }
    }
    long base = g.partStart(k);
    long[] indices = new long[n];
    for (int i = 0; i < n; i++) {
      indices[i] = base + pos + i;
    }
    try (BatchBuilder builder = BatchBuilder.create(state.schema(), n, pool)) {
      int i = 0;
      while (i < n) {
        long block = g.block(k, pos + i);
        long blockEnd = g.blockFirstRow(block) + g.blockSize(block);
        int run = (int) Math.min(n - i, blockEnd - (pos + i));
        store.opened(block).rows().gather(indices, i, run, builder);
        pass.served(block, run);
        i += run;
      }
      return builder.build();
    }
  }

  private Mono<Batch> collated(Split split, long pos, int n) {
    return read(split, pos, pos + n).collectList().map(examples -> {
      try (BatchBuilder builder = BatchBuilder.create(state.schema(), n, pool)) {
        for (Example e : examples) {
          builder.append(e);
        }
        return builder.build();
      }
    });
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
