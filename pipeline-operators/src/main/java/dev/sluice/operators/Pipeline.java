package dev.sluice.operators;

import dev.sluice.core.Batch;
import dev.sluice.core.Dataset;
import dev.sluice.core.Example;
import dev.sluice.core.Shape;
import dev.sluice.core.Options;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.PipelineIterator;
import dev.sluice.core.PipelineState;
import dev.sluice.core.Positioned;
import dev.sluice.core.RandomAccessDataset;
import dev.sluice.core.ReadCache;
import dev.sluice.core.spi.BudgetRequests;
import dev.sluice.operators.internal.BatchStage;
import dev.sluice.operators.internal.BucketOperator;
import dev.sluice.operators.internal.BucketStage;
import dev.sluice.operators.internal.BufferShuffleStage;
import dev.sluice.operators.internal.EnumerateStage;
import dev.sluice.operators.internal.GroupByWindowStage;
import dev.sluice.operators.internal.IgnoreErrorsStage;
import dev.sluice.operators.internal.RebatchStage;
import dev.sluice.operators.internal.WindowOperator;
import dev.sluice.operators.internal.WindowStage;
import dev.sluice.operators.internal.ScanStage;
import dev.sluice.operators.internal.FilterStage;
import dev.sluice.operators.internal.InterleaveStage;
import dev.sluice.operators.internal.PaddedBatchStage;
import dev.sluice.operators.internal.UnbatchStage;
import dev.sluice.operators.internal.cache.CachedDataset;
import dev.sluice.operators.internal.cache.CachedPasses;
import dev.sluice.operators.internal.MapStage;
import dev.sluice.operators.internal.Plan;
import dev.sluice.operators.internal.PlanBuilder;
import dev.sluice.operators.internal.PlanCompiler;
import dev.sluice.operators.internal.PipelineRuns;
import dev.sluice.operators.internal.PrefetchStage;
import dev.sluice.operators.internal.RepeatStage;
import dev.sluice.operators.internal.ShardOperator;
import dev.sluice.operators.internal.ShardStage;
import dev.sluice.operators.internal.ShuffleStage;
import dev.sluice.operators.internal.SkipStage;
import dev.sluice.operators.internal.Stage;
import dev.sluice.operators.internal.TakeStage;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.function.ToIntFunction;
import java.util.function.ToLongFunction;
import java.util.stream.Collectors;
import reactor.core.publisher.Flux;

/**
 * The fluent, tf.data-style description of an input pipeline: a source plus an
 * ordered list of operators, immutable (every operator returns a new pipeline) and lazy (nothing
 * is read until a pass is subscribed). A pipeline is itself a {@link Dataset}, so pipelines nest.
 *
 * <p><b>Passes and epochs.</b> {@link #flux(PipelineContext)} is one pass; it depends only on the
 * context's (seed, epoch) and the operators' arguments, so two subscriptions with the same context
 * yield the same elements in the same order, and {@link #epochs(PipelineContext, long)} reshuffles
 * every epoch without a {@code set_epoch} call.
 *
 * <p><b>The fast path.</b> On a {@link RandomAccessDataset}, {@code shuffle()}, {@code shard},
 * {@code take}, {@code skip} and {@code batch} compile into an index plan: per batch one
 * {@code long[]} of source indices computed in O(1) memory from (seed, epoch, shard), filled by the
 * source's {@code gather} straight into pooled column memory. No {@code Example} is created per row
 * and nothing is read that is not emitted.
 *
 * <p><b>The columnar path.</b> On a {@link dev.sluice.core.BatchSplitDataset} that is not random
 * access (Parquet row groups, an Arrow file's split view) with known row counts, {@code shuffle},
 * {@code shard}, {@code take} and {@code skip} before {@code batch} read the rank's row ranges with
 * the source's {@code readBatches} and cut them into the pipeline's batches by copying column ranges
 * (a batch may span two splits); no {@code Example} is created per row, and the batches hold exactly
 * the rows, indices and values the element path would batch. A shuffle within the rank is a window
 * shuffle there ({@link #shuffle()}).
 *
 * <p>Operators after the first one these paths cannot express (element operators, and anything
 * after them) run as Reactor transformers on the element path; {@link #explain()} says which path
 * each stage runs on.
 *
 * <pre>{@code
 * PipelineContext ctx = PipelineContext.fromEnvironment().withSeed(42);
 * Pipeline<Batch> train = Pipeline.from(Npy.open(dir))
 *     .shuffle()
 *     .shard(ctx.worldSize(), ctx.rank())
 *     .batch(256)
 *     .prefetch(4);
 * train.epochs(ctx, 10).subscribe(batch -> { try (batch) { step(batch); } });
 * }</pre>
 *
 * @param <T> the element type: {@link dev.sluice.core.Example}, {@link Batch} or a user type
 */
public final class Pipeline<T> implements Dataset<T> {
  private final Dataset<?> source;
  private final List<Stage> stages;
  private final Options options;
  private volatile Plan plan; // built on first use: the pipeline is immutable

  private Pipeline(Dataset<?> source, List<Stage> stages, Options options) {
    this.source = source;
    this.stages = List.copyOf(stages);
    this.options = options;
  }

  /**
   * A pipeline over {@code dataset} with no operators (a pipeline is returned as it is).
   *
   * @param dataset any dataset; a {@link RandomAccessDataset} enables the index plan
   */
  @SuppressWarnings("unchecked")
  public static <T> Pipeline<T> from(Dataset<T> dataset) {
    Objects.requireNonNull(dataset, "dataset");
    if (dataset instanceof Pipeline<?> p) {
      return (Pipeline<T>) p;
    }
    return new Pipeline<>(dataset, List.of(), Options.defaults());
  }

  /**
   * One pass for {@code context}: its seed and epoch drive every shuffle. The context is also put in
   * the Reactor {@code Context} (key {@code PipelineContext.class}) for plain transformers.
   *
   * <p>Discard support: every batch dropped inside the pass (on cancel or error) is closed.
   */
  @Override
  @SuppressWarnings("unchecked")
  public Flux<T> flux(PipelineContext context) {
    Objects.requireNonNull(context, "context");
    return pass(context, 0, 0);
  }

  /**
   * The pass for {@code context} without its first {@code skip} elements ({@link CachedPasses#pass}),
   * asking for the options' read cache budget ({@link ReadCache#request}) and page cache budget
   * ({@link Options#pageCacheBytes()}) while it runs.
   */
  @SuppressWarnings("unchecked")
  private Flux<T> pass(PipelineContext context, long skip, long offset) {
    Flux<T> pass = Flux.defer(() -> (Flux<T>) CachedPasses.pass(plan(), context, skip, offset));
    long readCache = options.readCacheBytes();
    if (readCache != Options.READ_CACHE_DEFAULT) {
      Flux<T> inner = pass;
      pass = Flux.using(() -> ReadCache.request(readCache), r -> inner, BudgetRequests.Request::close);
    }
    long pageCache = options.pageCacheBytes();
    if (pageCache != Options.PAGE_CACHE_DEFAULT) {
      Flux<T> inner = pass;
      pass = Flux.using(() -> BudgetRequests.PAGE_CACHE.request(pageCache), r -> inner,
          BudgetRequests.Request::close);
    }
    return pass;
  }

  /** The plan of this pipeline, built once. */
  Plan plan() {
    Plan p = plan;
    if (p == null) {
      p = PlanBuilder.build(source, stages, options);
      plan = p;
    }
    return p;
  }

  /** The runs of this pipeline: epochs, states, resumes and the iterators over them. */
  private PipelineRuns<T> runs() {
    return new PipelineRuns<>(plan(), options.memory(), this::pass,
        memory -> withOptions(options.toBuilder().memory(memory).build()).runs());
  }

  /**
   * The prefix of the meters of a whole pass of a pipeline that emits batches and has a metrics
   * registry (reactor-core-micrometer's {@code Micrometer.metrics}): {@code sluice.pipeline.flow.duration}
   * (one per pass, tagged with how it ended), {@code sluice.pipeline.onNext.delay} (the time between
   * batches), {@code sluice.pipeline.requested} and {@code sluice.pipeline.subscribed}, each tagged
   * {@code pipeline}.
   */
  public static final String PASS_METRICS = dev.sluice.operators.internal.PlannedPass.METRICS;

  /** Epoch 0 of {@link PipelineContext#defaults()} (seed 0, rank 0 of 1). */
  @Override
  public Flux<T> flux() {
    return flux(PipelineContext.defaults());
  }

  /**
   * {@code count} passes one after another, for epochs {@code context.epoch() ..
   * context.epoch() + count - 1}, each with its own shuffle. The next epoch starts when the previous
   * one completes.
   *
   * @param count number of epochs, &ge; 0
   */
  public Flux<T> epochs(PipelineContext context, long count) {
    return runs().epochs(context, count);
  }

