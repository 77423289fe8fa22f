package dev.sluice.operators.internal;

import dev.sluice.core.Batch;
import dev.sluice.core.Column;
import dev.sluice.core.Example;
import dev.sluice.core.Schema;
import dev.sluice.core.Tensor;
import dev.sluice.core.internal.OrderedParallel;
import dev.sluice.core.spi.BatchBuilder;
import dev.sluice.core.spi.BufferPool;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.function.Function;
import java.util.function.Supplier;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Schedulers;

/**
 * The one re-batcher: cuts rows that arrive in order into batches of {@code batchSize} rows. Rows
 * arrive as single examples ({@link #elements}: {@code batch} and {@code paddedBatch}, with the
 * collation as a hook), as whole batches ({@link #recut}: the columnar path; {@link #rebatch}:
 * {@code unbatch()} right before {@code batch}), or as rows of a window gathered by a permutation
 * ({@link Rows#gather}: the window shuffle). An output batch
 * that is exactly one input batch is handed on as it is, one that lies inside one input batch of
 * fixed-length fields is a view of its rows, and any other is copied, once, into a pooled batch;
 * the batch being filled is carried over to the next input.
 */
public final class RebatchOperator {
  private RebatchOperator() {}

  /**
   * Groups {@code batchSize} consecutive examples (the last group smaller, or dropped with
   * {@code dropRemainder}) and collates each group into one batch: {@code prepare} runs on every
   * group in order on the subscriber's thread, then {@code collate} turns the prepared group into a
   * batch, on up to {@code numParallelCalls} {@code parallel} workers at once, in order.
   *
   * <p>Examples of a group not yet complete go to the discard hook on cancel and error; with
   * parallel collation, batches collated and not yet emitted are closed.
   *
   * @param prepare makes, per subscription, the in-order step (checks, schema inference)
   * @param collate copies a prepared group into a batch the caller then owns
   * @param numParallelCalls groups collated concurrently, &le; 1 for the subscriber's thread
   */
  static <P> Function<Flux<Example>, Flux<Batch>> elements(int batchSize, boolean dropRemainder, int numParallelCalls,
      Supplier<Function<List<Example>, P>> prepare, Function<P, Batch> collate) {
    if (batchSize <= 0) {
      throw new IllegalArgumentException("batchSize > 0 required but it was " + batchSize);
    }
    return flux -> Flux.defer(() -> {
      Flux<P> groups = flux.buffer(batchSize, () -> new ArrayList<>(batchSize))
          .filter(list -> !dropRemainder || list.size() == batchSize)
          .map(prepare.get());
      if (numParallelCalls <= 1) {
        return groups.map(collate);
      }
      return OrderedParallel.<P, Batch>flatMap(groups, (p, out) -> out.accept(collate.apply(p)), numParallelCalls,
          Schedulers.parallel(), Batch::close);
    });
  }

  /**
   * Re-cuts {@code decoded} (batches of any sizes, in order) into batches of {@code batchSize}
   * rows, {@code total} rows in all, so the last may be shorter; fails when the input holds more or
   * fewer rows. Every batch taken in and not handed on is closed, also on cancel and error (the
   * batches of an input not yet emitted go to the discard hook, which closes them).
   */
  static Flux<Batch> recut(Flux<Batch> decoded, Schema schema, BufferPool pool, int batchSize, long total,
      String source) {
    return Flux.defer(() -> {
      Rows rows = new Rows(schema, pool, batchSize, total, source);
      return decoded.concatMapIterable(rows::accept, 1)
          .concatWith(Flux.defer(rows::finish))
          .doFinally(signal -> rows.close())
          .doOnDiscard(Batch.class, Batch::close);
    });
  }

