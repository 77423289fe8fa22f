package dev.sluice.operators.internal;

import dev.sluice.core.Options;
import dev.sluice.core.PipelineContext;
import reactor.core.publisher.Flux;

/**
 * {@code window(size, shift, stride, dropRemainder)} on the element path ({@link WindowOperator}).
 * Window {@code k} starts at input position {@code k·shift}, so a resume after {@code k} windows
 * starts the input there; sliding windows of a one-element shift are replayed instead (their input
 * would otherwise look one-to-one to the planner).
 */
public record WindowStage(int size, int shift, int stride, boolean dropRemainder) implements FluxStage {
  @Override
  @SuppressWarnings("unchecked")
  public Flux<?> apply(Flux<?> in, PipelineContext context, Options options) {
    return ((Flux<Object>) in).transform(WindowOperator.of(size, shift, stride, dropRemainder));
  }

  @Override
  public long inputsPerOutput(Options options) {
    return shift > 1 || size == 1 ? shift : 0;
  }

  @Override
  public long outputsFor(long inputs, Options options) {
    if (inputs < 0) {
      return -1;
    }
    long span = (long) (size - 1) * stride + 1;
    if (dropRemainder) {
      return inputs < span ? 0 : (inputs - span) / shift + 1;
    }
    return (inputs + shift - 1) / shift;
  }

  @Override
  public String describe() {
    return "window(" + size + ", " + shift + ", " + stride + ", " + dropRemainder + ")";
  }
}