  /**
   * One pass for {@code context} as a blocking iterator that cannot leak, for plain Java loops:
   * closing it (try-with-resources, also after {@code break} or an exception) cancels the pass and
   * closes every batch that was produced and not handed out, in the iterator's queue and in the
   * pipeline's stages (prefetch queues, parallel map chunks), and returns once no worker of the
   * pass is running or queued any more and that memory is back: a worker that was building a batch
   * at the moment of the close has finished and given it back. The consumer closes the batches it
   * takes.
   *
   * <pre>{@code
   * try (PipelineIterator<Batch> batches = pipeline.iterate(ctx)) {
   *   for (Batch batch : batches) {
   *     try (batch) {
   *       step(batch);
   *     }
   *   }
   * }
   * }</pre>
   *
   * <p>Prefer this to {@code flux(ctx).toIterable()} and {@code toStream()}: Reactor's blocking
   * iterables queue elements where no discard hook reaches them, so batches left in that queue when
   * the loop stops early are only returned by the leak detector once they are collected.
   *
   * <p><b>Reactive Streams semantics.</b> Requests one element when the consumer asks for one and
   * none is waiting; the consumer parks while it waits. A failure is thrown by {@code hasNext()}
   * after the elements before it.
   *
   * @see PipelineIterator
   */
  public PipelineIterator<T> iterate(PipelineContext context) {
    return iterate(context, 1);
  }

  /** {@link #iterate(PipelineContext)} for epoch 0 of {@link PipelineContext#defaults()}. */
  public PipelineIterator<T> iterate() {
    return iterate(PipelineContext.defaults());
  }

  /**
   * {@link #epochs(PipelineContext, long)} as a blocking iterator that cannot leak (see
   * {@link #iterate(PipelineContext)}): {@code count} passes one after another.
   *
   * @param count number of epochs, &ge; 0
   */
  public PipelineIterator<T> iterate(PipelineContext context, long count) {
    return runs().iterate(context, count);
  }

  // ---------------------------------------------------------------------------------------------
  // State and resume

  /**
   * One pass for {@code context}, each element with the pipeline's state right after it
   * ({@link Positioned#state()}): the {@code Flux} form of {@link PipelineIterator#state()}. Save the
   * state of the element your consumer has finished with; {@link #resume(PipelineState)} yields
   * exactly the elements after it. Elements a stage produced ahead (prefetched, mapped in
   * parallel) are not counted until they are emitted here.
   *
   * <p><b>Discard support.</b> As {@link #flux(PipelineContext)}; a dropped {@code Positioned}
   * batch is closed.
   *
   * @throws UnsupportedOperationException if the pipeline cannot be resumed exactly (a map or
   *     interleave with {@code deterministic = false}); the message names the stage
   */
  public Flux<Positioned<T>> withState(PipelineContext context) {
    return withState(context, 1);
  }

  /**
   * {@link #epochs(PipelineContext, long)} with each element's state ({@link #withState(PipelineContext)}).
   * The last element of an epoch carries the state (epoch, its count); resuming from it starts at the
   * next epoch's first element.
   *
   * @param count number of epochs, &ge; 0
   */
  public Flux<Positioned<T>> withState(PipelineContext context, long count) {
    return runs().withState(context, count);
  }

  /**
   * The state before the first element of {@link #withState(PipelineContext, long)
   * withState(context, count)}: resuming from it runs those {@code count} epochs whole. A consumer
   * that saves a checkpoint before it has taken any element saves this one.
   *
   * @param count number of epochs, &ge; 0
   * @throws UnsupportedOperationException if the pipeline cannot be resumed exactly
   */
  public PipelineState initialState(PipelineContext context, long count) {
    return runs().initialState(context, count);
  }

  /**
   * The rest of the run {@code state} was taken in ({@link #resume(PipelineState)}), each element
   * with its state: a resumed run resumes again from any of them.
   */
  public Flux<Positioned<T>> withState(PipelineState state) {
    return withState(Objects.requireNonNull(state, "state").context(), state);
  }

  /**
   * {@link #resume(PipelineContext, PipelineState)} with each element's state.
   */
  public Flux<Positioned<T>> withState(PipelineContext context, PipelineState state) {
    return runs().withState(context, state);
  }

  /**
   * The rest of the run {@code state} was taken in: the elements after the one it was taken after,
   * to the end of its epoch, then the epochs after it up to the end of the run (one pass for a
   * state of {@link #iterate(PipelineContext)}, {@code n} epochs for {@link #iterate(PipelineContext,
   * long)}), in the context the state records. Nothing is lost and nothing repeated, across epoch
   * boundaries too: a state taken after the last element of an epoch resumes at the next epoch's
   * first element. A resumed run's states resume again the same way.
   *
   * <p>What resuming costs depends on the path ({@link #explain()}): on the index path nothing is
   * read again (positions are computed from the state); on the columnar path decoding starts at the
   * state's row (with a window shuffle, at the start of its window); a buffer shuffle over an
   * addressable stream recomputes its buffer from positions and reads again only what the buffer
   * held; a deterministic interleave over datasets whose lengths are known ({@link #cardinality})
   * recomputes its cycle from those lengths and reads none of their elements again; stages whose
   * counts only reading tells (filter, an interleave over datasets of unknown length, a buffer
   * shuffle over a stream) are replayed from the start of the epoch.
   *
   * @throws dev.sluice.core.CheckpointException if the state was taken on another dataset, another
   *     pipeline shape, with another seed or on another shard; the message names what differs
   * @throws UnsupportedOperationException if the pipeline cannot be resumed exactly
   */
  public Flux<T> resume(PipelineState state) {
    return resume(Objects.requireNonNull(state, "state").context(), state);
  }

  /**
   * {@link #resume(PipelineState)} for this process's {@code context} (its rank, world size and
   * local rank; its seed must be the state's, and the epoch comes from the state). With another
   * number of shards than the state's, as after a change of the world size, the rest of the state's
   * epoch is re-partitioned: the state must come from a rank of the old world at the same step as
   * every other rank ({@link PipelineState#common}); the elements the old world handed out are a
   * prefix of the epoch's shared order, and the new shards partition the rest under their
   * {@link EqualLength} policy, so that with {@code UNEVEN} every remaining element is read once
   * overall ({@code PAD} pads with the rest's first elements, {@code DROP} drops its last
   * {@code rest mod shards}). This needs the index path, with one {@code shard} and no take or skip
   * after it; the following epochs are partitioned as usual.
   */
  public Flux<T> resume(PipelineContext context, PipelineState state) {
    return runs().resume(context, state);
  }

  /**
   * {@link #resume(PipelineState)} as a blocking iterator that cannot leak ({@link #iterate(PipelineContext)}),
   * whose {@link PipelineIterator#state()} continues from {@code state}.
   */
  public PipelineIterator<T> iterate(PipelineState state) {
    return iterate(Objects.requireNonNull(state, "state").context(), state);
  }

  /**
   * {@link #resume(PipelineContext, PipelineState)} as a blocking iterator that cannot leak, whose
   * {@link PipelineIterator#state()} continues from {@code state}.
   */
  public PipelineIterator<T> iterate(PipelineContext context, PipelineState state) {
    return runs().iterate(context, state);
  }

  /**
   * The number of elements of the pass for {@code context} when the planner knows it without
   * reading (tf.data's {@code cardinality}): on the index and columnar paths, over a split source
   * with known row counts, and through the stages after them whose counts follow (take, skip,
   * batch, paddedBatch, ordered map, prefetch, buffer shuffle); -1 when only reading tells (a
   * filter, an interleave, a streaming source).
   */
  public long cardinality(PipelineContext context) {
    Objects.requireNonNull(context, "context");
    return PlanCompiler.length(plan(), context, 0);
  }

  /** A pipeline over {@code source} with no operators and {@code options}, for the factories of this package. */
  static <T> Pipeline<T> over(Dataset<?> source, Options options) {
    return new Pipeline<>(source, List.of(), options);
  }

  /** The pipeline's options ({@link Options#defaults()} unless {@link #withOptions} set others). */
  public Options options() {
    return options;
  }

