package dev.sluice.operators.internal;

import dev.sluice.core.Batch;
import dev.sluice.core.BatchSplitDataset;
import dev.sluice.core.Options;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.Schema;
import dev.sluice.core.Split;
import dev.sluice.core.internal.OrderedParallel;
import dev.sluice.core.internal.metrics.FluxDecodeTimer;
import dev.sluice.core.internal.metrics.StageMeter;
import dev.sluice.core.spi.BufferPool;
import java.util.ArrayList;
import java.util.List;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Schedulers;

/**
 * The columnar path over a {@link BatchSplitDataset}: with only shuffle / shard / take / skip before
 * {@code batch(B)} (and take / skip after it), the rank's row ranges are decoded with the source's
 * {@code readBatches} and re-cut into {@code B}-row batches by copying column ranges; no
 * {@code Example} is created per row.
 *
 * <p>The rows are those of the element path over the same source ({@link SplitStages},
 * {@link SplitPlan}): the epoch's split sequence (shuffled per (seed, epoch) by {@code shuffle()}),
 * the rank's contiguous range of it with the {@code EqualLength} counts, then take and skip. In
 * order, the batches hold exactly the rows the element path batches, with the same indices and
 * values. A batch may span two splits; a decoded batch that is exactly one output batch is handed
 * on as it is.
 *
 * <p>A buffer shuffle on this path ({@code shuffle()}'s 10,000 rows or {@code shuffle(W)}) is a
 * window shuffle ({@link WindowShuffle}): the rank's rows are decoded a window of about {@code W}
 * rows at a time (rounded to whole decoded batches), the next window decoded on a worker while the
 * current one is served, and each output batch gathers its rows from the window by a seeded
 * permutation of the window that depends only on (seed, epoch, rank). Where the source decodes one
 * column at a time ({@link BatchSplitDataset#decodesColumns()}) and the decode parallelism is 1, a
 * window is decoded field by field into a buffer of one column, each field gathered as it is
 * decoded ({@link ColumnWindows}); the batches are the same.
 *
 * <p>Decode parallelism: {@code numParallelCalls} of {@code batch}, else the source's
 * {@link BatchSplitDataset#decodeParallelism()}. With 1, rows are decoded on the requesting thread
 * (the window shuffle: on one worker) as batches are requested; with {@code P > 1}, {@code P} row
 * ranges (whole splits or parts of them) are decoded at once on workers and kept in order
 * ({@link OrderedParallel}), which holds up to {@code P + 1} decoded ranges.
 */
final class ColumnarPlan {
  /** Fewest rows per decoded batch when re-cutting without a shuffle. */
  static final int MIN_DECODE_ROWS = 256;
  /**
   * Fewest rows per decoded batch when row ranges are decoded on workers without a shuffle: a
   * worker decodes ahead a whole range that waits for its turn, and large batches keep it in few
   * buffers of the pool's size classes rather than in many of the smallest class.
   */
  static final int MIN_PARALLEL_DECODE_ROWS = 8192;
  /** Most rows per decoded batch of a window. */
  static final int MAX_WINDOW_DECODE_ROWS = 65_536;
  /**
   * Bytes of rows (and of their permutation) that {@code shuffle()}'s window may grow to over a
   * source whose blocks align to its units ({@link dev.sluice.core.SplitDataset#blockAlignment}).
   */
  static final long ALIGNED_WINDOW_BYTES = 32L << 20;
  /** Bytes a row of a variable-length field is taken to hold when sizing a window. */
  static final long VARIABLE_FIELD_BYTES = 64;

  private final BatchSplitDataset<?> source;
  private final SplitStages.Prefix prefix;
  private final List<Stage> rowCuts; // take / skip before the window shuffle, or all of them without one
  private final BufferShuffleStage window; // null: no shuffle within the rank
  private final List<Stage> windowCuts; // take / skip after the window shuffle
  private final BatchStage batch;
  private final List<Stage> batchCuts; // take / skip after batch
  private final int next;

