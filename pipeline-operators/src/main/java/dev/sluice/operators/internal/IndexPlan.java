package dev.sluice.operators.internal;

import dev.sluice.core.Batch;
import dev.sluice.core.Options;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.RandomAccessDataset;
import dev.sluice.core.Schema;
import dev.sluice.core.internal.OrderedParallel;
import dev.sluice.core.spi.BatchBuilder;
import dev.sluice.core.spi.BufferPool;
import java.util.List;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Schedulers;

/**
 * The index path over a {@link RandomAccessDataset}: the leading run of shuffle / shard / take /
 * skip stages, an optional {@code batch} and the take / skip stages after it become an
 * {@link IndexSequence} computed from (seed, epoch) per position, and per batch one {@code long[]}
 * of source indices handed to the source's {@code gather}. No {@code Example} is created per row and
 * nothing is read that is not emitted.
 */
final class IndexPlan {
  /** Batches each parallel gather worker may hold before the subscriber takes them. */
  static final int AHEAD = 4;

  private IndexPlan() {}

  /** How many leading stages of {@code stages} (normalized) the index path runs. */
  static int planned(List<Stage> stages) {
    int i = 0;
    while (i < stages.size() && isIndexStage(stages.get(i))) {
      i++;
    }
    if (i < stages.size() && stages.get(i).kind() == Stage.Kind.BATCH) {
      i++;
      while (i < stages.size() && RangeCuts.isCut(stages.get(i))) {
        i++;
      }
    }
    return i;
  }

  /** True for the stages the index sequence computes. */
  static boolean isIndexStage(Stage s) {
    return switch (s.kind()) {
      case SHUFFLE, SHARD, TAKE, SKIP -> true;
      case BUFFER_SHUFFLE, BATCH, REPEAT, ELEMENT -> false;
    };
  }

  /** One planned pass, the schema of its elements (null for batches) and the first stage left. */
  record Planned(Flux<?> flux, Schema schema, int next) {}

  static Planned plan(RandomAccessDataset<?> source, List<Stage> stages, Options options, PipelineContext ctx) {
    return plan(source, stages, options, ctx, 0, 0);
  }

  /**
   * The pass without its first {@code skip} elements (batches, with a {@code batch}), computing
   * nothing for them.
   *
   * @param offset positions of the shared order before the first {@code shard} that an earlier
   *     world of ranks consumed in this epoch: the shard partitions the rest ({@link #sequence})
   */
  static Planned plan(RandomAccessDataset<?> source, List<Stage> stages, Options options, PipelineContext ctx,
      long skip, long offset) {
    return plan(source, stages, options, ctx, skip, offset, AHEAD);
  }

  /**
   * {@link #plan(RandomAccessDataset, List, Options, PipelineContext, long, long)} whose parallel
   * gather workers may each hold {@code ahead} batches before the subscriber takes them.
   */
  static Planned plan(RandomAccessDataset<?> source, List<Stage> stages, Options options, PipelineContext ctx,
      long skip, long offset, int ahead) {
    Sequenced s = sequence(source, stages, ctx, offset);
    int i = s.next();
    IndexSequence seq = s.seq();
    if (i < stages.size() && stages.get(i).kind() == Stage.Kind.BATCH) {
      BatchStage b = (BatchStage) stages.get(i);
      RangeCuts batches = batchRange(stages, i, seq.length());
      long first = batches.first() + Math.min(skip, batches.last() - batches.first());
      return new Planned(gatherBatches(source, seq, b, first, batches.last(), options, ahead), null,
          batchesEnd(stages, i));
    }
    return new Planned(elements(source, seq.skipped(skip)), Schemas.declared(source), i);
  }

  /**
   * The batches each of {@code workers} parallel gather workers may hold when a {@code
   * prefetch(bufferSize)} right after the gather is folded into it: {@link #AHEAD} plus the worker's
   * share of {@code bufferSize}. The gather's workers already run ahead of the subscriber, so the
   * folded prefetch adds no producer thread and no hand-over of its own; the subscriber takes the
   * batches on its own thread as the workers publish them.
   */
  static int foldedAhead(int bufferSize, int workers) {
    return AHEAD + (bufferSize + workers - 1) / workers;
  }

  /** The index sequence of the leading index stages and the index of the first stage after them. */
  record Sequenced(IndexSequence seq, int next) {}

  /**
   * The leading index stages as one sequence. With {@code offset > 0} the first {@code shard}
   * partitions the shared order from position {@code offset} on: the positions before it were
   * consumed by an earlier world of ranks (a resume with another number of ranks).
   */
  static Sequenced sequence(RandomAccessDataset<?> source, List<Stage> stages, PipelineContext ctx, long offset) {
    IndexSequence seq = IndexSequence.identity(source.size());
    int i = 0;
    int shuffles = 0;
    boolean sharded = false;
    for (; i < stages.size() && isIndexStage(stages.get(i)); i++) {
      Stage s = stages.get(i);
      seq = switch (s.kind()) {
        case SHUFFLE -> {
          Long seed = ((ShuffleStage) s).seed();
          yield seq.shuffled(seed != null ? seed : ctx.seed(), ctx.epoch(), shuffles++);
        }
        case SHARD -> {
          ShardStage sh = (ShardStage) s;
          IndexSequence rest = sharded ? seq : seq.skipped(offset);
          sharded = true;
          yield rest.sharded(sh.numShards(), sh.index(), sh.policy());
        }
        case TAKE -> seq.taken(((TakeStage) s).count());
        case SKIP -> seq.skipped(((SkipStage) s).count());
        case BUFFER_SHUFFLE, BATCH, REPEAT, ELEMENT -> throw new IllegalStateException(s.describe() + " is not an index stage");
      };
    }
    if (offset > 0 && !sharded) {
      throw new IllegalStateException("an offset of " + offset + " needs a shard stage on the index path");
    }
    return new Sequenced(seq, i);
  }

