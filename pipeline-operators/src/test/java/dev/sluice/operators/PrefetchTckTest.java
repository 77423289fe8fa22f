package dev.sluice.operators;

import org.reactivestreams.Publisher;
import org.reactivestreams.tck.PublisherVerification;
import org.reactivestreams.tck.TestEnvironment;
import reactor.core.publisher.Flux;

/** The Reactive Streams TCK for {@link Prefetch#of(int)} ({@code FluxPrefetch}), run through testng-engine. */
public class PrefetchTckTest extends PublisherVerification<Long> {

  public PrefetchTckTest() {
    super(new TestEnvironment(1000, 100));
  }

  @Override
  public Publisher<Long> createPublisher(long elements) {
    return Flux.<Long, long[]>generate(() -> new long[1], (state, sink) -> {
      if (state[0] < elements) {
        sink.next(state[0]++);
      } else {
        sink.complete();
      }
      return state;
    }).transform(Prefetch.<Long>of(4));
  }

  @Override
  public Publisher<Long> createFailedPublisher() {
    return Flux.<Long>error(new IllegalStateException("failed on purpose")).transform(Prefetch.<Long>of(4));
  }
}
