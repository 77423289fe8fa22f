package dev.sluice.operators.internal;

import dev.sluice.core.Batch;
import dev.sluice.core.Schema;
import dev.sluice.core.internal.Fatal;
import dev.sluice.core.internal.Mix;
import dev.sluice.core.internal.metrics.StageMeter;
import dev.sluice.core.spi.BatchBuilder;
import dev.sluice.core.spi.BufferPool;
import dev.sluice.core.spi.ColumnWindow;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.function.Function;
import java.util.function.Supplier;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Schedulers;

/**
 * The window shuffle of the columnar path: the rank's rows, decoded in order, are cut into windows
 * of {@code windowRows} rows (window {@code k} holds rows {@code [k·W, (k+1)·W)}, the last one
 * fewer), its decoded batches joined into one; position {@code p} of window {@code k} is its row
 * {@code π_k(p)}, for a uniform random permutation {@code π_k} of the window (Fisher-Yates from a
 * generator keyed by (seed, epoch, rank) and {@code k}), and the {@code B}-row output batches take
 * the positions in order, so a batch may take rows from two windows (the batch being filled is
 * carried into the next window by the re-batcher, {@link RebatchOperator.Rows}). Each window's rows are gathered
 * straight into the output batches, column by column across all of them
 * ({@link BatchBuilder#appendRows(Batch, int[], int, int, List)}): one copy of each row, with each
 * column of the window read while it is in the cache. From a source that decodes one column at a
 * time ({@link #serveColumns}) the window is never decoded whole: each field of its rows is decoded
 * into a buffer of one column and gathered at once ({@link ColumnWindow}).
 *
 * <p>Every row of a window is equally likely to land at each of the window's positions, so a
 * window shuffle of {@code W} rows is at least as random as a buffer shuffle of {@code W} elements
 * over the same stream (whose element at output position {@code p} comes from input positions
 * {@code < p + W}), and it depends only on the rows, the seed, the epoch and the rank.
 *
 * <p>Memory and threads: the windows are decoded and gathered on a worker, one window ahead: the
 * output batches of the window being served plus those of the next one (or the next window being
 * decoded). On complete, error and cancel every batch is closed exactly once: the decoded batches
 * waiting for their window, the output batches not yet served and the one being filled.
 */
final class WindowShuffle {
  /** Salt of the window permutations' random stream. */
  static final long SALT = 0x3A1D_0F5E_77C4_B92DL;

  private WindowShuffle() {}

  /** The key of a rank's window permutations. */
  static long key(long seed, long epoch, int rank) {
    return Mix.seed(Mix.seed(seed, epoch, SALT), rank, SALT);
  }

  /** The permutation of window {@code window} of {@code rows} rows for {@code key}. */
  static int[] permutation(long key, long window, int rows) {
    int[] perm = new int[rows];
    for (int i = 0; i < rows; i++) {
      perm[i] = i;
    }
    SplittableRandom random = new SplittableRandom(Mix.seed(key, window, SALT));
    for (int i = rows - 1; i > 0; i--) {
      int j = random.nextInt(i + 1);
      int t = perm[i];
      perm[i] = perm[j];
      perm[j] = t;
    }
    return perm;
  }

  /**
   * Serves positions {@code [lo, hi)} of the windowed sequence of {@code length} rows as
   * {@code batchSize}-row batches.
   *
   * @param decoded the rows of windows {@code firstWindow, firstWindow + 1, ..} in order, in
   *     batches that never cross a window boundary
   */
  static Flux<Batch> serve(Flux<Batch> decoded, Schema schema, BufferPool pool, int batchSize, long windowRows,
      long firstWindow, long length, long lo, long hi, long key, String source) {
    return serve(grouper -> decoded.handle(Fatal.<Batch, Window>handler("window shuffle", (b, sink) -> {
      Window w = grouper.accept(b);
      if (w != null) {
        sink.next(w);
      }
    })), schema, pool, batchSize, windowRows, firstWindow, length, lo, hi, key, source);
  }