  /** The batch numbers of the {@code batch} at {@code i} over {@code length} positions, after its take / skip. */
  private static RangeCuts batchRange(List<Stage> stages, int i, long length) {
    BatchStage b = (BatchStage) stages.get(i);
    RangeCuts batches = new RangeCuts(0, b.dropRemainder() ? length / b.batchSize()
        : (length + b.batchSize() - 1) / b.batchSize());
    for (int j = i + 1; j < stages.size() && RangeCuts.isCut(stages.get(j)); j++) {
      batches.apply(stages.get(j));
    }
    return batches;
  }

  /** The index of the first stage after the {@code batch} at {@code i} and its take / skip. */
  private static int batchesEnd(List<Stage> stages, int i) {
    int j = i + 1;
    while (j < stages.size() && RangeCuts.isCut(stages.get(j))) {
      j++;
    }
    return j;
  }

  /** The number of elements (batches, with a {@code batch}) of the planned stages' output. */
  static long length(RandomAccessDataset<?> source, List<Stage> stages, PipelineContext ctx, long offset) {
    Sequenced s = sequence(source, stages, ctx, offset);
    if (s.next() < stages.size() && stages.get(s.next()).kind() == Stage.Kind.BATCH) {
      RangeCuts batches = batchRange(stages, s.next(), s.seq().length());
      return batches.last() - batches.first();
    }
    return s.seq().length();
  }

  /**
   * The planned elements (without a {@code batch}) as a {@link Positional} stream: any position
   * and any set of positions computed and read without the others.
   */
  static Positional positional(RandomAccessDataset<?> source, List<Stage> stages, PipelineContext ctx, long offset) {
    IndexSequence seq = sequence(source, stages, ctx, offset).seq();
    return new Positional() {
      @Override
      public long length() {
        return seq.length();
      }

      @Override
      public Flux<?> from(long position) {
        return elements(source, seq.skipped(position));
      }

      @Override
      public Flux<?> at(long[] positions) {
        return Flux.defer(() -> {
          long[] indices = positions.clone();
          seq.mapInPlace(indices, indices.length);
          return elements(source, IndexSequence.of(indices));
        });
      }
    };
  }

  /** One element per position of {@code seq} ({@link FluxIndexElements}). */
  private static Flux<Object> elements(RandomAccessDataset<?> source, IndexSequence seq) {
    return new FluxIndexElements(source, seq);
  }

  /** Batches {@code first .. last-1} of {@code seq}, each gathered by the source into pooled memory. */
  private static Flux<Batch> gatherBatches(RandomAccessDataset<?> source, IndexSequence seq, BatchStage b,
      long first, long last, Options options, int ahead) {
    return Flux.defer(() -> {
      if (first >= last) {
        return Flux.empty();
      }
      Schema schema = Schemas.of(source);
      BufferPool pool = options.memory().pool("batch");
      int batchSize = b.batchSize();
      long length = seq.length();
      if (b.numParallelCalls() <= 1) {
        long[] indices = new long[(int) Math.min(batchSize, length)]; // per subscription; the builder copies what it keeps
        return PlanCompiler.longRange(first, last).map(n -> gather(source, seq, schema, pool, n, batchSize, length, indices));
      }
      // worker w gathers the batches first + w, first + w + P, ...: no task and no allocation per batch
      int parallelism = b.numParallelCalls();
      long[][] scratch = new long[parallelism][];
      return OrderedParallel.<Batch>range(last - first, (w, k) -> {
        long[] indices = scratch[w];
        if (indices == null) {
          indices = scratch[w] = new long[(int) Math.min(batchSize, length)];
        }
        return gather(source, seq, schema, pool, first + k, batchSize, length, indices);
      }, parallelism, ahead, Schedulers.boundedElastic(), Batch::close);
    });
  }

  private static Batch gather(RandomAccessDataset<?> source, IndexSequence seq, Schema schema, BufferPool pool,
      long number, int batchSize, long length, long[] indices) {
    long from = number * batchSize;
    int size = (int) Math.min(batchSize, length - from);
    seq.fill(from, indices, size);
    try (BatchBuilder builder = BatchBuilder.create(schema, size, pool)) {
      source.gather(indices, 0, size, builder);
      if (builder.size() != size) {
        throw new IllegalStateException(source + ": gather committed " + builder.size() + " of " + size + " rows");
      }
      return builder.build();
    }
  }
}