  private ColumnarPlan(BatchSplitDataset<?> source, SplitStages.Prefix prefix, List<Stage> rowCuts,
      BufferShuffleStage window, List<Stage> windowCuts, BatchStage batch, List<Stage> batchCuts, int next) {
    this.source = source;
    this.prefix = prefix;
    this.rowCuts = rowCuts;
    this.window = window;
    this.windowCuts = windowCuts;
    this.batch = batch;
    this.batchCuts = batchCuts;
    this.next = next;
  }

  /**
   * The columnar plan of {@code stages} (normalized, without {@code repeat}) over {@code batches}, a
   * source that knows its row counts ({@link PlanBuilder} checks), or null when the path does not
   * apply: no {@code batch} follows the leading stages, or an element operator, a second shard (or a
   * shard after take / skip) or a second buffer shuffle comes before it.
   */
  static ColumnarPlan of(BatchSplitDataset<?> batches, List<Stage> stages) {
    SplitStages.Prefix prefix = SplitStages.prefix(stages);
    if (prefix.buffers().size() > 1) {
      return null;
    }
    BufferShuffleStage window = prefix.buffers().isEmpty() ? null : prefix.buffers().get(0);
    List<Stage> rowCuts = new ArrayList<>();
    List<Stage> windowCuts = new ArrayList<>();
    int i = prefix.next();
    for (; i < stages.size(); i++) {
      Stage s = stages.get(i);
      switch (s.kind()) {
        case TAKE, SKIP -> (window == null ? rowCuts : windowCuts).add(s);
        case BUFFER_SHUFFLE -> {
          if (window != null) {
            return null;
          }
          window = (BufferShuffleStage) s;
        }
        case BATCH -> {
          BatchStage b = (BatchStage) s;
          List<Stage> batchCuts = new ArrayList<>();
          int j = i + 1;
          while (j < stages.size() && RangeCuts.isCut(stages.get(j))) {
            batchCuts.add(stages.get(j++));
          }
          return new ColumnarPlan(batches, prefix, List.copyOf(rowCuts), window, List.copyOf(windowCuts), b,
              List.copyOf(batchCuts), j);
        }
        case SHUFFLE, SHARD, REPEAT, ELEMENT -> {
          return null;
        }
      }
    }
    return null;
  }

  /** The schema of the source's batches. */
  Schema schema() {
    return source.schema();
  }

  /** The index of the first stage after the plan. */
  int next() {
    return next;
  }

  /** Whether a window shuffle runs within the rank. */
  BufferShuffleStage window() {
    return window;
  }

  BatchStage batch() {
    return batch;
  }

  /** One pass for {@code context}. */
  Flux<Batch> flux(Options options, PipelineContext context) {
    return flux(options, context, 0);
  }

  /** The rank's segments for {@code context}: the epoch's sequence of the split source, sharded. */
  private List<SplitPlan.Segment> segments(PipelineContext context) {
    return SplitPlan.sequence(source, prefix.order(context, window == null ? 0 : windowRows(window.bufferSize())));
  }

  /** The rows of a window of a window shuffle of {@code bufferSize} rows: whole decoded batches of at most {@value #MAX_WINDOW_DECODE_ROWS} rows. */
  static long windowRows(int bufferSize) {
    int perWindow = (bufferSize + MAX_WINDOW_DECODE_ROWS - 1) / MAX_WINDOW_DECODE_ROWS;
    return (long) perWindow * decodeRows(bufferSize);
  }

  /** The rows of a window's decoded batches. */
  private static int decodeRows(int bufferSize) {
    int perWindow = (bufferSize + MAX_WINDOW_DECODE_ROWS - 1) / MAX_WINDOW_DECODE_ROWS;
    return (bufferSize + perWindow - 1) / perWindow;
  }

