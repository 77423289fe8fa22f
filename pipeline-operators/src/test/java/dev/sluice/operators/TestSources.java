package dev.sluice.operators;

import dev.sluice.core.Dataset;
import dev.sluice.core.DatasetFormatException;
import dev.sluice.core.Datasets;
import dev.sluice.core.Example;
import dev.sluice.core.HasSchema;
import dev.sluice.core.MemoryManager;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.RandomAccessDataset;
import dev.sluice.core.Schema;
import dev.sluice.core.spi.BatchBuilder;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import org.awaitility.Awaitility;
import reactor.core.publisher.Flux;

/** Sources for operator tests. */
final class TestSources {
  private TestSources() {}

  /** {@code range(n)} that fails with a {@link DatasetFormatException} when asked for {@code bad}. */
  static RandomAccessDataset<Example> failingAt(long n, long bad) {
    RandomAccessDataset<Example> base = Datasets.range(n);
    return new Wrapper(base) {
      @Override
      void check(long index) {
        if (index == bad) {
          throw new DatasetFormatException("test.npy", "row " + bad, "a broken row");
        }
      }
    };
  }

  /** {@code base}, counting the rows read through get and gather. */
  static final class Counting extends Wrapper {
    final AtomicLong rows = new AtomicLong();

    Counting(RandomAccessDataset<Example> base) {
      super(base);
    }

    @Override
    void check(long index) {
      rows.incrementAndGet();
    }
  }

  /** {@code base} as a dataset that is not random-access (the element path). */
  static <T> Dataset<T> streaming(Dataset<T> base) {
    return new Dataset<>() {
      @Override
      public Flux<T> flux(PipelineContext context) {
        return base.flux(context);
      }

      @Override
      public String toString() {
        return "streaming(" + base + ")";
      }
    };
  }

  /** Busy for {@code nanos} on the calling thread: a fixed amount of work, no sleep. */
  static void spin(long nanos) {
    long start = System.nanoTime();
    while (System.nanoTime() - start < nanos) {
      Thread.onSpinWait();
    }
  }

  /** Waits until every pooled byte is back (asynchronous cancel releases on worker threads). */
  static void awaitNoOutstanding() {
    Awaitility.await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(5))
        .until(() -> MemoryManager.shared().outstandingBytes() == 0);
  }

  /** Delegates to a base dataset, calling {@link #check} for every row read. */
  abstract static class Wrapper implements RandomAccessDataset<Example>, HasSchema {
    final RandomAccessDataset<Example> base;

    Wrapper(RandomAccessDataset<Example> base) {
      this.base = base;
    }

    abstract void check(long index);

    @Override
    public Schema schema() {
      return ((HasSchema) base).schema();
    }

    @Override
    public long size() {
      return base.size();
    }

    @Override
    public Example get(long index) {
      check(index);
      return base.get(index);
    }

    @Override
    public void gather(long[] indices, int from, int count, BatchBuilder target) {
      for (int i = from; i < from + count; i++) {
        check(indices[i]);
      }
      base.gather(indices, from, count, target);
    }

    @Override
    public String toString() {
      return "wrapped(" + base + ")";
    }
  }
}