  /**
   * {@code unbatch()} then {@code batch(batchSize, dropRemainder)} over {@code batches}, without
   * their first {@code skipRows} rows: the batches' rows re-cut without an example per row when the
   * examples' batch would have the batches' schema (inferred from the first row, as {@code batch}
   * does: no padded, nullable or variable-length field), else through the examples. Batches of
   * another schema after the first fail the pass. Every batch taken in and not handed on is
   * closed, also on cancel and error.
   *
   * @param numParallelCalls the batch's collation parallelism where the rows go through examples
   */
  static Flux<Batch> rebatch(Flux<Batch> batches, int batchSize, boolean dropRemainder, long skipRows,
      BufferPool pool, int numParallelCalls) {
    return batches.switchOnFirst((first, all) -> {
      Batch b = first.get();
      if (b == null || !keepsSchema(b, skipRows)) {
        return all.transform(UnbatchOperator.of()).skip(skipRows)
            .transform(BatchOperator.of(batchSize, dropRemainder, null, pool, numParallelCalls));
      }
      Schema schema = b.schema();
      return Flux.defer(() -> {
        Rows rows = new Rows(schema, pool, batchSize, Long.MAX_VALUE, "unbatch");
        rows.skip = skipRows;
        rows.checkSchema = true;
        return all.concatMapIterable(rows::accept, 1)
            .concatWith(Flux.defer(() -> rows.rest(dropRemainder)))
            .doFinally(signal -> rows.close())
            .doOnDiscard(Batch.class, Batch::close);
      });
    });
  }

  /** Whether the batch of {@code b}'s rows from {@code from} on has {@code b}'s schema (as inferred from row {@code from}). */
  private static boolean keepsSchema(Batch b, long from) {
    if (from >= b.size()) {
      return false;
    }
    for (int i = 0; i < b.schema().size(); i++) {
      if (b.column(i).hasLengths()) {
        return false;
      }
    }
    try {
      return b.schema().equals(Schemas.infer(b.copyRow((int) from)));
    } catch (IllegalArgumentException e) {
      return false; // a null field: the examples' batch reports it
    }
  }

  /**
   * The rows of one pass being cut into batches of {@code batchSize} rows (the first may have
   * another size), {@code total} rows in all: the state of {@link #recut}, of the window shuffle and
   * of a cache's columnar reads. One instance per subscription.
   *
   * <p>Ownership: {@link #accept} takes its input batch (closes it, or hands it on); the batches
   * returned belong to the caller. {@link #close} releases the batch being filled. Every method is
   * synchronized, so a cancel on another thread never releases memory a copy is writing.
   */
  public static final class Rows implements AutoCloseable {
    private final Schema schema;
    private final BufferPool pool;
    private final int firstSize;
    private final int batchSize;
    private final long total;
    private final String source;
    private long done; // rows taken into finished batches and the batch being filled
    private BatchBuilder carry; // the batch being filled, continued by the next input
    private long skip; // rows of the inputs still to be dropped before the first batch
    private boolean checkSchema; // inputs of another schema than the first fail the cut
    private boolean closed;

    Rows(Schema schema, BufferPool pool, int batchSize, long total, String source) {
      this(schema, pool, batchSize, batchSize, total, source);
    }

    /** As {@link #Rows(Schema, BufferPool, int, long, String)} with a first batch of {@code firstSize} rows. */
    public Rows(Schema schema, BufferPool pool, int firstSize, int batchSize, long total, String source) {
      this.schema = schema;
      this.pool = pool;
      this.firstSize = firstSize;
      this.batchSize = batchSize;
      this.total = total;
      this.source = source;
    }

    /** Copies the rows of one input, in order, into {@code targets}, filling each in turn. */
    @FunctionalInterface
    public interface Gather {
      void into(List<BatchBuilder> targets);
    }

    /**
     * The output batches that the rows of {@code input} complete, in order (often none or one). An
     * output batch that is all of {@code input} is {@code input} itself; one that lies inside it is a
     * view of its rows when every field is of fixed length ({@link #slice}); the rest are copied.
     */
    synchronized List<Batch> accept(Batch input) {
      if (closed) {
        input.close();
        return List.of();
      }
      if (checkSchema && !input.schema().equals(schema)) {
        input.close();
        throw new IllegalArgumentException("cannot batch " + source + ": a batch of " + input.schema()
            + " after rows of " + schema);
      }
      int n = input.size();
      int start = (int) Math.min(skip, n);
      skip -= start;
      if (start == 0 && carry == null && n > 0 && n == nextSize()) {
        done += n;
        return List.of(input); // exactly the next batch: no copy
      }
      List<Batch> out = new ArrayList<>(2);
      try (input) {
        boolean views = isSliceable(input);
        int position = start;
        while (position < n && !closed) {
          int want = nextSize();
          if (carry == null && views && want > 0 && n - position >= want) {
            out.add(slice(input, position, want));
            position += want;
            done += want;
            continue;
          }
          // complete the batch being filled, or copy the rows left into new batches
          int count = carry != null ? Math.min(n - position, carry.capacity() - carry.size()) : n - position;
          int from = position;
          out.addAll(gather(count, targets -> {
            int p = from;
            for (BatchBuilder t : targets) {
              int k = Math.min(from + count - p, t.capacity() - t.size());
              t.appendRange(input, p, k);
              p += k;
            }
          }));
          position += count;
        }
        return out;
      } catch (RuntimeException e) {
        out.forEach(Batch::close);
        throw e;
      }
    }

