package dev.sluice.operators.internal;

import dev.sluice.core.Batch;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * The batches of one subscription that were gathered but not yet handed downstream. Parallel
 * gathers finish on worker threads in any order, and one may finish after the pass was cancelled
 * or failed; whatever is still here when the pass terminates is closed, and a batch that arrives
 * after that is closed at once. Thread-safe.
 *
 * <p>Needed because Reactor's {@code flatMapSequential} drops the values queued in its inner
 * subscribers on cancel and on an error without handing them to the discard hook
 * (reactor/reactor-core#4379), so a {@code doOnDiscard} alone would leak those batches.
 */
final class InFlight {
  private final Map<Batch, Boolean> batches = new IdentityHashMap<>();
  private boolean terminated;

  /** Registers a gathered batch; returns it, or closes it when the pass is already over. */
  Batch add(Batch batch) {
    synchronized (this) {
      if (!terminated) {
        batches.put(batch, Boolean.TRUE);
        return batch;
      }
    }
    batch.close();
    return batch;
  }

  /** The batch is going downstream: no longer ours. */
  synchronized void handedOver(Batch batch) {
    batches.remove(batch);
  }

  /** The pass terminated: closes every batch not handed over. */
  void terminate() {
    List<Batch> left;
    synchronized (this) {
      terminated = true;
      left = new ArrayList<>(batches.keySet());
      batches.clear();
    }
    left.forEach(Batch::close);
  }
}
