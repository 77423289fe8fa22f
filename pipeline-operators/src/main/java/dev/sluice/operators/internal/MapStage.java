package dev.sluice.operators.internal;

import dev.sluice.core.Options;
import dev.sluice.core.PipelineContext;
import java.util.function.BiFunction;
import reactor.core.publisher.Flux;

/**
 * {@code map(fn, numParallelCalls, deterministic)} on the element path.
 *
 * @param fn the function; it also receives the pass's context (for per-sample randomness)
 * @param numParallelCalls chunks mapped at once
 * @param deterministic keep the order; null: the pipeline's {@link Options#deterministic()}
 * @param contextual the function reads the context ({@code mapWithContext}): its results depend on
 *     (seed, epoch, rank)
 */
public record MapStage(BiFunction<Object, PipelineContext, Object> fn, int numParallelCalls, Boolean deterministic,
    boolean contextual) implements FluxStage {
  @Override
  @SuppressWarnings("unchecked")
  public Flux<?> apply(Flux<?> in, PipelineContext context, Options options) {
    boolean ordered = deterministic != null ? deterministic : options.deterministic();
    return ((Flux<Object>) in).transform(MapOperator.<Object, Object>of(t -> fn.apply(t, context), numParallelCalls, ordered,
        options));
  }

  private boolean ordered(Options options) {
    return deterministic != null ? deterministic : options.deterministic();
  }

  @Override
  public long inputsPerOutput(Options options) {
    return ordered(options) ? 1 : 0;
  }

  @Override
  public String unresumable(Options options) {
    return ordered(options) ? null : describe() + " emits in the order its workers finish, which no checkpoint can "
        + "reproduce; use deterministic = true to resume exactly";
  }

  @Override
  public int workers() {
    return Stage.workersOf(numParallelCalls);
  }

  @Override
  public String shapeKey() {
    return "map";
  }

  @Override
  public String describe() {
    return "map(" + numParallelCalls + (deterministic == null ? "" : ", deterministic=" + deterministic) + ")";
  }
}
