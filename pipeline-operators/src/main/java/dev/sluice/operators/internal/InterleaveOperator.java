package dev.sluice.operators.internal;

import dev.sluice.core.internal.TrackedScheduler;
import java.util.Objects;
import java.util.function.Function;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * {@code interleave} on the element path: {@link FluxInterleave} when deterministic, else a
 * {@code flatMap}. The public {@code Interleave} and the planner's interleave stage both build it.
 */
public final class InterleaveOperator {
  private InterleaveOperator() {}

  /**
   * The interleaving transformer.
   *
   * @param fn turns an upstream element into the publisher of its elements
   * @param cycleLength publishers open at once, &gt; 0
   * @param blockLength consecutive elements taken from each, &gt; 0
   * @param numParallelCalls 1: open publishers run on the subscriber's thread; more: on
   *     {@code boundedElastic} workers, reading ahead concurrently; a cancel never interrupts a
   *     worker's task ({@code FluxSubscribeOnUninterrupted})
   * @param deterministic keep the sequential order
   * @return the transformer
   */
  public static <T, R> Function<Flux<T>, Flux<R>> of(Function<? super T, ? extends Publisher<? extends R>> fn,
      int cycleLength, int blockLength, int numParallelCalls, boolean deterministic) {
    Objects.requireNonNull(fn, "fn");
    if (cycleLength <= 0) {
      throw new IllegalArgumentException("cycleLength > 0 required but it was " + cycleLength);
    }
    if (blockLength <= 0) {
      throw new IllegalArgumentException("blockLength > 0 required but it was " + blockLength);
    }
    if (numParallelCalls <= 0) {
      throw new IllegalArgumentException("numParallelCalls > 0 required but it was " + numParallelCalls);
    }
    Scheduler scheduler = numParallelCalls > 1 ? TrackedScheduler.of(Schedulers.boundedElastic()) : null;
    int prefetch = numParallelCalls > 1 ? Math.max(blockLength, 32) : blockLength;
    if (deterministic) {
      return f -> new FluxInterleave<>(f, fn, cycleLength, blockLength, prefetch, scheduler);
    }
    return f -> f.flatMap(t -> {
      Flux<R> inner = Flux.from(fn.apply(t));
      return scheduler == null ? inner : new FluxSubscribeOnUninterrupted<>(inner, scheduler);
    }, cycleLength, prefetch);
  }
}