  /**
   * The global shuffle: a uniform permutation of the elements per (seed, epoch), in O(1) memory (a
   * keyed bijection, a Feistel network with cycle walking), reading nothing it does not emit. The
   * seed is the context's ({@code --seed}, default 0, shared by every rank); each epoch has its own
   * permutation.
   *
   * <p><b>Reactive Streams semantics.</b> Emits the element of the next permuted position on
   * demand, one {@code get} per element (or one {@code gather} per batch after {@link #batch});
   * completes after the last position; cancel stops it at once. Holds nothing, so nothing is
   * discarded.
   *
   * <p>On a {@link dev.sluice.core.SplitDataset} (files, row groups, chunks) it is a block shuffle
   * ({@link SplitShuffle#BLOCKS}): every split is cut into blocks of a bounded number of rows, the
   * epoch's sequence is a permutation of all blocks per (seed, epoch), shared by every rank,
   * {@code shard} gives each rank its part of that sequence (so a rank reads a different random part
   * of the data every epoch, whatever the number of splits), and a buffer shuffle of
   * {@value dev.sluice.operators.internal.SplitStages#SPLIT_SHUFFLE_BUFFER} elements runs within the
   * rank's stream, each of its windows filled from blocks spread over the dataset. On the columnar
   * path (a {@code batch} follows) that buffer is a <em>window shuffle</em>: the rank's rows are
   * decoded a window of about 10,000 rows at a time (rounded to whole decoded batches), the next
   * window on a worker while the current one is served, and each batch gathers its rows from the
   * window by a uniform random permutation of the window that depends only on (seed, epoch, rank);
   * memory is the window served plus the one being decoded. Every row of a window is equally
   * likely at each of its positions, so it is at least as random as a buffer shuffle of the same
   * size. {@link #shuffle(SplitShuffle) shuffle(SplitShuffle.SPLITS)} shuffles whole splits only.
   *
   * <p>On a random-access source larger than {@link Options#blockShuffleThreshold()} (half the
   * physical memory unless set), where the global permutation would read each row at a random
   * place of a file the page cache cannot hold, it is the same block shuffle over the source seen
   * as one split of blocks of about 2 MiB of rows ({@link RandomAccessShuffle#AUTO}); {@link #explain()}
   * says which shuffle runs and why, and {@link #shuffle(RandomAccessShuffle)} chooses explicitly.
   *
   * <p>Caveats: needs a {@link RandomAccessDataset} (or a split source) with only {@code shuffle}, {@code shard},
   * {@code take} and {@code skip} before it; a shuffle written after {@code shard} runs before it,
   * so every rank takes its stride of the same permutation (as DistributedSampler). For streaming
   * sources use the buffer shuffle {@link #shuffle(int)}.
   *
   * <pre>{@code
   * Pipeline.from(Datasets.range(10)).shuffle().flux(ctx.withEpoch(3))  // a permutation of 0..9
   * }</pre>
   *
   * @throws UnsupportedOperationException if the source is not random-access or an element
   *     operator comes before
   */
  public Pipeline<T> shuffle() {
    return shuffle(SplitShuffle.BLOCKS);
  }

  /**
   * {@link #shuffle()} with a choice of how a split source's rows are ordered:
   * {@link SplitShuffle#BLOCKS} (what {@code shuffle()} does) or {@link SplitShuffle#SPLITS}, which
   * only shuffles the order of whole splits (cheaper, but with few splits a rank reads the same rows
   * every epoch). On a random-access source both are what {@code shuffle()} does there.
   *
   * @param splits how a split source's rows are ordered
   * @throws UnsupportedOperationException as {@link #shuffle()}
   */
  public Pipeline<T> shuffle(SplitShuffle splits) {
    Objects.requireNonNull(splits, "splits");
    return shuffle(new ShuffleStage(null, splits));
  }

  /**
   * {@link #shuffle()} with a choice of how a random-access source's rows are ordered:
   * {@link RandomAccessShuffle#GLOBAL} (the uniform permutation, whatever the size),
   * {@link RandomAccessShuffle#BLOCKS} (the block shuffle, whatever the size) or
   * {@link RandomAccessShuffle#AUTO} (what {@code shuffle()} does: blocks above
   * {@link Options#blockShuffleThreshold()}). On a split source it is {@code shuffle()}.
   *
   * <pre>{@code
   * Pipeline.from(bigNpy).shuffle(RandomAccessShuffle.BLOCKS).shard(world, rank).batch(256)
   * }</pre>
   *
   * @param order how a random-access source's rows are ordered
   * @throws UnsupportedOperationException as {@link #shuffle()}, or when {@code BLOCKS} follows a
   *     {@code take} or {@code skip}
   */
  public Pipeline<T> shuffle(RandomAccessShuffle order) {
    Objects.requireNonNull(order, "order");
    Pipeline<T> out = shuffle(new ShuffleStage(null, SplitShuffle.BLOCKS, order));
    if (order == RandomAccessShuffle.BLOCKS) {
      out.plan(); // a block shuffle after take or skip fails here, not at the next operator
    }
    return out;
  }

  private Pipeline<T> shuffle(ShuffleStage stage) {
    if (!plan().acceptsShuffle()) {
      throw new UnsupportedOperationException("shuffle() is the global shuffle of a random-access source and must come "
          + "before any element operator, but the source is " + source
          + (stages.isEmpty() ? "" : " with " + describeStages()) + "; use the buffer shuffle shuffle(bufferSize)");
    }
    return with(stage);
  }

  /**
   * tf.data's buffer shuffle with the context's seed, reshuffled each epoch ({@link Shuffle}):
   * fills a buffer of {@code bufferSize} elements, then emits a uniformly chosen one of the full
   * buffer and refills its slot with the next element. The order depends only on (seed, epoch).
   *
   * <p><b>Reactive Streams semantics.</b> Emits on demand once the buffer is full (or upstream
   * completed); keeps at most {@code bufferSize} elements, counting those requested upstream;
   * completes after the buffer drains; an upstream error is passed on at once.
   *
   * <p><b>Discard support.</b> Buffered elements on cancel or error go to the discard hook; batches
   * are closed.
   *
   * <p>Caveat: on a split source a buffer shuffle runs after {@code shard}, whatever order it was
   * written in, so each rank shuffles its own range; on the columnar path it is a window shuffle of
   * {@code bufferSize} rows ({@link #shuffle()}).
   *
   * @param bufferSize elements held, &gt; 0
   */
  public Pipeline<T> shuffle(int bufferSize) {
    checkBuffer(bufferSize);
    return with(new BufferShuffleStage(bufferSize, null, true));
  }

  /**
   * tf.data's buffer shuffle {@code shuffle(buffer_size, seed, reshuffle_each_iteration)}.
   *
   * @param bufferSize elements held, &gt; 0
   * @param seed the shuffle's own seed (wins over the context's)
   * @param reshuffleEachIteration a new order each epoch (tf.data default true)
   * @see #shuffle(int)
   */
  public Pipeline<T> shuffle(int bufferSize, long seed, boolean reshuffleEachIteration) {
    checkBuffer(bufferSize);
    return with(new BufferShuffleStage(bufferSize, seed, reshuffleEachIteration));
  }

  private static void checkBuffer(int bufferSize) {
    if (bufferSize <= 0) {
      throw new IllegalArgumentException("bufferSize > 0 required but it was " + bufferSize);
    }
  }

  /** {@link #shard(int, int, EqualLength)} with {@link EqualLength#PAD}, DistributedSampler's default. */
  public Pipeline<T> shard(int numShards, int index) {
    return shard(numShards, index, EqualLength.PAD);
  }

  /**
   * The elements at positions {@code p} with {@code p mod numShards == index}: rank {@code index}'s
   * part of the (shuffled) order. {@code PAD} gives every rank {@code ceil(n / numShards)} elements
   * (wrapping around to the start), {@code DROP} {@code floor(n / numShards)}, {@code UNEVEN} the
   * exact partition; any {@code n} works, including 0, 1 and {@code n < numShards}.
   *
   * <p><b>Reactive Streams semantics.</b> On the index plan: computes only this rank's positions
   * and reads nothing of the other ranks; emits on demand; completes after the rank's last element.
   * On the element path ({@link Shard}): reads every element and keeps its stride.
   *
   * <p><b>Discard support.</b> On the element path, the other ranks' elements go to the discard
   * hook.
   *
   * <p>Caveat: shuffle before shard (a shuffle written after it is moved before it), with the same
   * seed on every rank, so the ranks partition one permutation.
   *
   * <p>On a {@link dev.sluice.core.SplitDataset} (files, row groups, chunks) with known row counts,
   * rank {@code index} takes a contiguous part of the epoch's (block-shuffled) row sequence with the
   * same counts, reading only those rows; with unknown counts it
   * reads everything and keeps its stride. There the buffer shuffles run after the shard, whatever
   * order they were written in.
   *
   * <pre>{@code
   * Pipeline.from(data).shuffle().shard(ctx.worldSize(), ctx.rank(), EqualLength.DROP)
   * }</pre>
   *
   * @param numShards number of shards (the world size), &gt; 0
   * @param index this shard (the rank), in {@code [0, numShards)}
   * @param policy the equal-length policy
   */
  public Pipeline<T> shard(int numShards, int index, EqualLength policy) {
    ShardOperator.checkShard(numShards, index);
    Objects.requireNonNull(policy, "policy");
    PlanBuilder.checkShard(source, numShards, index);
    return with(new ShardStage(numShards, index, policy));
  }

