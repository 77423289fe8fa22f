package dev.sluice.operators.internal;

import dev.sluice.core.Options;
import dev.sluice.core.PipelineContext;
import java.util.function.BiFunction;
import reactor.core.publisher.Flux;

/**
 * {@code enumerate(start)} on the element path: one output per input, pairing it with its position.
 * A resume starts the input at the state's position and the count there, so nothing is read again.
 *
 * @param start the position of the first element of a pass
 * @param pair makes the output from (position, element)
 */
public record EnumerateStage(long start, BiFunction<Long, Object, Object> pair) implements FluxStage {
  @Override
  public Flux<?> apply(Flux<?> in, PipelineContext context, Options options) {
    return applyFrom(in, 0, context, options);
  }

  @Override
  public Flux<?> applyFrom(Flux<?> in, long position, PipelineContext context, Options options) {
    long first = start + position;
    return in.index((i, t) -> pair.apply(first + i, t));
  }

  @Override
  public boolean countsPositions() {
    return true;
  }

  @Override
  public long inputsPerOutput(Options options) {
    return 1;
  }

  @Override
  public String describe() {
    return "enumerate(" + start + ")";
  }
}
