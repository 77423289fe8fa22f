package dev.sluice.operators;

import java.util.function.Function;
import reactor.core.publisher.Flux;

/**
 * The Reactive Streams TCK for the default {@link ParallelMap#map(Function, int, boolean)}: adaptive
 * chunks (mapped inline when cheap) and, here, completion order ({@code deterministic = false}).
 */
public class AdaptiveParallelMapTckTest extends TransformerTck {
  @Override
  Function<Flux<Long>, Flux<Long>> transformer() {
    return ParallelMap.map((Long x) -> x, 2, false);
  }
}
