package dev.sluice.operators;

import java.util.List;
import org.reactivestreams.Publisher;
import org.reactivestreams.tck.PublisherVerification;
import org.reactivestreams.tck.TestEnvironment;
import reactor.core.publisher.Flux;

/** The Reactive Streams TCK for the mixer behind sample, choose and concatenate ({@code FluxMix}), run through testng-engine. */
public class MixTckTest extends PublisherVerification<Long> {

  public MixTckTest() {
    super(new TestEnvironment(1000, 100));
  }

  /** {@code count} elements from {@code first} on, lazily (the TCK asks for up to Long.MAX_VALUE). */
  private static Flux<Long> counting(long first, long count) {
    return Flux.generate(() -> 0L, (i, sink) -> {
      if (i < count) {
        sink.next(first + i);
      } else {
        sink.complete();
      }
      return i + 1;
    });
  }

  @Override
  public Publisher<Long> createPublisher(long elements) {
    // without stopOnEmptyDataset every element of both sources comes: exactly `elements` in total
    long half = elements / 2;
    return Mixing.sample(List.of(counting(0, elements - half), counting(-half, half)), new double[] {0.6, 0.4}, 1);
  }

  @Override
  public Publisher<Long> createFailedPublisher() {
    return Mixing.sample(List.of(Flux.<Long>error(new IllegalStateException("failed on purpose"))), new double[] {1}, 1);
  }
}
