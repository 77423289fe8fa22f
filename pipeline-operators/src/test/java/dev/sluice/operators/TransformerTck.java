package dev.sluice.operators;

import java.util.function.Function;
import org.reactivestreams.Publisher;
import org.reactivestreams.tck.PublisherVerification;
import org.reactivestreams.tck.TestEnvironment;
import reactor.core.publisher.Flux;

/**
 * The Reactive Streams TCK for a custom publisher that a transformer puts over a synchronous
 * source: {@code 0, 1, .., elements-1} from {@code Flux.generate}, or an error. No-signal waits of
 * 100 ms keep each class to a few seconds.
 */
abstract class TransformerTck extends PublisherVerification<Long> {

  TransformerTck() {
    super(new TestEnvironment(1000, 100));
  }

  /** The operator under test. */
  abstract Function<Flux<Long>, Flux<Long>> transformer();

  @Override
  public Publisher<Long> createPublisher(long elements) {
    return Flux.<Long, long[]>generate(() -> new long[1], (state, sink) -> {
      if (state[0] < elements) {
        sink.next(state[0]++);
      } else {
        sink.complete();
      }
      return state;
    }).transform(transformer());
  }

  @Override
  public Publisher<Long> createFailedPublisher() {
    return Flux.<Long>error(new IllegalStateException("failed on purpose")).transform(transformer());
  }
}