  /** {@link #batch(int, boolean, int)} keeping a smaller last batch, one gather at a time. */
  public Pipeline<Batch> batch(int batchSize) {
    return batch(batchSize, false, 1);
  }

  /** {@link #batch(int, boolean, int)} one gather at a time. */
  public Pipeline<Batch> batch(int batchSize, boolean dropRemainder) {
    return batch(batchSize, dropRemainder, 1);
  }

  /**
   * Consecutive examples as {@link Batch}es: one contiguous column per field, in pooled off-heap
   * memory from {@link Options#memory()} (pool {@code "batch"}); the consumer closes each batch.
   * On the index plan the source's {@code gather} copies the rows straight from the source (a
   * mapping) into the columns; on the columnar path the source's decoded batches are cut into
   * batches by copying column ranges, and a decoded batch that is exactly one batch is handed on as
   * it is (its memory is the source's); elsewhere examples are collated ({@link Batching}).
   *
   * <p><b>Reactive Streams semantics.</b> With {@code numParallelCalls = 1}, gathers one batch per
   * request on the requesting thread. With more, up to {@code numParallelCalls} workers of
   * {@code boundedElastic} each gather a run of 4 consecutive batches (one scheduler hop per run),
   * emitted in order, so the output does not depend on {@code numParallelCalls}; up to
   * {@code 4 × numParallelCalls} batches are then held ahead. On the columnar path,
   * {@code numParallelCalls} (or, when it is 1, the source's own decode parallelism) row ranges are
   * decoded at once on workers and kept in order. Completes after the last batch (smaller unless
   * {@code dropRemainder}); cancel stops new gathers.
   *
   * <p><b>Discard support.</b> Batches gathered but not delivered (cancel, error) go to the discard
   * hook and the pipeline closes them.
   *
   * <pre>{@code
   * Pipeline<Batch> batches = Pipeline.from(data).shuffle().batch(256, true, 2);
   * }</pre>
   *
   * @param batchSize rows per batch, &gt; 0
   * @param dropRemainder drop a last batch smaller than {@code batchSize} (tf.data default false)
   * @param numParallelCalls batches gathered concurrently, &gt; 0 (default 1)
   */
  public Pipeline<Batch> batch(int batchSize, boolean dropRemainder, int numParallelCalls) {
    checkPositive("batchSize", batchSize);
    checkPositive("numParallelCalls", numParallelCalls);
    return with(new BatchStage(batchSize, dropRemainder, numParallelCalls));
  }

  /**
   * At most the first {@code count} elements (batches, after {@code batch}). On the index plan the
   * rest is never computed or read.
   *
   * <p><b>Reactive Streams semantics.</b> Emits the first {@code count} elements and completes,
   * cancelling the upstream; never requests more than {@code count}.
   *
   * <p><b>Discard support.</b> Holds nothing; batches gathered ahead by {@code numParallelCalls}
   * are closed when the pass ends.
   *
   * <pre>{@code
   * Pipeline.from(data).shuffle().take(1000)          // 1,000 random examples, a new sample each epoch
   * Pipeline.from(data).batch(256).take(10)           // the first 10 batches
   * }</pre>
   *
   * @param count elements, &ge; 0
   */
  public Pipeline<T> take(long count) {
    checkCount(count);
    return with(new TakeStage(count));
  }

  /**
   * Without the first {@code count} elements (batches, after {@code batch}). On the index plan the
   * skipped elements are never read.
   *
   * <p><b>Reactive Streams semantics.</b> Emits the elements after the first {@code count} on
   * demand; completes with the upstream. On the element path the skipped elements are requested
   * and dropped.
   *
   * <p><b>Discard support.</b> Skipped elements on the element path go to the discard hook.
   *
   * <pre>{@code
   * Pipeline.from(data).shuffle().skip(1000).take(500)  // positions 1000..1499 of the epoch's order
   * }</pre>
   *
   * @param count elements, &ge; 0
   */
  public Pipeline<T> skip(long count) {
    checkCount(count);
    return with(new SkipStage(count));
  }

  /**
   * Produces up to {@code bufferSize} elements ahead of the consumer on another thread
   * ({@link Prefetch#of(int)}: {@code subscribeOn} + {@code publishOn} with a bounded queue, fused
   * into one operator whose idle consumer waits briefly for the next element instead of being
   * woken for each).
   *
   * <p><b>Reactive Streams semantics.</b> Emits queued elements on demand on a worker thread;
   * backpressures the producer when {@code bufferSize} elements are queued; completes after the
   * queue drains; cancel cancels the producer.
   *
   * <p><b>Discard support.</b> Queued elements on cancel or error go to the discard hook; batches
   * are closed.
   *
   * <p>Caveat: counts elements, not examples: after {@code batch(256)}, {@code prefetch(4)} holds
   * four batches.
   *
   * <pre>{@code
   * Pipeline.from(data).shuffle().batch(256).prefetch(4)
   * }</pre>
   *
   * <p>With {@link Prefetch#AUTOTUNE} (tf.data's {@code prefetch(AUTOTUNE)}) the buffer starts at 2
   * elements and doubles, up to {@link Prefetch#AUTOTUNE_MAX}, each time the consumer finds it empty
   * (the producer fell behind) while the memory manager holds less than half its limit; the elements
   * and their order are the same whatever the size.
   *
   * @param bufferSize elements ahead, &gt; 0, or {@link Prefetch#AUTOTUNE}
   */
  public Pipeline<T> prefetch(int bufferSize) {
    if (bufferSize <= 0 && bufferSize != Prefetch.AUTOTUNE) {
      throw new IllegalArgumentException("bufferSize > 0 (or AUTOTUNE = -1) required but it was " + bufferSize);
    }
    return with(new PrefetchStage(bufferSize));
  }

  /**
   * Everything before it, forever, the epoch advancing by one each pass (so each pass reshuffles).
   * tf.data's {@code repeat()}.
   */
  public Pipeline<T> repeat() {
    return with(new RepeatStage(-1));
  }

  /**
   * Everything before it {@code count} times, for epochs {@code e .. e + count - 1} of the pass's
   * context; operators after it see one long stream (a batch may span two epochs, as in tf.data).
   *
   * <p><b>Reactive Streams semantics.</b> Subscribes to the next pass when the previous completes;
   * errors end the whole stream; cancel cancels the running pass.
   *
   * <p><b>Discard support.</b> Holds nothing itself; the running pass releases what it holds.
   *
   * <pre>{@code
   * Pipeline.from(data).shuffle().repeat(3).batch(256)  // 3 epochs, each reshuffled, batched as one stream
   * }</pre>
   *
   * @param count passes, &ge; 0
   */
  public Pipeline<T> repeat(long count) {
    checkCount(count);
    return with(new RepeatStage(count));
  }

  /**
   * tf.data's {@code map(fn)}: {@code fn} applied to each element on the subscriber's thread.
   *
   * @see #map(Function, int, boolean)
   */
  public <R> Pipeline<R> map(Function<? super T, ? extends R> fn) {
    return map(fn, 1);
  }

  /**
   * {@code map(fn, numParallelCalls)} in the order of the {@link Options#deterministic() options}
   * (ordered by default).
   *
   * @see #map(Function, int, boolean)
   */
  public <R> Pipeline<R> map(Function<? super T, ? extends R> fn, int numParallelCalls) {
    Objects.requireNonNull(fn, "fn");
    checkParallel(numParallelCalls);
    return with(new MapStage((t, ctx) -> fn.apply(cast(t)), numParallelCalls, null, false));
  }

  /**
   * tf.data's {@code map(fn, num_parallel_calls, deterministic)} ({@link ParallelMap}): elements go
   * to {@code numParallelCalls} workers in chunks (one scheduler hop per chunk), and with
   * {@code deterministic} the output order is the input order whatever the parallelism. A map
   * switches a random-access pipeline to the element path.
   *
   * <p><b>Reactive Streams semantics.</b> Requests a few chunks ahead; emits mapped elements on
   * demand; completes after the last; an error of {@code fn} arrives after the elements before it.
   *
   * <p><b>Discard support.</b> Elements in partial chunks and mapped elements not yet emitted go to
   * the discard hook on cancel or error; batches are closed.
   *
   * <p>Per-sample randomness: use {@link #mapWithContext} and {@link SampleRandom#of}.
   *
   * @param fn the function, called concurrently when {@code numParallelCalls > 1}
   * @param numParallelCalls chunks mapped at once, &gt; 0, or {@link ParallelMap#AUTOTUNE}
   * @param deterministic keep the input order (tf.data default true)
   */
  public <R> Pipeline<R> map(Function<? super T, ? extends R> fn, int numParallelCalls, boolean deterministic) {
    Objects.requireNonNull(fn, "fn");
    checkParallel(numParallelCalls);
    return with(new MapStage((t, ctx) -> fn.apply(cast(t)), numParallelCalls, deterministic, false));
  }

