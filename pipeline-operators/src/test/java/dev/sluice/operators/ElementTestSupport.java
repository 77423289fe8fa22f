package dev.sluice.operators;

import dev.sluice.core.Batch;
import dev.sluice.core.spi.BatchBuilder;
import dev.sluice.core.Datasets;
import dev.sluice.core.MemoryManager;
import dev.sluice.core.RandomAccessDataset;
import dev.sluice.core.Example;
import dev.sluice.core.HasSchema;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import reactor.core.publisher.Flux;

/** Small helpers shared by the element-path tests. */
final class ElementTestSupport {
  private ElementTestSupport() {}

  /** A pooled one-row batch of {@code range} row {@code i} (must be closed). */
  static Batch batchOf(long i) {
    RandomAccessDataset<Example> range = Datasets.range(i + 1);
    try (BatchBuilder b = BatchBuilder.create(((HasSchema) range).schema(), 1, MemoryManager.shared().pool("test-elements"))) {
      b.append(range.get(i));
      return b.build();
    }
  }

  /** {@code n} pooled batches, created lazily on request. */
  static Flux<Batch> batches(int n) {
    return Flux.range(0, n).map(ElementTestSupport::batchOf);
  }

  static List<Long> values(List<Example> examples) {
    List<Long> out = new ArrayList<>();
    for (Example e : examples) {
      out.add(e.tensor("value").getLong(0));
    }
    return out;
  }

  /** Counts what an upstream was asked for and what it delivered. */
  static final class Counting<T> {
    final AtomicLong requested = new AtomicLong();
    final AtomicLong delivered = new AtomicLong();

    Flux<T> wrap(Flux<T> source) {
      return source.doOnNext(x -> delivered.incrementAndGet())
          .doOnRequest(n -> requested.accumulateAndGet(n, (a, b) -> a + b < 0 ? Long.MAX_VALUE : a + b));
    }
  }
}