  /** The rows {@code [first, last)} of the rank's rows the take / skip before the window shuffle keep. */
  private RangeCuts rowRange(List<SplitPlan.Segment> segments) {
    long rows = 0;
    for (SplitPlan.Segment s : segments) {
      rows += s.rows();
    }
    RangeCuts cut = new RangeCuts(0, rows);
    rowCuts.forEach(cut::apply);
    return cut;
  }

  /** The rows the batches of the pass for {@code context} are cut from (before the take / skip after {@code batch}). */
  long rows(PipelineContext context) {
    RangeCuts cut = rowRange(segments(context));
    return cut.last() - cut.first();
  }

  /** The number of batches of the pass for {@code context}. */
  long length(PipelineContext context) {
    RangeCuts cut = rowRange(segments(context));
    long count = cut.last() - cut.first();
    if (window != null) {
      RangeCuts windowed = new RangeCuts(0, count);
      windowCuts.forEach(windowed::apply);
      count = windowed.last() - windowed.first();
    }
    long[] out = outputRange(count);
    int b = batch.batchSize();
    return (out[1] - out[0] + b - 1) / b;
  }

  /**
   * The pass for {@code context} without its first {@code skip} batches: their rows are not decoded
   * (with a window shuffle, the window holding the first row served is decoded whole and served
   * from that row on).
   */
  Flux<Batch> flux(Options options, PipelineContext context, long skip) {
    return Flux.defer(() -> {
      List<SplitPlan.Segment> segments = segments(context);
      SplitPlan.announce(source, segments);
      ShardStage shard = prefix.shard();
      RangeCuts cut = rowRange(segments);
      int parallelism = parallelism();
      BufferPool pool = options.memory().pool("batch");
      int b = batch.batchSize();
      if (window == null) {
        long[] out = outputRange(cut.last() - cut.first());
        long hi = cut.first() + out[1];
        long lo = Math.min(hi, cut.first() + out[0] + Math.min(skip, Long.MAX_VALUE / b) * b);
        if (lo >= hi) {
          return Flux.empty();
        }
        int least = parallelism > 1 ? MIN_PARALLEL_DECODE_ROWS : MIN_DECODE_ROWS;
        int decodeRows = b >= least ? b : b * ((least + b - 1) / b);
        Flux<Batch> decoded = decode(restrict(segments, lo, hi), b, decodeRows, parallelism);
        return RebatchOperator.recut(decoded, source.schema(), pool, b, hi - lo, source.toString());
      }
      // the window shuffle: positions [lo, hi) of the windowed rows [first, last) of the rank
      long length = cut.last() - cut.first();
      RangeCuts windowed = new RangeCuts(0, length);
      windowCuts.forEach(windowed::apply);
      long[] out = outputRange(windowed.last() - windowed.first());
      long hi = windowed.first() + out[1];
      long lo = Math.min(hi, windowed.first() + out[0] + Math.min(skip, Long.MAX_VALUE / b) * b);
      if (lo >= hi) {
        return Flux.empty();
      }
      int bufferRows = bufferRows(length, options);
      int decodeRows = decodeRows(bufferRows);
      long windowRows = windowRows(bufferRows);
      long firstWindow = lo / windowRows;
      long endRow = Math.min(length, ((hi + windowRows - 1) / windowRows) * windowRows);
      long from = cut.first() + firstWindow * windowRows;
      List<SplitPiece> pieces = restrict(segments, from, cut.first() + endRow);
      long seed = window.seed() != null ? window.seed() : context.seed();
      long epoch = window.reshuffleEachIteration() ? context.epoch() : 0;
      int rank = shard == null ? 0 : shard.index();
      long key = WindowShuffle.key(seed, epoch, rank);
      if (decodesColumns(parallelism)) {
        return Flux.deferContextual(view -> WindowShuffle.serveColumns(
            () -> new ColumnWindows(source, pieces, (int) windowRows, pool, StageMeter.from(view)), source.schema(),
            pool, b, windowRows, firstWindow, length, lo, hi, key, source.toString()));
      }
      Flux<Batch> decoded = decode(pieces, decodeRows, decodeRows, parallelism);
      return WindowShuffle.serve(decoded, source.schema(), pool, b, windowRows, firstWindow, length, lo, hi, key,
          source.toString());
    });
  }