  /**
   * As {@link #serve(Flux, Schema, BufferPool, int, long, long, long, long, long, long, String)},
   * from windows decoded one column at a time: each is gathered column by column as it is decoded
   * ({@link BatchBuilder#appendRows(ColumnWindow, int[], int, int, List)}), so its rows are never
   * held whole. The windows' cursors and buffers are released before the pass completes or fails.
   *
   * @param open opens, on subscription, the windows {@code firstWindow, firstWindow + 1, ..} in order
   */
  static Flux<Batch> serveColumns(Supplier<ColumnWindows> open, Schema schema, BufferPool pool, int batchSize,
      long windowRows, long firstWindow, long length, long lo, long hi, long key, String source) {
    // a downstream that fused this generate may poll it once more after a cancel cleaned its state
    // up, and Reactor then hands the generator and the cleanup a null state
    return serve(grouper -> Flux.<Window, ColumnWindows>generate(Fatal.supplier("window shuffle", open)::get,
        Fatal.generator("window shuffle", (windows, sink) -> {
      if (windows == null) {
        sink.complete();
        return null;
      }
      for (;;) {
        ColumnWindow rows = grouper.isClosed() ? null : windows.next(); // closed: the pass was cancelled
        if (rows == null) {
          windows.close(); // released before the completion is signalled
          sink.complete();
          return windows;
        }
        Window w = grouper.accept(rows); // a failure here releases the windows first (generate's cleanup)
        if (w != null) {
          sink.next(w);
          return windows;
        }
      }
    }), windows -> {
      if (windows != null) {
        windows.close();
      }
    }), schema, pool, batchSize, windowRows, firstWindow, length, lo, hi, key, source);
  }

  private static Flux<Batch> serve(Function<Grouper, Flux<Window>> windows, Schema schema, BufferPool pool,
      int batchSize, long windowRows, long firstWindow, long length, long lo, long hi, long key, String source) {
    return Flux.deferContextual(view -> {
      Grouper grouper = new Grouper(schema, pool, batchSize, windowRows, firstWindow, length, lo, hi, key, source);
      StageMeter meter = StageMeter.from(view);
      if (meter != null) {
        meter.buffer(() -> (int) Math.min(Integer.MAX_VALUE, grouper.buffered), (int) Math.min(Integer.MAX_VALUE, 2 * windowRows));
      }
      // The windows are tracked here and closed when the pass ends, not left to the discard hook
      // (a window handed on as a cancel comes is discarded, and the discard hook does not close it).
      return windows.apply(grouper)
          // one window ahead, decoded on a worker while the current one is served on another; not
          // Reactor's subscribeOn + publishOn: publishOn reports a hand-off that a cancel raced as a
          // dropped error ("Scheduler unavailable"), FluxPrefetch drops it silently
          .transform(w -> new FluxPrefetch<>(w, 1, Schedulers.boundedElastic(), Schedulers.parallel(), 0))
          .concatMap(w -> Flux.<Batch>generate(Fatal.generator("window shuffle", sink -> {
            Batch b = w.next();
            if (b == null) {
              w.close(); // before the next window is asked for
              sink.complete();
            } else {
              sink.next(b);
            }
          })).doFinally(signal -> w.close()), 0)
          .concatWith(Flux.defer(grouper::finish))
          .doFinally(signal -> grouper.close());
    });
  }

  /** The output batches a window completed, in the order they go out in. */
  static final class Window implements AutoCloseable {
    private final Grouper owner;
    private final ArrayDeque<Batch> batches;
    final int rowCount;
    private boolean closed;

    Window(Grouper owner, List<Batch> batches) {
      this.owner = owner;
      this.batches = new ArrayDeque<>(batches);
      this.rowCount = batches.stream().mapToInt(Batch::size).sum();
    }

    /** The next batch, now the caller's; null when the window has no more. */
    synchronized Batch next() {
      return closed ? null : batches.poll();
    }

    @Override
    public void close() {
      synchronized (this) {
        if (closed) {
          return;
        }
        closed = true;
        batches.forEach(Batch::close);
        batches.clear();
      }
      owner.forget(this);
    }
  }

  /**
   * Groups the decoded batches into windows, gathers each window into output batches, and keeps
   * every window it made until the window is closed; {@link #close()} closes the decoded batches of
   * the window being filled, the output batch that spans into the next window, and every window
   * still open (waiting in a queue, or dropped by an operator).
   */
  private static final class Grouper {
    private final Schema schema;
    private final BufferPool pool;
    private final long windowRows;
    private final long length;
    private final long lo;
    private final long hi;
    private final long key;
    private final String source;
    private long number;
    private final List<Batch> pending = new ArrayList<>();
    private final Set<Window> open = Collections.newSetFromMap(new IdentityHashMap<>());
    private long pendingRows;
    private final RebatchOperator.Rows cut; // the output batches; the one being filled continues into the next window
    private boolean closed;
    /** Rows held: pending and in windows not yet closed (read by the stage's probe). */
    volatile long buffered;

