package dev.sluice.operators;

import java.util.function.Function;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Schedulers;

/**
 * The Reactive Streams TCK for {@link ParallelMap#map} with several parallel calls
 * ({@code FluxChunkedMap}): chunks of 3 on the parallel scheduler, so the TCK's small element counts
 * cross chunk boundaries, fill partial chunks and map on workers.
 */
public class ParallelMapTckTest extends TransformerTck {
  @Override
  Function<Flux<Long>, Flux<Long>> transformer() {
    return ParallelMap.map((Long x) -> x, 2, true, 3, Schedulers.parallel());
  }
}