  /**
   * The rows of the window shuffle of a pass of {@code length} rows: the buffer size, except for
   * {@code shuffle()}'s default window over a source that aligns its blocks to units decoded whole
   * (HDF5 chunks), whose blocks are too large for a window of a few of them to mix the rows: that
   * window holds the rank's rows, up to {@value #ALIGNED_WINDOW_BYTES} bytes of them (an eighth of
   * the memory limit when that is less), and never fewer rows than the buffer size. A function of
   * the pass's length, the schema and the memory limit, so a resumed pass cuts the same windows.
   */
  private int bufferRows(long length, Options options) {
    int buffer = window.bufferSize();
    if (!window.isSplitDefault() || !BlockPlan.aligned(source, source.splits())) {
      return buffer;
    }
    long bytes = ALIGNED_WINDOW_BYTES;
    long limit = options.memory().limit();
    if (limit != dev.sluice.core.MemoryManager.UNLIMITED) {
      bytes = Math.min(bytes, limit / 8);
    }
    long rows = Math.min(length, bytes / (rowBytes() + Integer.BYTES));
    return (int) Math.max(buffer, Math.min(rows, Integer.MAX_VALUE - 8));
  }

  /** The bytes of a row of the source: fixed-length fields' own, {@value #VARIABLE_FIELD_BYTES} for each other field. */
  private long rowBytes() {
    long n = 0;
    for (dev.sluice.core.TensorSpec f : source.schema().fields()) {
      n += f.isFixedLength() ? f.rowBytes() : VARIABLE_FIELD_BYTES;
    }
    return Math.max(1, n);
  }

  /**
   * Whether the window shuffle decodes each window one column at a time, gathering each column as
   * it is decoded: where the source can ({@link BatchSplitDataset#decodesColumns()}) and windows are
   * decoded one at a time (with decode parallelism, whole batches are decoded on workers instead).
   */
  private boolean decodesColumns(int parallelism) {
    return parallelism <= 1 && source.decodesColumns();
  }

  /**
   * The positions {@code [from, to)} the batches cover out of {@code count} rows: whole batches
   * only with {@code dropRemainder}, and the take / skip stages after {@code batch} as a range of
   * batch numbers.
   */
  private long[] outputRange(long count) {
    int b = batch.batchSize();
    RangeCuts numbers = new RangeCuts(0, batch.dropRemainder() ? count / b : (count + b - 1) / b);
    batchCuts.forEach(numbers::apply);
    return new long[] {numbers.first() * b, Math.min(count, numbers.last() * b)};
  }

  /** The parts of {@code segments} at sequence positions {@code [from, to)}. */
  static List<SplitPiece> restrict(List<SplitPlan.Segment> segments, long from, long to) {
    List<SplitPiece> out = new ArrayList<>();
    long base = 0;
    for (SplitPlan.Segment s : segments) {
      long end = base + s.rows();
      long a = Math.max(from, base);
      long b = Math.min(to, end);
      if (a < b) {
        out.add(new SplitPiece(s.split(), s.fromRow() + (a - base), s.fromRow() + (b - base), a - from));
      }
      base = end;
      if (base >= to) {
        break;
      }
    }
    return out;
  }

  /**
   * The rows of {@code pieces} in order, decoded in batches whose boundaries fall on multiples of
   * {@code align} rows from the first piece's start ({@code decodeRows} is a multiple of
   * {@code align}), so that no decoded batch crosses an output batch or a window.
   */
  private Flux<Batch> decode(List<SplitPiece> pieces, int align, int decodeRows, int parallelism) {
    return Flux.deferContextual(view -> {
      StageMeter meter = StageMeter.from(view); // the decoding stage's, when the pass is measured
      if (parallelism <= 1) {
        return Flux.fromIterable(pieces).concatMap(p -> piece(p, align, decodeRows, meter), 0);
      }
      return OrderedParallel.<SplitPiece, Batch>flatMap(Flux.fromIterable(pieces),
          (p, out) -> piece(p, align, decodeRows, meter).doOnNext(out).blockLast(),
          parallelism, Schedulers.boundedElastic(), Batch::close);
    });
  }

