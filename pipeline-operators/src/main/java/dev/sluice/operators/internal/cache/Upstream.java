package dev.sluice.operators.internal.cache;

import dev.sluice.core.Batch;
import dev.sluice.core.BatchSplitDataset;
import dev.sluice.core.Dataset;
import dev.sluice.core.Example;
import dev.sluice.core.HasSchema;
import dev.sluice.core.Options;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.RandomAccessDataset;
import dev.sluice.core.Schema;
import dev.sluice.core.Split;
import dev.sluice.core.SplitDataset;
import dev.sluice.core.spi.BatchBuilder;
import dev.sluice.core.spi.BufferPool;
import dev.sluice.core.spi.Fingerprinted;
import dev.sluice.operators.CacheSpec;
import dev.sluice.operators.internal.MapStage;
import dev.sluice.operators.internal.PlanCompiler;
import dev.sluice.operators.internal.PrefetchStage;
import dev.sluice.operators.internal.Stage;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BiFunction;
import reactor.core.publisher.Flux;

/**
 * What a cache reads from: a source and the operators before the cache, checked to be cacheable
 * (deterministic, the same on every rank and epoch) and classified: a random-access source or a
 * split source whose splits know their row counts, followed only by one-to-one operators
 * ({@code map}, {@code prefetch}), keeps its kind behind the cache.
 */
final class Upstream {
  /** How the cache presents the upstream's elements. */
  enum Mode {
    /** A random-access source: the cache is random access. */
    RANDOM_ACCESS,
    /** A split source with known row counts: the cache is a split source with the same splits. */
    SPLITS
  }

  private final Dataset<?> source;
  private final List<Stage> stages;
  private final List<BiFunction<Object, PipelineContext, Object>> maps;
  private final Options options;
  private final Mode mode;
  private final String fingerprint;

  private Upstream(Dataset<?> source, List<Stage> stages, List<BiFunction<Object, PipelineContext, Object>> maps,
      Options options, Mode mode, String fingerprint) {
    this.source = source;
    this.stages = stages;
    this.maps = maps;
    this.options = options;
    this.mode = mode;
    this.fingerprint = fingerprint;
  }

  /**
   * The upstream of a cache placed after {@code stages} over {@code source}.
   *
   * @throws IllegalArgumentException when an operator before the cache makes its elements depend on
   *     the epoch or the rank, or a user function comes before it and the spec has no name
   * @throws UnsupportedOperationException when the upstream is neither random access nor split
   *     with known row counts behind one-to-one operators
   */
  static Upstream of(Dataset<?> source, List<Stage> stages, Options options, CacheSpec spec) {
    List<BiFunction<Object, PipelineContext, Object>> maps = new ArrayList<>();
    StringBuilder ops = new StringBuilder();
    String userFunction = null;
    for (Stage s : stages) {
      switch (s.kind()) {
        case SHUFFLE, BUFFER_SHUFFLE, REPEAT -> throw new IllegalArgumentException("cache(): " + s.describe()
            + " before it gives every epoch another order, which a cache would freeze; put cache() before the shuffle"
            + " (cache after expensive deterministic work, before shuffle and augmentation)");
        case SHARD -> throw new IllegalArgumentException("cache(): " + s.describe() + " before it makes the cached"
            + " elements depend on the rank; put cache() before the shard: the ranks of a node share one cache, each"
            + " reading its part");
        case TAKE, SKIP, BATCH -> throw notOneToOne(s);
        case ELEMENT -> {
          if (s instanceof MapStage m) {
            if (m.contextual()) {
              throw new IllegalArgumentException("cache(): mapWithContext before it depends on (seed, epoch, rank),"
                  + " which a cache would freeze at the first pass's values; put cache() before it (cache after"
                  + " expensive deterministic work, before shuffle and augmentation)");
            }
            maps.add(m.fn());
            ops.append("stage map\n");
            userFunction = userFunction == null ? "map" : userFunction;
          } else if (!(s instanceof PrefetchStage)) { // a prefetch changes when elements are computed, never which
            throw notOneToOne(s);
          }
        }
      }
    }
    Mode mode;
    if (source instanceof RandomAccessDataset<?>) {
      mode = Mode.RANDOM_ACCESS;
    } else if (source instanceof SplitDataset<?> sd && sd.splits().stream().allMatch(Split::hasKnownRowCount)) {
      mode = Mode.SPLITS;
    } else {
      throw new UnsupportedOperationException("cache() needs a random-access source or a split source whose splits"
          + " know their row counts, but the source is " + source);
    }
    if (userFunction != null && spec.name() == null) {
      throw new IllegalArgumentException("cache(): the " + userFunction + " before it runs a function the cache cannot"
          + " fingerprint (a lambda has no stable identity), so a changed function would read stale data; name what"
          + " the operators before the cache compute, cache(CacheSpec.named(\"decode-v1\")), and change the name"
          + " when the function changes");
    }
    StringBuilder key = new StringBuilder("sluice-cache 1\nmode ").append(mode).append('\n');
    String described = source instanceof Fingerprinted f ? f.fingerprint() : null;
    if (described != null) {
      key.append("source\n").append(described);
    } else if (spec.name() != null) {
      key.append("source (not fingerprinted) ").append(source.getClass().getName()).append('\n');
    } else {
      throw new IllegalArgumentException("cache(): the source " + source + " cannot describe its input (it does not"
          + " implement Fingerprinted), so a change to it would go unnoticed; name what it holds,"
          + " cache(CacheSpec.named(\"my-data-v1\")), and change the name when the data changes");
    }
    key.append(ops);
    if (spec.name() != null) {
      key.append("name ").append(spec.name()).append('\n');
    }
    return new Upstream(source, List.copyOf(stages), List.copyOf(maps), options, mode, key.toString());
  }