  /**
   * {@link #map(Function, int, boolean)} whose function also receives the pass's context, for
   * per-sample random augmentation that depends only on (seed, epoch, index):
   *
   * <pre>{@code
   * pipeline.mapWithContext((Example e, PipelineContext ctx) -> jitter(e, SampleRandom.of(ctx, e.index())), 4, true)
   * }</pre>
   */
  public <R> Pipeline<R> mapWithContext(BiFunction<? super T, PipelineContext, ? extends R> fn, int numParallelCalls,
      boolean deterministic) {
    Objects.requireNonNull(fn, "fn");
    checkParallel(numParallelCalls);
    return with(new MapStage((t, ctx) -> fn.apply(cast(t), ctx), numParallelCalls, deterministic, true));
  }

  /**
   * tf.data's {@code filter}: keeps the elements for which {@code predicate} is true (Reactor's
   * {@code filter}).
   *
   * <p><b>Discard support.</b> Rejected elements go to the discard hook; batches are closed.
   */
  public Pipeline<T> filter(Predicate<? super T> predicate) {
    Objects.requireNonNull(predicate, "predicate");
    return with(new FilterStage(t -> predicate.test(cast(t))));
  }

  /**
   * tf.data's {@code interleave(map_func, cycle_length, block_length, num_parallel_calls,
   * deterministic)} ({@link Interleave}), e.g. to read several files at once: each element becomes a
   * dataset (a file, a shard) whose pass, for the same context, is interleaved; {@code cycleLength}
   * are open at once and {@code blockLength} consecutive elements are taken from each in turn.
   * With {@code deterministic} the order is tf.data's sequential order for any
   * {@code numParallelCalls}.
   *
   * <p><b>Reactive Streams semantics.</b> Opens a dataset per free slot; emits on demand; completes
   * when every dataset completed; an error ends the pass and cancels the open datasets. A cancel never
   * interrupts a dataset's read on a worker: the read finishes and what it produces is discarded; a
   * dataset waiting for pooled memory stops waiting.
   *
   * <p><b>Discard support.</b> Elements read ahead by open datasets go to the discard hook on
   * cancel or error; batches are closed.
   *
   * @param fn element to dataset
   * @param cycleLength datasets open at once, &gt; 0
   * @param blockLength consecutive elements from each, &gt; 0
   * @param numParallelCalls 1: on the subscriber's thread; more: open datasets read ahead on workers
   * @param deterministic keep tf.data's sequential order
   */
  public <R> Pipeline<R> interleave(Function<? super T, ? extends Dataset<? extends R>> fn, int cycleLength,
      int blockLength, int numParallelCalls, boolean deterministic) {
    Objects.requireNonNull(fn, "fn");
    Interleave.of(x -> null, cycleLength, blockLength, numParallelCalls, deterministic); // validates the arguments
    return with(new InterleaveStage(t -> PlannedPipeline.of(fn.apply(cast(t))), cycleLength, blockLength, numParallelCalls,
        deterministic));
  }

  /** {@link #interleave(Function, int, int, int, boolean)} sequential and deterministic. */
  public <R> Pipeline<R> interleave(Function<? super T, ? extends Dataset<? extends R>> fn, int cycleLength,
      int blockLength) {
    return interleave(fn, cycleLength, blockLength, 1, true);
  }

  // ---------------------------------------------------------------------------------------------
  // Mixing and combining pipelines: sample, choose, zip, concatenate

  /**
   * tf.data's {@code sample_from_datasets(datasets, weights)}: {@link #sample(List, double[], MixOptions)}
   * with the context's seed and {@code stopOnEmptyDataset = false} (an exhausted source's weight is
   * removed and the others renormalized).
   */
  public static <T> Pipeline<T> sample(List<Pipeline<T>> sources, double[] weights) {
    return sample(sources, weights, MixOptions.defaults());
  }

  /**
   * tf.data's {@code sample_from_datasets(datasets, weights, seed, stop_on_empty_dataset)}.
   *
   * @param seed the draws' seed (wins over the context's)
   * @param stopOnEmptyDataset end the pass when the drawn source is exhausted (tf.data default false)
   * @see #sample(List, double[], MixOptions)
   */
  public static <T> Pipeline<T> sample(List<Pipeline<T>> sources, double[] weights, long seed,
      boolean stopOnEmptyDataset) {
    return sample(sources, weights, MixOptions.defaults().withSeed(seed).withStopOnEmptyDataset(stopOnEmptyDataset));
  }

  /**
   * tf.data's {@code sample_from_datasets}: each element comes from source {@code i} with
   * probability {@code weights[i] / sum(weights)}. The draws come from a {@code SplittableRandom} of
   * (seed, epoch, rank), the seed being the options' or else the context's, so a pass is the same
   * sequence for the same triple and every epoch draws anew. Each source runs its own plan (index,
   * columnar or element path) for the pass's context, and is read only as far as it is drawn.
   *
   * <p>An exhausted source and sources that repeat through their own epochs: {@link MixOptions}.
   *
   * <p><b>Sharding.</b> Shard each source ({@code source.shuffle().shard(world, rank)}): each rank then
   * reads its own part of every source and mixes it with its own draws, and the ranks together read
   * each source's rows in the weights' proportions, none twice in an epoch of that source. A
   * {@code shard} after {@code sample} is refused: each rank's draws differ, so striding the mixed
   * sequence would not partition anything.
   *
   * <p><b>Resume.</b> A checkpoint records the position; a resumed pass runs the draws of the
   * elements before it on counts (no element read) to recover the generator's state and each
   * source's position, and resumes every source from its own position. Where a draw could find a
   * source exhausted (rebalancing, cycled sources) the sources' lengths are needed
   * ({@link #cardinality}); when one is unknown the pass is replayed from its start.
   *
   * <p><b>Metrics.</b> The mix is the pipeline's stage 0 (operator {@code sample}); its counter
   * {@code sluice.stage.mix.elements}, tagged {@code source}, counts the elements taken from each
   * source: the realized proportions.
   *
   * <p><b>Reactive Streams semantics and discard support</b> are {@link Mixing}'s: a source is opened
   * when first drawn, one draw per element, queued elements are discarded (batches closed).
   *
   * <pre>{@code
   * Pipeline<Example> web = Pipeline.from(webData).shuffle().shard(world, rank);
   * Pipeline<Example> code = Pipeline.from(codeData).shuffle().shard(world, rank);
   * Pipeline<Batch> mixed = Pipeline.sample(List.of(web, code), new double[] {0.7, 0.3},
   *     MixOptions.defaults().withCycled(1)).batch(256);
   * }</pre>
   *
   * <p>The mixed pipeline takes the first source's {@link Options}.
   *
   * @param sources the pipelines to draw from, at least one
   * @param weights one per source, finite and &ge; 0, not all 0; normalized by their sum
   * @param options seed, {@code stopOnEmptyDataset} and the cycled sources
   * @throws IllegalArgumentException on bad weights, a cycled index out of range, or sources whose
   *     declared schemas differ (naming the field and both types)
   */
  public static <T> Pipeline<T> sample(List<Pipeline<T>> sources, double[] weights, MixOptions options) {
    return PipelineMixes.sample(sources, weights, options);
  }


  /**
   * tf.data's {@code choose_from_datasets(datasets, choice_dataset)}: element {@code k} is the next
   * element of source {@code selector[k]}. The pass ends when the selector ends or a chosen source
   * is exhausted (tf.data's {@code stop_on_empty_dataset=True}). A selector value outside
   * {@code [0, sources.size())} fails the pass with a {@link dev.sluice.core.DatasetException}
   * naming the value and its position in the selector.
   *
   * <p><b>Resume.</b> A resumed pass reads the selector's values before its position again (no
   * source element), counts each source's elements and resumes every source from its count.
   *
   * <p><b>Reactive Streams semantics and discard support</b> are {@link Mixing}'s; each source's
   * elements are counted as for {@link #sample(List, double[], MixOptions)} (operator {@code choose}).
   *
   * <pre>{@code
   * Pipeline<Integer> roundRobin = Pipeline.from(Datasets.range(300)).map(e -> (int) (e.index() % 3));
   * Pipeline.choose(roundRobin, List.of(a, b, c))
   * }</pre>
   *
   * @param selector the source index of each element
   * @param sources the pipelines to take from, at least one
   * @throws IllegalArgumentException when sources declare different schemas
   */
  public static <T> Pipeline<T> choose(Pipeline<? extends Number> selector, List<Pipeline<T>> sources) {
    return PipelineMixes.choose(selector, sources);
  }