    Grouper(Schema schema, BufferPool pool, int batchSize, long windowRows, long firstWindow, long length,
        long lo, long hi, long key, String source) {
      this.schema = schema;
      this.pool = pool;
      this.windowRows = windowRows;
      this.number = firstWindow;
      this.length = length;
      this.lo = lo;
      this.hi = hi;
      this.key = key;
      this.source = source;
      this.cut = new RebatchOperator.Rows(schema, pool, batchSize, hi - lo, source);
    }

    /** Adds a decoded batch; returns the output batches of the window it completes, or null when there are none. */
    synchronized Window accept(Batch b) {
      if (closed) {
        b.close();
        return null;
      }
      pending.add(b);
      pendingRows += b.size();
      buffered += b.size();
      long want = windowSize();
      if (pendingRows > want) {
        throw new IllegalStateException(source + " delivered a batch that crosses a window boundary ("
            + pendingRows + " rows where the window holds " + want + ")");
      }
      if (pendingRows < want) {
        return null;
      }
      Batch rows = pending.size() == 1 ? pending.get(0) : join(pending, (int) want);
      pending.clear();
      pendingRows = 0;
      buffered -= want;
      try (rows) {
        return gather((int) want, (order, from, count, targets) ->
            BatchBuilder.appendRows(rows, order, from, count, targets));
      }
    }

    /**
     * Gathers a window decoded one column at a time (consumed whether or not its rows are served);
     * returns the output batches it completes, or null when there are none.
     */
    synchronized Window accept(ColumnWindow rows) {
      if (closed) {
        rows.clear(); // the pass is over: the cursors and the window's buffers are closed with it
        return null;
      }
      long want = windowSize();
      if (rows.size() != want) {
        throw new IllegalStateException(source + " delivered a window of " + rows.size() + " rows where the window "
            + number + " holds " + want);
      }
      return gather((int) want, (order, from, count, targets) ->
          BatchBuilder.appendRows(rows, order, from, count, targets));
    }

    /** True once the pass has ended ({@link #close()}). */
    synchronized boolean isClosed() {
      return closed;
    }

    /** The rows of the window being filled. */
    private long windowSize() {
      return Math.min(windowRows, length - number * windowRows);
    }

    /** A gather of positions {@code [from, from + count)} of a window, row {@code order[p]} at position {@code p}. */
    @FunctionalInterface
    private interface Gather {
      void into(int[] order, int from, int count, List<BatchBuilder> targets);
    }

    /**
     * The positions of the window of {@code want} rows that are served, gathered by {@code rows} in
     * the window's permuted order; returns the output batches of the window, or null when there are
     * none.
     */
    private Window gather(int want, Gather rows) {
      long start = number * windowRows;
      int[] order = permutation(key, number, want);
      number++;
      int from = (int) Math.max(0, lo - start);
      int to = (int) Math.max(from, Math.min(want, hi - start));
      List<Batch> completed = cut.gather(to - from, targets -> rows.into(order, from, to - from, targets));
      if (completed.isEmpty()) {
        return null; // every row went into the batch carried to the next window
      }
      Window w = new Window(this, completed);
      buffered += w.rowCount;
      open.add(w);
      return w;
    }

    synchronized void forget(Window w) {
      if (open.remove(w)) {
        buffered -= w.rowCount;
      }
    }

    /** One batch of the window's batches, in order (a gather then reads one set of buffers). */
    private Batch join(List<Batch> batches, int rows) {
      try (BatchBuilder builder = BatchBuilder.create(schema, rows, pool)) {
        for (Batch b : batches) {
          builder.appendRange(b, 0, b.size());
        }
        return builder.build();
      } finally {
        batches.forEach(Batch::close);
      }
    }

    /** After the last decoded batch: every position asked for went into a finished batch. */
    synchronized Flux<Batch> finish() {
      return closed ? Flux.empty() : cut.finish();
    }

    void close() {
      List<Window> left;
      synchronized (this) {
        closed = true;
        pending.forEach(Batch::close);
        pending.clear();
        buffered -= pendingRows;
        pendingRows = 0;
        cut.close();
        left = new ArrayList<>(open);
      }
      left.forEach(Window::close); // a window being served is closed once its step ends
    }
  }
}