    /** Whether rows of {@code b} can be handed on as views: every field is of fixed length and unpadded. */
    private static boolean isSliceable(Batch b) {
      for (int i = 0; i < b.schema().size(); i++) {
        Column c = b.column(i);
        if (c.offsetLevels() != 0 || c.hasLengths()) {
          return false;
        }
      }
      return true;
    }

    /** Rows {@code [from, from + count)} of {@code b} as a batch of views that holds its own handle on {@code b}'s memory. */
    private static Batch slice(Batch b, int from, int count) {
      List<Column> columns = new ArrayList<>(b.schema().size());
      for (int i = 0; i < b.schema().size(); i++) {
        Column c = b.column(i);
        Tensor validity = c.hasValidity() ? c.validity().slice(from, count) : null;
        columns.add(Column.of(c.spec(), count, c.values().slice(from, count), List.of(),
            Collections.singletonList(validity)));
      }
      long[] indices = new long[count];
      for (int r = 0; r < count; r++) {
        indices[r] = b.index(from + r);
      }
      Batch handle = b.retain();
      try {
        return Batch.of(b.schema(), columns, indices, handle);
      } catch (RuntimeException e) {
        handle.close();
        throw e;
      }
    }

    /**
     * Gathers {@code count} more rows ({@code rows} copies them into the batch carried over and as
     * many new ones as they fill); returns the batches this completes, and keeps the last one as
     * the carry when it is not full. After {@link #close} nothing is gathered.
     */
    public synchronized List<Batch> gather(int count, Gather rows) {
      if (closed || count == 0) {
        return List.of();
      }
      List<BatchBuilder> targets = new ArrayList<>(2);
      List<Batch> out = new ArrayList<>(2);
      try {
        long room = 0;
        if (carry != null) {
          targets.add(carry);
          room = carry.capacity() - carry.size();
          carry = null;
        }
        for (long next = done + room; room < count; ) {
          int size = sizeAt(next);
          if (size <= 0) {
            throw new IllegalStateException(source + " delivered more than the " + total + " rows asked for");
          }
          targets.add(BatchBuilder.create(schema, size, pool));
          room += size;
          next += size;
        }
        rows.into(targets);
        done += count;
        for (BatchBuilder t : targets) {
          if (t.isFull()) {
            out.add(t.build());
          } else {
            carry = t;
          }
        }
        return out;
      } catch (RuntimeException e) {
        targets.forEach(BatchBuilder::close);
        out.forEach(Batch::close);
        throw e;
      }
    }

    /** Rows of the next output batch (when none is being filled). */
    private int nextSize() {
      return sizeAt(done);
    }

    /** Rows of the output batch that starts at row {@code start} of the cut. */
    private int sizeAt(long start) {
      return (int) Math.min(start == 0 ? firstSize : batchSize, total - start);
    }

    /** Rows gathered so far, into finished batches and the one being filled. */
    synchronized long done() {
      return done;
    }

    /** After the last input: empty when every row arrived and went into a finished batch, else an error. */
    synchronized Flux<Batch> finish() {
      if (!closed && (carry != null || done != total)) {
        return Flux.error(new IllegalStateException("re-batching " + source + " received " + done + " of " + total
            + " rows"));
      }
      return Flux.empty();
    }

    /**
     * After the last input of an open-ended cut: the batch being filled as the last, shorter batch,
     * or nothing with {@code dropRemainder}.
     */
    synchronized Flux<Batch> rest(boolean dropRemainder) {
      BatchBuilder last = carry;
      carry = null;
      if (closed || last == null) {
        return Flux.empty();
      }
      if (dropRemainder) {
        last.close();
        return Flux.empty();
      }
      return Flux.just(last.build());
    }

    /** Releases the batch being filled; later inputs are closed on arrival. Idempotent. */
    @Override
    public synchronized void close() {
      closed = true;
      if (carry != null) {
        carry.close();
        carry = null;
      }
    }
  }
}
