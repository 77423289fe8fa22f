package dev.sluice.operators.internal;

import dev.sluice.core.Dataset;
import dev.sluice.core.Options;
import dev.sluice.core.PipelineContext;
import java.util.function.Function;
import reactor.core.publisher.Flux;

/**
 * {@code interleave(fn, cycleLength, blockLength, numParallelCalls, deterministic)}: each element
 * becomes a {@link Dataset} whose pass (same context) is interleaved.
 */
public record InterleaveStage(Function<Object, Dataset<?>> fn, int cycleLength, int blockLength, int numParallelCalls,
    boolean deterministic) implements FluxStage {
  @Override
  @SuppressWarnings("unchecked")
  public Flux<?> apply(Flux<?> in, PipelineContext context, Options options) {
    return ((Flux<Object>) in).transform(InterleaveOperator.<Object, Object>of(
        t -> (Flux<Object>) fn.apply(t).flux(context), cycleLength, blockLength, numParallelCalls, deterministic));
  }

  @Override
  public String unresumable(Options options) {
    return deterministic ? null : describe() + " emits in the order its datasets deliver, which no checkpoint can "
        + "reproduce; use deterministic = true to resume exactly";
  }

  @Override
  public int workers() {
    return Stage.workersOf(numParallelCalls);
  }

  @Override
  public String shapeKey() {
    return "interleave(" + cycleLength + ", " + blockLength + ")";
  }

  @Override
  public String describe() {
    return "interleave(" + cycleLength + ", " + blockLength + ", " + numParallelCalls + ", " + deterministic + ")";
  }
}
