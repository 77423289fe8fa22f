package dev.sluice.operators.internal;

import dev.sluice.core.Batch;
import dev.sluice.core.BatchBuilder;
import dev.sluice.core.BufferPool;
import dev.sluice.core.Dataset;
import dev.sluice.core.Example;
import dev.sluice.core.HasSchema;
import dev.sluice.core.Options;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.RandomAccessDataset;
import dev.sluice.core.Schema;
import dev.sluice.core.SplitDataset;
import dev.sluice.operators.Batching;
import dev.sluice.operators.Shard;
import java.util.ArrayList;
import java.util.List;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Schedulers;

/**
 * Turns a source and its stages into one pass (docs/design.md, the planner).
 *
 * <p>On a {@link RandomAccessDataset}, the leading run of shuffle / shard / take / skip stages,
 * an optional {@code batch} and the take / skip stages after it compile into an index plan: an
 * {@link IndexSequence} computed from (seed, epoch) per position, and per batch one {@code long[]}
 * of source indices handed to the source's {@code gather}. Every other stage, and everything after
 * the first stage the plan cannot express, runs on the element path as a Flux transformer.
 * {@code repeat} runs everything before it once per epoch.
 */
public final class PlanCompiler {
  /** Batches one parallel gather task produces in a row (one scheduler hop per run). */
  static final int CHUNK = 4;

  private PlanCompiler() {}

  /**
   * The stages in execution order: a shuffle written after {@code shard} moves before it, so every
   * rank takes its stride of the one permutation all ranks share (DistributedSampler's order).
   */
  public static List<Stage> normalize(List<Stage> stages) {
    List<Stage> out = new ArrayList<>(stages);
    for (int i = 1; i < out.size(); i++) {
      if (out.get(i) instanceof ShuffleStage) {
        for (int j = i; j > 0 && out.get(j - 1) instanceof ShardStage; j--) {
          Stage t = out.get(j - 1);
          out.set(j - 1, out.get(j));
          out.set(j, t);
        }
      }
    }
    return out;
  }

  /** True when a global shuffle appended to {@code stages} runs on the index plan. */
  public static boolean isIndexPlan(Dataset<?> source, List<Stage> stages) {
    if (!(source instanceof RandomAccessDataset)) {
      return false;
    }
    for (Stage s : stages) {
      if (!(s instanceof ShuffleStage || s instanceof ShardStage || s instanceof TakeStage || s instanceof SkipStage)) {
        return false;
      }
    }
    return true;
  }

  /** One pass of {@code source} through {@code stages} for {@code context}. */
  public static Flux<?> compile(Dataset<?> source, List<Stage> stages, Options options, PipelineContext context) {
    List<Stage> ordered = normalize(stages);
    int repeat = -1;
    for (int i = 0; i < ordered.size(); i++) {
      if (ordered.get(i) instanceof RepeatStage) {
        repeat = i;
      }
    }
    Flux<?> flux;
    Schema schema;
    int next;
    if (repeat >= 0) {
      List<Stage> inner = List.copyOf(ordered.subList(0, repeat));
      long count = ((RepeatStage) ordered.get(repeat)).count();
      flux = longRange(0, count < 0 ? Long.MAX_VALUE : count)
          .concatMap(i -> compile(source, inner, options, context.withEpoch(context.epoch() + i)), 0);
      schema = schemaAfter(Schemas.declared(source), inner);
      next = repeat + 1;
    } else if (source instanceof RandomAccessDataset<?> ra) {
      Planned planned = plan(ra, ordered, options, context);
      flux = planned.flux;
      schema = planned.schema;
      next = planned.next;
    } else if (source instanceof SplitDataset<?> split) {
      SplitStages.Planned planned = SplitStages.plan(split, ordered, options, context);
      flux = planned.flux();
      schema = Schemas.declared(source);
      next = planned.next();
    } else {
      flux = source.flux(context);
      schema = Schemas.declared(source);
      next = 0;
    }
    for (int i = next; i < ordered.size(); i++) {
      Stage s = ordered.get(i);
      flux = element(s, flux, schema, options, context);
      schema = s instanceof FluxStage fs ? fs.schemaAfter(schema) : s instanceof BatchStage ? null : schema;
    }
    return flux;
  }

  /** The schema of the examples after {@code stages} when it is {@code schema} before (null: unknown). */
  private static Schema schemaAfter(Schema schema, List<Stage> stages) {
    for (Stage s : stages) {
      if (s instanceof FluxStage fs) {
        schema = fs.schemaAfter(schema);
      } else if (s instanceof BatchStage || s instanceof RepeatStage) {
        schema = null;
      }
    }
    return schema;
  }

  private record Planned(Flux<?> flux, Schema schema, int next) {}