  /** tf.data's {@code Dataset.zip((a, b))}: {@link #zip(Pipeline, Pipeline, String, String)} keeping the field names. */
  public static Pipeline<Example> zip(Pipeline<Example> a, Pipeline<Example> b) {
    return zip(a, b, "", "");
  }

  /**
   * tf.data's {@code Dataset.zip((a, b))} for examples: example {@code k} has the fields of
   * example {@code k} of {@code a}, each name prefixed with {@code prefixA}, then those of
   * {@code b}'s, prefixed with {@code prefixB}, and {@code a}'s index; the pass ends when the
   * shorter ends. A field name that appears on both sides (after the prefixes) is an
   * {@link IllegalArgumentException} naming it: at assembly when both pipelines declare their
   * schemas, else the pass fails on its first example; give prefixes (or rename with a
   * {@code map}) to resolve it. Zip examples, then {@code batch}.
   *
   * <p><b>Resume.</b> A resumed pass resumes both pipelines from its position.
   *
   * <p><b>Reactive Streams semantics.</b> Reactor's {@code zip}: requests up to 32 examples ahead
   * from each side; emits a pair when both sides have one; completes when either side completes;
   * an error of either side ends the pass; cancel cancels both.
   *
   * <pre>{@code
   * Pipeline.zip(images, captions, "image_", "caption_").batch(64)
   * }</pre>
   *
   * @param prefixA prepended to each field name of {@code a} ("" keeps the names)
   * @param prefixB prepended to each field name of {@code b}
   */
  public static Pipeline<Example> zip(Pipeline<Example> a, Pipeline<Example> b, String prefixA, String prefixB) {
    return PipelineMixes.zip(a, b, prefixA, prefixB);
  }


  /**
   * tf.data's {@code a.concatenate(b)}: the elements of {@code a}'s pass, then those of
   * {@code b}'s, for the same context; {@code b} is opened when {@code a} ends. Where both declare a
   * schema the schemas must be equal: otherwise an {@link IllegalArgumentException} names the first
   * differing field and both its types.
   *
   * <p><b>Resume.</b> A resumed pass starts in the pipeline that holds its position, from its offset
   * there, when the first pipeline's length is known ({@link #cardinality}); else it is replayed.
   *
   * <p><b>Reactive Streams semantics.</b> Emits on demand, keeping up to 2 elements of the open
   * pipeline queued; completes after {@code b}; an error ends the pass; cancel cancels the open
   * pipeline. Elements are counted per source as for {@link #sample(List, double[], MixOptions)}.
   *
   * <p><b>Discard support.</b> Queued elements go to the discard hook on cancel or error; batches are
   * closed.
   *
   * <pre>{@code
   * Pipeline.concatenate(train2023, train2024).shuffle(10_000)
   * }</pre>
   */
  public static <T> Pipeline<T> concatenate(Pipeline<T> a, Pipeline<T> b) {
    return PipelineMixes.concatenate(a, b);
  }


  /** {@link #concatenate(Pipeline, Pipeline) concatenate(this, other)}. */
  public Pipeline<T> concatenate(Pipeline<T> other) {
    return concatenate(this, other);
  }

  /**
   * tf.data's {@code padded_batch(batch_size)}: every field padded to the largest shape in the
   * batch with 0 ({@link PaddedBatch}); the true shapes stay with each column
   * ({@link dev.sluice.core.Column#lengths()}).
   */
  public Pipeline<Batch> paddedBatch(int batchSize) {
    return paddedBatch(batchSize, Map.of(), Map.of(), false);
  }

  /**
   * tf.data's {@code padded_batch(batch_size, padded_shapes, padding_values, drop_remainder)}
   * ({@link PaddedBatch}).
   *
   * <p><b>Reactive Streams semantics.</b> Emits a batch per {@code batchSize} examples; errors when
   * an example does not fit its padded shape.
   *
   * <p><b>Discard support.</b> Examples collected on cancel or error go to the discard hook.
   *
   * @param batchSize rows per batch, &gt; 0
   * @param paddedShapes per field, the shape to pad to ({@code -1} dimensions: the batch's largest)
   * @param paddingValues per field, the pad value (default 0)
   * @param dropRemainder drop a last batch smaller than {@code batchSize}
   */
  public Pipeline<Batch> paddedBatch(int batchSize, Map<String, Shape> paddedShapes,
      Map<String, ? extends Number> paddingValues, boolean dropRemainder) {
    checkPositive("batchSize", batchSize);
    return with(new PaddedBatchStage(batchSize, Map.copyOf(paddedShapes), Map.copyOf(paddingValues), dropRemainder));
  }

  /** {@link #cache(CacheSpec)} with {@link CacheSpec#defaults()}. */
  public Pipeline<T> cache() {
    return cache(CacheSpec.defaults());
  }

  /**
   * tf.data's {@code cache()}, shared by every process of the node and crash-safe: the first pass
   * computes what flows out of the operators before it and stores it in blocks of consecutive
   * elements; later passes (later epochs, the other ranks of the node, later jobs) read the
   * published blocks and compute only the rest. Cache after expensive deterministic work (decoding,
   * parsing, a costly {@code map}) and before shuffle and augmentation.
   *
   * <p><b>Transparent.</b> The same pipeline and context give the same elements in the same order
   * with and without the cache, on the pass that fills it and on every later one. Behind the cache a
   * random-access source stays random access (global {@code shuffle()}, {@code shard} reading only
   * the rank's rows) and a split source stays a split source with the same splits (split-order
   * shuffle, shard by split ranges).
   *
   * <p><b>Shared and crash-safe.</b> Blocks live in immutable segment files (the Sluice shard format)
   * under {@code /dev/shm/sluice-<user>/} (or {@link CacheSpec#directory(java.nio.file.Path)}),
   * indexed by a Chronicle Map every process of the node maps. A process claims a block before
   * filling it, writes its segment whole under a temporary name, renames it and only then publishes
   * it; processes fill disjoint blocks at once and read each other's. A process killed mid-fill
   * leaves nothing readable half-written: its claim is taken over. Every wait is bounded
   * ({@link CacheSpec#timeout(java.time.Duration)}): a block that cannot be read or stored in time
   * is served from upstream, counted and warned about once; a corrupt segment is rebuilt.
   *
   * <p><b>Keys.</b> A fingerprint of the source (its files with sizes and modification times, its
   * schema and projection: {@link dev.sluice.core.spi.Fingerprinted}), of the operators before the cache
   * and of {@link CacheSpec#named(String) the name} standing for the user functions among them: a
   * change gives a new cache directory, never stale data.
   *
   * <p><b>Budget.</b> With {@link CacheSpec#maxBytes(long)}, blocks beyond the budget are served
   * from upstream uncached (counted), never an error in the middle of an epoch. The free space of
   * the directory is checked when the pipeline is assembled.
   *
   * <p><b>Reactive Streams semantics.</b> Emits the same signals as the pipeline without the cache;
   * a block is filled when a pass first needs it, on the requesting thread.
   *
   * <p><b>Discard support.</b> Holds no elements; a block being filled when the pass is cancelled is
   * released (its claim ended, its memory returned).
   *
   * <pre>{@code
   * Pipeline<Batch> train = Pipeline.from(Parquet.open(file))
   *     .cache()                                   // decoded rows, shared by the node's ranks
   *     .shuffle().shard(ctx.worldSize(), ctx.rank()).batch(256);
   * Pipeline.from(images).map(Decode::jpeg, 4).cache(CacheSpec.named("jpeg-224-v1"))
   * }</pre>
   *
   * @throws IllegalArgumentException when an operator before it depends on the epoch or the rank
   *     (shuffle, shard, mapWithContext), or a user function comes before it and the spec has no
   *     name
   * @throws UnsupportedOperationException when the source is neither random access nor split with
   *     known row counts, or an operator before it changes the number of elements
   * @throws CacheException when the directory belongs to another user or is open to others, the
   *     budget (or the cache's known size) does not fit the free space, or the JVM lacks the flags
   *     the index needs
   * @throws dev.sluice.core.MissingDependencyException when Chronicle Map
   *     ({@code net.openhft:chronicle-map}, an optional dependency of pipeline-operators) is not on
   *     the class path
   */
  @SuppressWarnings("unchecked")
  public Pipeline<T> cache(CacheSpec spec) {
    Objects.requireNonNull(spec, "spec");
    CachedDataset cached = CachedDataset.of(source, stages, options, spec, MonitorListener.of(spec.monitor()));
    return (Pipeline<T>) new Pipeline<>(cached, List.of(), options);
  }

