package dev.sluice.operators;

import java.util.function.Function;
import reactor.core.publisher.Flux;

/** The Reactive Streams TCK for {@link Prefetch#of(int)} ({@code FluxPrefetch}), run through testng-engine. */
public class PrefetchTckTest extends TransformerTck {
  @Override
  Function<Flux<Long>, Flux<Long>> transformer() {
    return Prefetch.of(4);
  }
}
