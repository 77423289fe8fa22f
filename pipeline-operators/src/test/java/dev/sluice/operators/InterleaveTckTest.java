package dev.sluice.operators;

import org.reactivestreams.Publisher;
import org.reactivestreams.tck.PublisherVerification;
import org.reactivestreams.tck.TestEnvironment;
import reactor.core.publisher.Flux;

/** The Reactive Streams TCK for the deterministic interleave ({@code FluxInterleave}), run through testng-engine. */
public class InterleaveTckTest extends PublisherVerification<Long> {

  public InterleaveTckTest() {
    super(new TestEnvironment(1000, 100));
  }

  @Override
  public Publisher<Long> createPublisher(long elements) {
    // Inputs i = 0, 1, ... each open 3 elements (the last one fewer): exactly `elements` in total.
    Flux<Long> inputs = Flux.generate(() -> 0L, (i, sink) -> {
      if (i * 3 < elements) {
        sink.next(i);
      } else {
        sink.complete();
      }
      return i + 1;
    });
    return inputs.transform(Interleave.<Long, Long>of(
        i -> Flux.range(0, (int) Math.min(3, elements - i * 3)).map(j -> i * 3 + j), 2, 2));
  }

  @Override
  public Publisher<Long> createFailedPublisher() {
    return Flux.<Long>error(new IllegalStateException("failed on purpose"))
        .transform(Interleave.<Long, Long>of(Flux::just, 2, 2));
  }
}
