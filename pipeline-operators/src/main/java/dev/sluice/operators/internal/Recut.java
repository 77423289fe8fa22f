package dev.sluice.operators.internal;

import dev.sluice.core.Batch;
import dev.sluice.core.BatchBuilder;
import dev.sluice.core.BufferPool;
import dev.sluice.core.Schema;
import java.util.ArrayList;
import java.util.List;
import reactor.core.publisher.Flux;

/**
 * Re-cuts a stream of batches (any sizes, in order) into batches of {@code batchSize} rows,
 * {@code total} rows in all (so the last may be shorter), by copying column ranges into pooled
 * batches ({@link BatchBuilder#appendRange}); a decoded batch that is exactly the next output batch
 * is handed on as it is. One instance per subscription.
 *
 * <p>Ownership: {@link #accept} takes the decoded batch (it closes it, or hands it on); the batches
 * returned belong to the caller. {@link #close} releases a partly filled batch. Every method is
 * synchronized, so a cancel on another thread never releases memory a copy is writing.
 */
final class Recut implements AutoCloseable {
  private final Schema schema;
  private final BufferPool pool;
  private final int batchSize;
  private final long total;
  private long done; // rows taken into finished batches and the batch being filled
  private BatchBuilder builder;
  private boolean closed;

  Recut(Schema schema, BufferPool pool, int batchSize, long total) {
    this.schema = schema;
    this.pool = pool;
    this.batchSize = batchSize;
    this.total = total;
  }

  /** The output batches that {@code decoded} completes, in order (often none or one). */
  synchronized List<Batch> accept(Batch decoded) {
    if (closed) {
      decoded.close();
      return List.of();
    }
    List<Batch> out = new ArrayList<>(1);
    try {
      int n = decoded.size();
      if (builder == null && n > 0 && n == want()) {
        done += n;
        out.add(decoded); // exactly the next batch: no copy
        return out;
      }
      int[] position = {0};
      Batch b;
      while ((b = fill(decoded, position, n)) != null) {
        out.add(b);
      }
      decoded.close();
      return out;
    } catch (RuntimeException e) {
      decoded.close();
      out.forEach(Batch::close);
      throw e;
    }
  }

  /**
   * Copies rows of {@code source} from {@code position[0]} on (advancing it) into the batch being
   * filled, and returns that batch once it is full; null when the rows before {@code end} are used
   * up first (or the re-cut was closed). The source is neither changed nor closed.
   */
  private Batch fill(Batch source, int[] position, int end) {
    while (!closed && position[0] < end) {
      if (builder == null) {
        int want = want();
        if (want <= 0) {
          throw new IllegalStateException("the source delivered more than the " + total + " rows asked for");
        }
        builder = BatchBuilder.create(schema, want, pool);
      }
      int t = Math.min(end - position[0], builder.capacity() - builder.size());
      builder.appendRange(source, position[0], t);
      position[0] += t;
      done += t;
      if (builder.isFull()) {
        Batch b = builder.build();
        builder = null;
        return b;
      }
    }
    return null;
  }

  /** Rows of the next output batch (when none is being filled). */
  private int want() {
    return (int) Math.min(batchSize, total - done);
  }

  /** After the last input: every row arrived and went into a finished batch. */
  synchronized Flux<Batch> finish() {
    if (!closed && (builder != null || done != total)) {
      return Flux.error(new IllegalStateException("the re-cut received " + done + " of " + total + " rows"));
    }
    return Flux.empty();
  }

  /** Releases a partly filled batch; later decoded batches are closed on arrival. Idempotent. */
  @Override
  public synchronized void close() {
    closed = true;
    if (builder != null) {
      builder.close();
      builder = null;
    }
  }
}