  /** One piece, checked to deliver exactly its rows; its decode timed for {@code meter} (may be null). */
  private Flux<Batch> piece(SplitPiece p, int align, int decodeRows, StageMeter meter) {
    int into = (int) (p.position() % align);
    int first = into == 0 ? decodeRows : align - into;
    return Flux.defer(() -> {
      long[] seen = {0};
      Flux<Batch> range = source.readBatches(p.split(), p.fromRow(), p.toRow(), first, decodeRows);
      return FluxDecodeTimer.timed(range, meter, p.split().id(), p.fromRow(), p.rows())
          .<Batch>handle((b, sink) -> {
            seen[0] += b.size();
            if (seen[0] > p.rows()) {
              b.close();
              sink.error(SplitPiece.wrongCount(p.split(), p.fromRow(), p.toRow(), "more"));
            } else {
              sink.next(b);
            }
          })
          .concatWith(Flux.defer(() -> seen[0] == p.rows() ? Flux.empty()
              : Flux.error(SplitPiece.wrongCount(p.split(), p.fromRow(), p.toRow(), String.valueOf(seen[0])))));
    });
  }

  /** Row ranges decoded at once: {@code numParallelCalls} of {@code batch}, else the source's. */
  private int parallelism() {
    return batch.numParallelCalls() > 1 ? batch.numParallelCalls() : Math.max(1, source.decodeParallelism());
  }

  /** How the window shuffle decodes, for {@code explain}. */
  private String windowDecode() {
    return decodesColumns(parallelism()) ? ", decoded and gathered a column at a time" : "";
  }

  /** What {@code explain} says of {@code shuffle()}'s window. */
  private String defaultWindow() {
    long align = BlockPlan.maxAlignment(source, source.splits());
    if (align <= 1) {
      return "window shuffle of " + window.bufferSize() + " rows";
    }
    return "window shuffle of the rank's rows, up to " + (ALIGNED_WINDOW_BYTES >> 20) + " MiB of them (at least "
        + window.bufferSize() + " rows), since its blocks are whole units of " + align
        + " rows that the source decodes whole and a window must hold many of them";
  }

  /** What {@code explain} says of the window shuffle of a random-access source's block shuffle. */
  String explainWindow() {
    if (window == null) {
      return "no window shuffle";
    }
    if (!window.isSplitDefault()) {
      return "window shuffle of " + window.bufferSize() + " rows";
    }
    return "window shuffle of the rank's rows, up to " + (ALIGNED_WINDOW_BYTES >> 20) + " MiB of them (an eighth of "
        + "the memory limit when less; at least " + window.bufferSize() + " rows), the next window read ahead on a "
        + "worker";
  }

  /** What {@code explain} says about a stage of this plan. */
  String explain(Stage s) {
    return switch (s.kind()) {
      case SHUFFLE -> SplitStages.explainShuffle((ShuffleStage) s)
          + (window != null && window.isSplitDefault() ? "; " + defaultWindow() + windowDecode() : "");
      case BUFFER_SHUFFLE -> "window shuffle of " + ((BufferShuffleStage) s).bufferSize() + " rows" + windowDecode();
      case SHARD -> SplitStages.explainShard(prefix);
      case TAKE, SKIP -> "row range";
      case BATCH -> "readBatches re-cut into " + batch.batchSize() + "-row batches, decode parallelism "
          + parallelism();
      case REPEAT, ELEMENT -> "";
    };
  }

  /** Used by {@code explain} for take and skip after {@code batch}. */
  boolean isBatchCut(Stage s) {
    return batchCuts.stream().anyMatch(c -> c == s);
  }
}