  private static Planned plan(RandomAccessDataset<?> source, List<Stage> stages, Options options, PipelineContext ctx) {
    IndexSequence seq = IndexSequence.identity(source.size());
    int i = 0;
    int shuffles = 0;
    for (; i < stages.size(); i++) {
      Stage s = stages.get(i);
      if (s instanceof ShuffleStage sh) {
        seq = seq.shuffled(sh.seed() != null ? sh.seed() : ctx.seed(), ctx.epoch(), shuffles++);
      } else if (s instanceof ShardStage sh) {
        seq = seq.sharded(sh.numShards(), sh.index(), sh.policy());
      } else if (s instanceof TakeStage t) {
        seq = seq.taken(t.count());
      } else if (s instanceof SkipStage t) {
        seq = seq.skipped(t.count());
      } else {
        break;
      }
    }
    if (i < stages.size() && stages.get(i) instanceof BatchStage b) {
      i++;
      long length = seq.length();
      long first = 0;
      long last = b.dropRemainder() ? length / b.batchSize() : (length + b.batchSize() - 1) / b.batchSize();
      for (; i < stages.size(); i++) {
        Stage s = stages.get(i);
        if (s instanceof TakeStage t) {
          last = Math.min(last, first + t.count());
        } else if (s instanceof SkipStage t) {
          first = Math.min(last, first + t.count());
        } else {
          break;
        }
      }
      return new Planned(gatherBatches(source, seq, b, first, last, options), null, i);
    }
    return new Planned(elements(source, seq), Schemas.declared(source), i);
  }

  /**
   * One element per position of {@code seq}; the indices are computed 256 at a time. A dataset of
   * examples with a declared schema yields {@link Example#lazy} rows: nothing is read until an
   * operator looks at a field, and {@code batch} gathers unchanged rows in bulk.
   */
  @SuppressWarnings("unchecked")
  private static Flux<Object> elements(RandomAccessDataset<?> source, IndexSequence seq) {
    boolean lazy = source instanceof HasSchema h && h.schema() != null;
    RandomAccessDataset<Example> rows = lazy ? (RandomAccessDataset<Example>) source : null;
    long length = seq.length();
    return Flux.generate(() -> new long[][] {{0, 0}, new long[256]}, (state, sink) -> {
      long[] cursor = state[0]; // next position, index of the next value in the block
      long[] block = state[1];
      long p = cursor[0];
      if (p >= length) {
        sink.complete();
        return state;
      }
      int at = (int) cursor[1]; // p % block.length, without a 64-bit division per element
      if (at == 0) {
        seq.fill(p, block, (int) Math.min(block.length, length - p));
      }
      cursor[0] = p + 1;
      cursor[1] = at + 1 == block.length ? 0 : at + 1;
      sink.next(lazy ? Example.lazy(rows, block[at]) : source.get(block[at]));
      return state;
    });
  }

  /** Batches {@code first .. last-1} of {@code seq}, each gathered by the source into pooled memory. */
  private static Flux<Batch> gatherBatches(RandomAccessDataset<?> source, IndexSequence seq, BatchStage b,
      long first, long last, Options options) {
    return Flux.defer(() -> {
      if (first >= last) {
        return Flux.empty();
      }
      Schema schema = Schemas.of(source);
      BufferPool pool = options.memory().pool("batch");
      int batchSize = b.batchSize();
      long length = seq.length();
      Flux<Long> numbers = longRange(first, last);
      if (b.numParallelCalls() <= 1) {
        long[] indices = new long[batchSize]; // per subscription; the builder copies what it keeps
        return numbers.map(n -> gather(source, seq, schema, pool, n, batchSize, length, indices));
      }
      // each worker task gathers a run of CHUNK consecutive batches: one scheduler hop per run
      InFlight inFlight = new InFlight();
      return longRange(0, (last - first + CHUNK - 1) / CHUNK)
          .flatMapSequential(
              c -> Flux.defer(() -> {
                    long[] indices = new long[batchSize];
                    return longRange(first + c * CHUNK, Math.min(last, first + (c + 1) * CHUNK))
                        .map(n -> inFlight.add(gather(source, seq, schema, pool, n, batchSize, length, indices)));
                  })
                  .subscribeOn(Schedulers.boundedElastic()),
              b.numParallelCalls(), CHUNK)
          .doOnNext(inFlight::handedOver)
          .doFinally(signal -> inFlight.terminate());
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

  @SuppressWarnings("unchecked")
  private static Flux<?> element(Stage s, Flux<?> flux, Schema schema, Options options, PipelineContext ctx) {
    if (s instanceof FluxStage fs) {
      return fs.apply(flux, ctx, options);
    }
    if (s instanceof ShardStage sh) {
      return ((Flux<Object>) flux).transform(Shard.of(sh.numShards(), sh.index(), sh.policy()));
    }
    if (s instanceof TakeStage t) {
      return flux.take(t.count());
    }
    if (s instanceof SkipStage t) {
      return flux.skip(t.count());
    }
    if (s instanceof BatchStage b) {
      @SuppressWarnings("unchecked")
      Flux<Example> examples = (Flux<Example>) flux; // collate checks each element is an Example
      return examples.transform(Batching.of(b.batchSize(), b.dropRemainder(), schema, options.memory().pool("batch"),
          b.numParallelCalls()));
    }
    if (s instanceof ShuffleStage) {
      throw new UnsupportedOperationException(s.describe() + " is the global shuffle of a random-access source and "
          + "must come before any element operator; on a streaming source use the buffer shuffle, shuffle(bufferSize)");
    }
    throw new IllegalStateException("unknown stage " + s.describe());
  }

  /** {@code from, from+1, .., to-1} as a lazy flux. */
  static Flux<Long> longRange(long from, long to) {
    return Flux.generate(() -> from, (i, sink) -> {
      if (i < to) {
        sink.next(i);
      } else {
        sink.complete();
      }
      return i + 1;
    });
  }
}