  Mode mode() {
    return mode;
  }

  /** The key text: the source's fingerprint, the operators, the name. */
  String fingerprint() {
    return fingerprint;
  }

  Dataset<?> source() {
    return source;
  }

  Options options() {
    return options;
  }

  /** The schema the source declares when no map changes it, else null. */
  Schema declaredSchema() {
    return maps.isEmpty() && source instanceof HasSchema h ? h.schema() : null;
  }

  /** Elements of a random-access upstream. */
  long size() {
    return ((RandomAccessDataset<?>) source).size();
  }

  /** The splits of a split upstream. */
  List<Split> splits() {
    return ((SplitDataset<?>) source).splits();
  }

  /** The source's cheap block starts of {@code split} ({@link SplitDataset#blockStarts}). */
  long[] blockStarts(Split split) {
    return ((SplitDataset<?>) source).blockStarts(split);
  }

  /** The source's block alignment of {@code split} ({@link SplitDataset#blockAlignment}). */
  long blockAlignment(Split split) {
    return ((SplitDataset<?>) source).blockAlignment(split);
  }

  /** Element {@code index} of a random-access upstream, the maps applied on the calling thread. */
  Example element(long index) {
    Object e = ((RandomAccessDataset<?>) source).get(index);
    return checked(apply(e), index);
  }

  private Object apply(Object e) {
    PipelineContext ctx = PipelineContext.defaults();
    for (BiFunction<Object, PipelineContext, Object> f : maps) {
      e = f.apply(e, ctx);
    }
    return e;
  }

  /**
   * Appends elements {@code [first, first + count)} of a random-access upstream to {@code target}:
   * one bulk {@code gather} when no map comes before the cache, else element by element.
   */
  @SuppressWarnings("unchecked")
  void fill(long first, int count, BatchBuilder target) {
    if (maps.isEmpty()) {
      long[] indices = new long[count];
      for (int i = 0; i < count; i++) {
        indices[i] = first + i;
      }
      ((RandomAccessDataset<Example>) source).gather(indices, 0, count, target);
      return;
    }
    for (int i = 0; i < count; i++) {
      target.append(element(first + i));
    }
  }

