package dev.sluice.operators.internal;

import dev.sluice.core.Batch;
import dev.sluice.core.BatchBuilder;
import dev.sluice.core.BufferPool;
import dev.sluice.core.Schema;
import java.util.ArrayList;
import java.util.List;

/**
 * Re-cuts a stream of decoded batches (any sizes, in order) into batches of {@code batchSize} rows,
 * {@code total} rows in all (so the last may be shorter), by copying column ranges into pooled
 * batches ({@link BatchBuilder#appendRange}); a decoded batch that is exactly the next output batch
 * is handed on as it is. One instance per subscription.
 *
 * <p>Ownership: {@link #accept} takes the decoded batch (it closes it, or hands it on); the batches
 * it returns belong to the caller. {@link #close} releases a partly filled batch. Both are
 * synchronized, so a cancel on another thread never releases memory a copy is reading or writing.
 */
final class Recut implements AutoCloseable {
  private final Schema schema;
  private final BufferPool pool;
  private final int batchSize;
  private final long total;
  private long done; // rows taken into finished batches and the builder
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
      int pos = 0;
      while (pos < n) {
        int want = (int) Math.min(batchSize, total - (done - (builder == null ? 0 : builder.size())));
        if (want <= 0) {
          throw new IllegalStateException("the source delivered more than the " + total + " rows asked for");
        }
        if (builder == null && pos == 0 && n == want) {
          done += n;
          out.add(decoded); // exactly the next batch: no copy
          return out;
        }
        if (builder == null) {
          builder = BatchBuilder.create(schema, want, pool);
        }
        int t = Math.min(n - pos, builder.capacity() - builder.size());
        builder.appendRange(decoded, pos, t);
        pos += t;
        done += t;
        if (builder.isFull()) {
          out.add(builder.build());
          builder = null;
        }
      }
      decoded.close();
      return out;
    } catch (RuntimeException e) {
      decoded.close();
      out.forEach(Batch::close);
      throw e;
    }
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