  /**
   * tf.data's {@code unbatch}: each batch becomes its rows as examples that own nothing (copies,
   * {@link Batch#copyRow}); each batch is closed once split ({@link Unbatch}).
   *
   * <p><b>Discard support.</b> The batch being split is closed on cancel or error.
   */
  public Pipeline<Example> unbatch() {
    return with(new UnbatchStage());
  }

  // ---------------------------------------------------------------------------------------------
  // Element operators: bucketing, flat maps, scans, windows and groups

  /**
   * {@link #bucketBySequenceLength(ToIntFunction, int[], int[], Map, Map, boolean, boolean)} padding
   * each batch to its longest row with 0 and keeping partial batches.
   */
  public Pipeline<Batch> bucketBySequenceLength(ToIntFunction<? super T> lengthFn, int[] boundaries, int[] batchSizes) {
    return bucketBySequenceLength(lengthFn, boundaries, batchSizes, Map.of(), Map.of(), false, false);
  }

  /**
   * tf.data's {@code bucket_by_sequence_length(element_length_func, bucket_boundaries,
   * bucket_batch_sizes, padded_shapes, padding_values, pad_to_bucket_boundary, drop_remainder)}
   * ({@link BucketBySequenceLength}): examples go to the bucket of their length (bucket {@code i}
   * holds lengths in {@code [boundaries[i-1], boundaries[i])}), and each bucket is batched with its
   * own batch size and padded as {@link #paddedBatch(int, Map, Map, boolean)} pads, so a batch of
   * short sequences is not padded to the longest of the stream. After the last example the partial
   * batches are emitted in bucket order. The order depends only on the input's order.
   *
   * <p><b>Reactive Streams semantics.</b> Emits a batch when a bucket is full; holds at most the
   * sum of the batch sizes (minus one each) examples; errors when an example has a negative length
   * or does not fit its padded shape.
   *
   * <p><b>Discard support.</b> Examples waiting in buckets go to the discard hook on cancel or error.
   *
   * <p><b>Resume.</b> Exact: a resumed pass reads the epoch's input again from its start to rebuild
   * the buckets (nothing extra is saved in the state).
   *
   * <pre>{@code
   * pipeline.bucketBySequenceLength(e -> (int) e.tensor("tokens").shape().dim(0),
   *     new int[] {16, 64, 256}, new int[] {128, 64, 16, 4})
   * }</pre>
   *
   * @param lengthFn the length of an example, &ge; 0
   * @param boundaries bucket boundaries, &gt; 0 and strictly increasing
   * @param batchSizes each bucket's batch size, &gt; 0, {@code boundaries.length + 1} of them
   * @param paddedShapes per field, the shape to pad to ({@code -1}: the batch's largest, or the
   *     bucket's boundary - 1 with {@code padToBucketBoundary})
   * @param paddingValues per field, the pad value (default 0)
   * @param padToBucketBoundary pad the {@code -1} dimensions of {@code paddedShapes} to the
   *     bucket's boundary - 1; every example must then be shorter than the last boundary
   * @param dropRemainder drop each bucket's last, partial batch
   */
  public Pipeline<Batch> bucketBySequenceLength(ToIntFunction<? super T> lengthFn, int[] boundaries, int[] batchSizes,
      Map<String, Shape> paddedShapes, Map<String, ? extends Number> paddingValues, boolean padToBucketBoundary,
      boolean dropRemainder) {
    Objects.requireNonNull(lengthFn, "lengthFn");
    BucketOperator.check(boundaries, batchSizes, paddedShapes, padToBucketBoundary);
    return with(new BucketStage(e -> lengthFn.applyAsInt(cast(e)), boundaries.clone(), batchSizes.clone(),
        Map.copyOf(paddedShapes), Map.copyOf(paddingValues), padToBucketBoundary, dropRemainder));
  }

  /**
   * tf.data's {@code flat_map(map_func)}: each element becomes a dataset (a {@code Pipeline}, a
   * source, or a lambda {@code ctx -> flux}), whose pass, for the same context, is emitted whole
   * before the next element's. As in tf.data it is {@code interleave} with a cycle length of 1, and
   * {@link #explain()} shows it so.
   *
   * <p><b>Reactive Streams semantics.</b> Opens one dataset at a time, when the previous completed;
   * emits its elements on demand; completes after the last dataset; an error of {@code fn} or of a
   * dataset ends the pass.
   *
   * <p><b>Discard support.</b> Elements the open dataset read ahead go to the discard hook on
   * cancel or error; batches are closed.
   *
   * <p><b>Resume.</b> Exact: when the datasets' lengths are known without reading
   * ({@link #cardinality}), the resumed pass opens the dataset holding the position and starts it
   * there; otherwise it is replayed from the start of the epoch.
   *
   * <pre>{@code
   * Pipeline.from(files).flatMap(f -> Npy.open(f.tensor("path").getString()))
   * }</pre>
   *
   * @param fn element to dataset
   */
  public <R> Pipeline<R> flatMap(Function<? super T, ? extends Dataset<? extends R>> fn) {
    return interleave(fn, 1, 1);
  }

  /**
   * tf.data's {@code scan(initial_state, scan_func)} ({@link Scan}): a state carried from element to
   * element; {@code fn(state, element)} gives the next state and the element to emit. Every pass
   * starts from {@code initial}, so the state should be an immutable value that {@code fn} replaces.
   *
   * <p><b>Reactive Streams semantics.</b> One output per input, in order, on demand; an exception of
   * {@code fn} ends the pass.
   *
   * <p><b>Discard support.</b> Holds nothing but the state.
   *
   * <p><b>Resume.</b> Exact, by replay: the state is not saved in the checkpoint (it need not be
   * serializable); the resumed pass re-derives it by scanning the epoch's input again from its start,
   * emitting from the state's position on.
   *
   * <pre>{@code
   * pipeline.scan(0L, (Long seen, Example e) -> Scan.Step.of(seen + 1, e.with("seen", Tensor.scalar(seen))))
   * }</pre>
   *
   * @param initial the state the first element of each pass is scanned with
   * @param fn (state, element) to the next state and the element to emit (non-null)
   */
  @SuppressWarnings("unchecked")
  public <S, R> Pipeline<R> scan(S initial, BiFunction<? super S, ? super T, ? extends Scan.Step<? extends S, ? extends R>> fn) {
    Objects.requireNonNull(fn, "fn");
    Function<Flux<T>, Flux<R>> scan = Scan.of(initial, fn);
    return with(new ScanStage(in -> (Flux<Object>) (Flux<?>) scan.apply((Flux<T>) (Flux<?>) in)));
  }

  /** {@link #enumerate(long)} from 0. */
  public Pipeline<Enumerated<T>> enumerate() {
    return enumerate(0);
  }

  /**
   * tf.data's {@code enumerate(start)} ({@link Enumerate}): each element paired with its position in
   * the pass ({@link Enumerated}), {@code start} for the first; deterministic as the pass is.
   *
   * <p><b>Reactive Streams semantics.</b> One output per input, on demand.
   *
   * <p><b>Discard support.</b> Holds nothing; a dropped {@code Enumerated} holding a batch is closed.
   *
   * <p><b>Resume.</b> Exact, and nothing is read again: the resumed pass starts its input at the
   * state's position and counts from there.
   *
   * @param start the position of the first element (tf.data default 0)
   */
  public Pipeline<Enumerated<T>> enumerate(long start) {
    return with(new EnumerateStage(start, (i, t) -> new Enumerated<>(i, t)));
  }

  /** {@link #window(int, int, int, boolean)} of {@code size} consecutive elements, not overlapping, the last one kept. */
  public Pipeline<List<T>> window(int size) {
    return window(size, size, 1, false);
  }