  /** Rows {@code [fromRow, toRow)} of {@code split} of a split upstream, through the operators before the cache. */
  @SuppressWarnings("unchecked")
  Flux<Example> range(Split split, long fromRow, long toRow, PipelineContext context) {
    SplitDataset<?> sd = (SplitDataset<?>) source;
    Dataset<Object> part = ctx -> (Flux<Object>) sd.read(split, fromRow, toRow);
    return ((Flux<Object>) PlanCompiler.compile(part, stages, options, context)).map(e -> {
      if (!(e instanceof Example x)) {
        throw notExample(e);
      }
      return x;
    });
  }

  private static UnsupportedOperationException notOneToOne(Stage s) {
    return new UnsupportedOperationException("cache() after " + s.describe() + " is not supported: the operators"
        + " before a cache must keep one element per source element (map, prefetch); put cache() right after the"
        + " source and its maps");
  }

  /**
   * Rows {@code [fromRow, toRow)} of {@code split} of a split upstream in batches of
   * {@code firstSize} rows, then {@code size} rows (the last shorter), of {@code schema}, their
   * indices from {@code firstIndex}: the source's own batches when it decodes into batches and no
   * map comes before the cache, else built from the elements. Each batch belongs to the caller; a
   * batch being built when the read ends early is released.
   */
  @SuppressWarnings("unchecked")
  Flux<Batch> rangeBatches(Split split, long fromRow, long toRow, int firstSize, int size, Schema schema,
      BufferPool pool, long firstIndex) {
    long[] expected = {firstIndex};
    long end = firstIndex + (toRow - fromRow);
    if (maps.isEmpty() && source instanceof BatchSplitDataset<?> bd) {
      return ((BatchSplitDataset<Example>) bd).readBatches(split, fromRow, toRow, firstSize, size).map(b -> {
        int want = (int) Math.min(expected[0] == firstIndex ? firstSize : size, end - expected[0]);
        if (b.size() != want || b.size() > 0 && b.index(0) != expected[0]) {
          long found = b.size() > 0 ? b.index(0) : -1;
          int got = b.size();
          b.close();
          throw new IllegalStateException("cache(): " + source + " gave a batch of " + got + " rows from index "
              + found + " of " + split + " where " + want + " rows from index " + expected[0] + " were asked for");
        }
        expected[0] += b.size();
        return b;
      });
    }
    return Flux.defer(() -> {
      BatchBuilder[] current = {null};
      return range(split, fromRow, toRow, PipelineContext.defaults()).<Batch>handle((e, sink) -> {
        if (current[0] == null) {
          int n = (int) Math.min(expected[0] == firstIndex ? firstSize : size, end - expected[0]);
          current[0] = BatchBuilder.create(schema, n, pool);
        }
        current[0].append(checked(e, expected[0]++));
        if (current[0].size() == current[0].capacity()) {
          Batch b = current[0].build();
          current[0] = null;
          sink.next(b);
        }
      }).doFinally(signal -> {
        if (current[0] != null) {
          current[0].close();
          current[0] = null;
        }
      }).concatWith(Flux.defer(() -> expected[0] == end ? Flux.empty() : Flux.error(new IllegalStateException(
          "cache(): the upstream gave " + (expected[0] - firstIndex) + " rows of " + split + " where " + (end - firstIndex)
              + " were asked for"))));
    });
  }

  private static void checked(long expected, long index) {
    if (index != expected) {
      throw new IllegalStateException("cache(): the element at position " + expected + " carries index " + index
          + "; the operators before a cache must keep each example's index (Example.builder(e.index()))");
    }
  }

  /** {@code e} as an example carrying {@code index}, else a clear error. */
  static Example checked(Object e, long index) {
    if (!(e instanceof Example x)) {
      throw notExample(e);
    }
    checked(index, x.index());
    return x;
  }

  private static IllegalArgumentException notExample(Object e) {
    return new IllegalArgumentException("cache() stores examples but the element before it is "
        + (e == null ? "null" : e.getClass().getName()) + "; put cache() before batch() and before maps that"
        + " return other types");
  }
}
