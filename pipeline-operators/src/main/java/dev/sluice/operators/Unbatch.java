package dev.sluice.operators;

import dev.sluice.core.Batch;
import dev.sluice.core.Example;
import dev.sluice.operators.internal.UnbatchOperator;
import java.util.function.Function;
import reactor.core.publisher.Flux;

/**
 * tf.data's {@code unbatch} as a plain Reactor transformer: each {@link Batch} becomes its rows, in
 * order, as {@link Example}s whose tensors are copies ({@link Batch#copyRow}), so the examples own
 * nothing; the batch is closed as soon as its last row is copied (or on cancel and error).
 * Padded columns give their padded rows, as in tf.data.
 *
 * <p><b>Reactive Streams semantics.</b> Requests one batch at a time; emits its rows on demand;
 * completes after the last row of the last batch; passes errors on.
 *
 * <p><b>Discard support.</b> The batch being split and a batch queued ahead are closed on cancel
 * and error (also those discarded upstream); rows not emitted are simply dropped.
 */
public final class Unbatch {
  private Unbatch() {}

  /** The transformer: {@code batches.transform(Unbatch.of())}. */
  public static Function<Flux<Batch>, Flux<Example>> of() {
    return UnbatchOperator.of();
  }
}
