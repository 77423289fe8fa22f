package dev.sluice.operators.internal;

import dev.sluice.core.RandomAccessDataset;
import org.reactivestreams.Publisher;
import org.reactivestreams.tck.PublisherVerification;
import org.reactivestreams.tck.TestEnvironment;

/** The Reactive Streams TCK for the index path's element source ({@link FluxIndexElements}), run through testng-engine. */
public class IndexElementsTckTest extends PublisherVerification<Object> {
  public IndexElementsTckTest() {
    super(new TestEnvironment(1000, 100));
  }

  /** Positions {@code 0 .. n-1} of a source whose element at index {@code i} is {@code i}. */
  static RandomAccessDataset<Long> identity(long n) {
    return new RandomAccessDataset<>() {
      @Override
      public long size() {
        return n;
      }

      @Override
      public Long get(long index) {
        return index;
      }
    };
  }

  @Override
  public Publisher<Object> createPublisher(long elements) {
    return new FluxIndexElements(identity(elements), IndexSequence.identity(elements));
  }

  /**
   * None: the source fails only when it reads, so only once something was requested (the TCK's
   * failed publisher signals without demand); {@code SelfMeasuredStagesTest} covers a failing read.
   */
  @Override
  public Publisher<Object> createFailedPublisher() {
    return null;
  }
}
