package dev.sluice.operators;

import org.reactivestreams.Publisher;
import org.reactivestreams.tck.PublisherVerification;
import org.reactivestreams.tck.TestEnvironment;
import reactor.core.publisher.Flux;

/** The Reactive Streams TCK for the buffer shuffle ({@code FluxBufferShuffle}), run through testng-engine. */
public class BufferShuffleTckTest extends PublisherVerification<Long> {

  public BufferShuffleTckTest() {
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
    }).transform(Shuffle.<Long>buffer(16, 42L));
  }

  @Override
  public Publisher<Long> createFailedPublisher() {
    return Flux.<Long>error(new IllegalStateException("failed on purpose")).transform(Shuffle.<Long>buffer(16, 42L));
  }
}
