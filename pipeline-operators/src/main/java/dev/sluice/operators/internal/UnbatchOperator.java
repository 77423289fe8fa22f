package dev.sluice.operators.internal;

import dev.sluice.core.Batch;
import dev.sluice.core.Example;
import java.util.function.Function;
import reactor.core.publisher.Flux;

/**
 * {@code unbatch()} on the element path: each batch becomes its rows as examples (copies), and is
 * closed when its rows are emitted. The public {@code Unbatch} and the planner's unbatch stage both
 * build it.
 */
public final class UnbatchOperator {
  private UnbatchOperator() {}

  /**
   * The unbatching transformer.
   *
   * @return the transformer
   */
  public static Function<Flux<Batch>, Flux<Example>> of() {
    return flux -> flux
        .concatMap(batch -> Flux.using(() -> batch, b -> Flux.range(0, b.size()).map(b::copyRow), Batch::close), 1)
        .doOnDiscard(Batch.class, Batch::close);
  }
}
