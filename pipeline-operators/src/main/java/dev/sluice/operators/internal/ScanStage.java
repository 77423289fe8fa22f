package dev.sluice.operators.internal;

import dev.sluice.core.Options;
import dev.sluice.core.PipelineContext;
import java.util.function.Function;
import reactor.core.publisher.Flux;

/**
 * {@code scan(initial, fn)} on the element path: the transformer {@code scan} builds per pass. A
 * resume re-derives the state by replaying the pass's input from the start of the epoch (the state
 * is not saved in the checkpoint).
 *
 * @param transformer the scan as a transformer; each subscription starts from the initial state
 */
public record ScanStage(Function<Flux<Object>, Flux<Object>> transformer) implements FluxStage {
  @Override
  @SuppressWarnings("unchecked")
  public Flux<?> apply(Flux<?> in, PipelineContext context, Options options) {
    return ((Flux<Object>) in).transform(transformer);
  }

  @Override
  public long outputsFor(long inputs, Options options) {
    return inputs;
  }

  @Override
  public String describe() {
    return "scan";
  }
}