  /**
   * tf.data's {@code window(size, shift, stride, drop_remainder)} ({@link Window}): windows of
   * elements, each a {@code List} (the element model's batches need examples of one schema; a list
   * holds any element, and {@code Flux.fromIterable(window).transform(Batching.of(n))} makes it a
   * batch). Window {@code w} holds the elements at positions {@code w·shift + k·stride},
   * {@code k < size}; after the last element the windows that started are emitted even if not full,
   * unless {@code dropRemainder}. Overlapping windows share elements, so a {@link Batch} element
   * fails the pass (unbatch first, or {@link #rebatch(int)}).
   *
   * <p><b>Reactive Streams semantics.</b> Emits a window when its last element arrives; holds at
   * most {@code (size - 1)·stride + 1} elements.
   *
   * <p><b>Discard support.</b> Elements of open windows go to the discard hook on cancel or error.
   *
   * <p><b>Resume.</b> Exact. With {@code shift > 1} (or windows of one element) the resumed pass
   * starts the input at the next window's start and reads nothing before it; sliding windows of a
   * one-element shift are replayed from the start of the epoch.
   *
   * @param size elements per window, &gt; 0
   * @param shift elements between the starts of two windows, &gt; 0 (tf.data default: size)
   * @param stride elements between two elements of a window, &gt; 0 (tf.data default 1)
   * @param dropRemainder drop the windows that are not full at the end (tf.data default false)
   */
  public Pipeline<List<T>> window(int size, int shift, int stride, boolean dropRemainder) {
    WindowOperator.check(size, shift, stride);
    return with(new WindowStage(size, shift, stride, dropRemainder));
  }

  /** {@link #rebatch(int, boolean)} keeping the last, shorter batch. */
  public Pipeline<Batch> rebatch(int batchSize) {
    return rebatch(batchSize, false);
  }

  /**
   * tf.data's {@code rebatch(batch_size, drop_remainder)} ({@link Rebatch}): the rows of the
   * pipeline's batches re-cut into batches of {@code batchSize} rows by the same re-batcher as
   * {@code unbatch().batch(n)}: a batch that is exactly one input batch is handed on, one inside an
   * input batch of fixed-length fields is a view of its rows, the rest are copied once.
   *
   * <p><b>Reactive Streams semantics.</b> Requests one input batch at a time; emits the batches it
   * completes.
   *
   * <p><b>Discard support.</b> Input batches taken and not handed on are closed, also on cancel or
   * error.
   *
   * <p><b>Resume.</b> Exact. After batches of a known size ({@code batch}, {@code paddedBatch},
   * {@code rebatch}) the resumed pass starts at the input batch holding the state's row; otherwise
   * it is replayed from the start of the epoch.
   *
   * @param batchSize rows per batch, &gt; 0
   * @param dropRemainder drop a last batch smaller than {@code batchSize}
   */
  public Pipeline<Batch> rebatch(int batchSize, boolean dropRemainder) {
    RebatchStage.check(batchSize);
    return with(new RebatchStage(batchSize, dropRemainder));
  }

  /**
   * tf.data's {@code group_by_window(key_func, reduce_func, window_size)} ({@link GroupByWindow}):
   * elements are grouped by {@code keyFn} into windows of {@code windowSize}; a full window is
   * reduced at once, and after the last element the windows left are reduced in ascending key
   * order. {@code reduceFn(key, window)} gives a dataset (opened for the pass's context, as
   * {@link #flatMap} opens one) whose elements are emitted, one window after the other.
   *
   * <p><b>Reactive Streams semantics.</b> Holds at most {@code windowSize - 1} elements per open
   * key; an error of {@code keyFn}, {@code reduceFn} or a reduced dataset ends the pass.
   *
   * <p><b>Discard support.</b> Elements of open windows go to the discard hook on cancel or error;
   * batches are closed.
   *
   * <p><b>Resume.</b> Exact, by replay from the start of the epoch (the windows are rebuilt).
   *
   * <pre>{@code
   * pipeline.groupByWindow(e -> e.tensor("label").getLong(0),
   *     (key, window) -> Pipeline.from(ctx -> Flux.fromIterable(window)).batch(window.size()), 32)
   * }</pre>
   *
   * @param keyFn the key of an element
   * @param reduceFn (key, window) to the dataset of elements to emit
   * @param windowSize elements per window, &gt; 0
   */
  public <R> Pipeline<R> groupByWindow(ToLongFunction<? super T> keyFn,
      BiFunction<Long, List<T>, ? extends Dataset<? extends R>> reduceFn, int windowSize) {
    Objects.requireNonNull(keyFn, "keyFn");
    Objects.requireNonNull(reduceFn, "reduceFn");
    GroupByWindowStage.check(windowSize);
    return with(new GroupByWindowStage(t -> keyFn.applyAsLong(cast(t)),
        (key, window, ctx) -> PlannedPipeline.of(reduceFn.apply(key, cast(window))).flux(ctx), windowSize));
  }

  /**
   * tf.data's {@code ignore_errors()} ({@link IgnoreErrors}): an element whose function throws in a
   * stage before this one ({@code map}, parallel or not, {@code filter}, {@code flatMap},
   * {@code scan}, the key and length functions of {@code groupByWindow} and
   * {@code bucketBySequenceLength}, a {@code paddedBatch} that cannot pad it) is dropped and the
   * pass goes on. A source's data error ({@link dev.sluice.core.DatasetException}: a malformed file
   * or record, an I/O error) and fatal errors are never skipped: they end the pass as without it.
   * Skipped elements are logged (the first of a pass, then one in 1,000) and counted in the
   * {@code sluice.pipeline.ignored.errors} meter when the options carry a registry.
   *
   * <p><b>Reactive Streams semantics.</b> Passes every signal on; a dropped element is replaced by a
   * request for one more upstream.
   *
   * <p><b>Discard support.</b> Holds nothing; a dropped batch is closed.
   *
   * <p><b>Resume.</b> Exact, by replay: the stages before it may drop elements, so their counts no
   * longer follow; the resumed pass reads the epoch again from its start (the same elements fail
   * again and are dropped again).
   */
  public Pipeline<T> ignoreErrors() {
    return with(new IgnoreErrorsStage());
  }

  @SuppressWarnings("unchecked")
  private static <T> T cast(Object o) {
    return (T) o;
  }

  private static void checkPositive(String name, int value) {
    if (value <= 0) {
      throw new IllegalArgumentException(name + " > 0 required but it was " + value);
    }
  }

  private static void checkCount(long count) {
    if (count < 0) {
      throw new IllegalArgumentException("count >= 0 required but it was " + count);
    }
  }

  private static void checkParallel(int numParallelCalls) {
    if (numParallelCalls <= 0 && numParallelCalls != ParallelMap.AUTOTUNE) {
      throw new IllegalArgumentException("numParallelCalls > 0 (or AUTOTUNE = -1) required but it was " + numParallelCalls);
    }
  }

  /** This pipeline with other {@link Options} (memory manager, determinism) for every stage. */
  public Pipeline<T> withOptions(Options newOptions) {
    return new Pipeline<>(source, stages, Objects.requireNonNull(newOptions, "newOptions"));
  }

  /** This pipeline with {@code stage} appended; element operators add themselves through this. */
  private <R> Pipeline<R> with(Stage stage) {
    List<Stage> next = new ArrayList<>(stages);
    next.add(stage);
    return new Pipeline<>(source, next, options);
  }

  private String describeStages() {
    return stages.stream().map(Stage::describe).collect(Collectors.joining(" -> "));
  }

  /**
   * How a pass runs: the source, then one line per stage in execution order with the path it runs
   * on ({@code index}, {@code columnar} or {@code element}) and what that path does with it. For
   * example, over a Parquet dataset:
   *
   * <pre>
   * Pipeline over ParquetDataset[a.parquet][...]
   *   shuffle()                columnar blocks of every split shuffled per (seed, epoch); window shuffle of 10000 rows
   *   shard(2, 0, PAD)         columnar the rank's part of the block sequence
   *   batch(256, false, 1)     columnar readBatches re-cut into 256-row batches, decode parallelism 1
   *   prefetch(4)              element
   * </pre>
   *
   * A stage written after {@code shard} that runs before it (a global shuffle) is listed where it
   * runs. Over a mix ({@link #sample}, {@link #choose}, {@link #zip}, {@link #concatenate}) the
   * first line names the mix, and each source's own plan follows it, indented under
   * {@code source i:} ({@code selector:} for {@code choose}).
   */
  public String explain() {
    StringBuilder out = new StringBuilder("Pipeline over ").append(source).append(" on the ").append(plan().path());
    out.append(PlanBuilder.explainSources(source, "    "));
    for (Plan.Step step : plan().steps()) {
      out.append(System.lineSeparator()).append("  ").append(step);
    }
    return out.toString();
  }

  /** The source and the stages in execution order, each with its path: {@code Pipeline(src -> batch(256, false, 1) [index])}. */
  @Override
  public String toString() {
    StringBuilder out = new StringBuilder("Pipeline(").append(source);
    for (Plan.Step step : plan().steps()) {
      out.append(" -> ").append(step.stage().describe()).append(" [").append(step.path()).append(']');
    }
    return out.append(')').toString();
  }
}
