package dev.sluice.operators.internal;

import dev.sluice.core.Batch;
import dev.sluice.core.BatchBuilder;
import dev.sluice.core.BufferPool;
import dev.sluice.core.Schema;
import dev.sluice.core.internal.Mix;
import dev.sluice.core.internal.TrackedScheduler;
import dev.sluice.core.internal.metrics.StageMeter;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Schedulers;

/**
 * The window shuffle of the columnar path: the rank's rows, decoded in order, are cut into windows
 * of {@code windowRows} rows (window {@code k} holds rows {@code [k·W, (k+1)·W)}, the last one
 * fewer), its decoded batches joined into one; the rows of window {@code k} are gathered, column by
 * column ({@link BatchBuilder#appendRows}), in the order of a uniform random permutation of the
 * window (Fisher-Yates from a generator keyed by (seed, epoch, rank) and {@code k}), and the
 * {@code B}-row batches are cut from the permuted windows by range copies; a batch may take rows
 * from two windows.
 *
 * <p>Every row of a window is equally likely to land at each of the window's positions, so a
 * window shuffle of {@code W} rows is at least as random as a buffer shuffle of {@code W} elements
 * over the same stream (whose element at output position {@code p} comes from input positions
 * {@code < p + W}), and it depends only on the rows, the seed, the epoch and the rank.
 *
 * <p>Memory and threads: the windows are decoded and grouped on a worker, one window ahead: the
 * window being served plus the next one (being decoded or waiting). On complete, error and cancel
 * every decoded batch is closed exactly once: the window served, the one waiting, the one being
 * filled, and the output batch being gathered.
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
    return Flux.deferContextual(view -> {
      Grouper grouper = new Grouper(schema, pool, windowRows, firstWindow, length, key, source);
      StageMeter meter = StageMeter.from(view);
      if (meter != null) {
        meter.buffer(() -> (int) Math.min(Integer.MAX_VALUE, grouper.buffered), (int) Math.min(Integer.MAX_VALUE, 2 * windowRows));
      }
      Recut recut = new Recut(schema, pool, batchSize, hi - lo);
      // The windows are tracked here and closed when the pass ends, not left to the discard hook:
      // publishOn loses what it has queued when a cancel disposes its worker before a scheduled drain
      // runs (reactor/reactor-core#4396).
      return decoded
          .<Window>handle((b, sink) -> {
            Window w = grouper.accept(b);
            if (w != null) {
              sink.next(w);
            }
          })
          .subscribeOn(TrackedScheduler.of(Schedulers.boundedElastic()))
          .publishOn(TrackedScheduler.of(Schedulers.parallel()), 1) // one window ahead: decoded while the current one is served
          .concatMap(w -> Flux.<Batch>generate(sink -> {
            Batch b = w.next(recut, lo, hi);
            if (b == null) {
              w.close(); // before the next window is asked for
              sink.complete();
            } else {
              sink.next(b);
            }
          }).doFinally(signal -> w.close()), 0)
          .concatWith(Flux.defer(recut::finish))
          .doFinally(signal -> {
            recut.close();
            grouper.close();
          });
    });
  }

  /** The rows of one window, one batch, already in the order they go out in. */
  static final class Window implements AutoCloseable {
    private final Grouper owner;
    final long number;
    final long start; // position of its first row in the windowed sequence
    final Batch rows;
    final int rowCount;
    private final int[] position = {-1}; // the next row to serve, once started
    private boolean closed;

    Window(Grouper owner, long number, long start, Batch rows) {
      this.owner = owner;
      this.number = number;
      this.start = start;
      this.rows = rows;
      this.rowCount = rows.size();
    }

    /**
     * The next batch {@code recut} completes from the window's rows at positions {@code [lo, hi)} of
     * the windowed sequence, or null when the window has no more to give (a batch being filled
     * carries over to the next window).
     */
    synchronized Batch next(Recut recut, long lo, long hi) { // the window is not closed under the copy
      if (closed) {
        return null;
      }
      if (position[0] < 0) {
        position[0] = (int) Math.max(0, lo - start);
      }
      return recut.fill(rows, position, (int) Math.min(rows.size(), hi - start));
    }

    @Override
    public void close() {
      synchronized (this) {
        if (closed) {
          return;
        }
        closed = true;
        rows.close();
      }
      owner.forget(this);
    }
  }

  /**
   * Groups the decoded batches into windows and keeps every window it made until the window is
   * closed; {@link #close()} closes the batches of the window being filled and every window still
   * open (waiting in a queue, or dropped by an operator).
   */
  private static final class Grouper {
    private final Schema schema;
    private final BufferPool pool;
    private final long windowRows;
    private final long length;
    private final long key;
    private final String source;
    private long number;
    private final List<Batch> pending = new ArrayList<>();
    private final java.util.Set<Window> open = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
    private long pendingRows;
    private boolean closed;
    /** Rows held: pending and in windows not yet closed (read by the stage's probe). */
    volatile long buffered;

    Grouper(Schema schema, BufferPool pool, long windowRows, long firstWindow, long length, long key, String source) {
      this.schema = schema;
      this.pool = pool;
      this.windowRows = windowRows;
      this.number = firstWindow;
      this.length = length;
      this.key = key;
      this.source = source;
    }

    /** Adds a decoded batch; returns the window it completes, or null. */
    synchronized Window accept(Batch b) {
      if (closed) {
        b.close();
        return null;
      }
      pending.add(b);
      pendingRows += b.size();
      buffered += b.size();
      long start = number * windowRows;
      long want = Math.min(windowRows, length - start);
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
      Window w = new Window(this, number, start, permute(rows, permutation(key, number, (int) want)));
      number++;
      open.add(w);
      return w;
    }

    /**
     * The rows of {@code rows} in the given order, in one batch ({@code rows} is closed): a gather of
     * the whole window column by column, so that each column of the window is read while it is in
     * the cache, and the batches served from the window are range copies.
     */
    private Batch permute(Batch rows, int[] order) {
      try (rows; BatchBuilder builder = BatchBuilder.create(schema, order.length, pool)) {
        builder.appendRows(rows, order, 0, order.length);
        return builder.build();
      }
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

    void close() {
      List<Window> left;
      synchronized (this) {
        closed = true;
        pending.forEach(Batch::close);
        pending.clear();
        buffered -= pendingRows;
        pendingRows = 0;
        left = new ArrayList<>(open);
      }
      left.forEach(Window::close); // a window being served is closed once its gather step ends
    }
  }
}
