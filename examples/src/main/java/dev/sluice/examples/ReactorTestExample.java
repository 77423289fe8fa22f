package dev.sluice.examples;

import dev.sluice.core.Batch;
import dev.sluice.core.Datasets;
import dev.sluice.core.Example;
import dev.sluice.core.MemoryManager;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.RandomAccessDataset;
import dev.sluice.operators.Pipeline;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import java.util.stream.LongStream;
import reactor.core.publisher.Flux;
import reactor.test.StepVerifier;

/**
 * How to test a pipeline of your own with Reactor Test's {@link StepVerifier}: each check closes
 * every batch it is handed (a batch owns pooled off-heap memory), and after each one the memory
 * manager proves that nothing is left outstanding, also after a cancel and after an error in the
 * middle of a batch. After a cancel of a pipeline with work on other threads ({@code prefetch}, a
 * parallel {@code map}), {@link MemoryManager#awaitNoOutstanding(Duration)} waits, bounded, for the
 * batch a worker was building when the cancel came. The same code belongs in a JUnit test; here it runs from {@code main} and
 * prints one line per check.
 *
 * <pre>
 * java -cp examples/target/sluice.jar dev.sluice.examples.ReactorTestExample
 * </pre>
 */
public final class ReactorTestExample {
  private ReactorTestExample() {}

  /** The pipeline under test: a per-epoch global shuffle, then batches of 4. */
  static Pipeline<Batch> pipeline(RandomAccessDataset<Example> data) {
    return Pipeline.from(data).shuffle().batch(4);
  }

  /**
   * Runs the checks; throws {@link AssertionError} at the first one that fails.
   *
   * @param args none
   */
  public static void main(String[] args) {
    RandomAccessDataset<Example> data = Datasets.synthetic(10, 3, 1);
    PipelineContext ctx = PipelineContext.defaults().withSeed(42);
    MemoryManager memory = MemoryManager.shared();

    // 1. One epoch: batches of 4, 4 and 2 rows, every row exactly once; each batch closed when checked.
    TreeSet<Long> seen = new TreeSet<>();
    StepVerifier.create(pipeline(data).flux(ctx))
        .consumeNextWith(b -> rows(b, 4, seen))
        .consumeNextWith(b -> rows(b, 4, seen))
        .consumeNextWith(b -> rows(b, 2, seen))
        .verifyComplete();
    check(seen.equals(new TreeSet<>(LongStream.range(0, 10).boxed().toList())), "every row once: " + seen);
    memory.checkNoOutstanding();
    System.out.println("ok: one epoch holds every row once, in batches of 4, 4, 2");

    // 2. Reproducible: the same (seed, epoch) gives the same order, the next epoch another one.
    List<Long> epoch0 = indices(pipeline(data).flux(ctx));
    check(epoch0.equals(indices(pipeline(data).flux(ctx))), "the same order for the same seed and epoch");
    check(!epoch0.equals(indices(pipeline(data).flux(ctx.nextEpoch()))), "a new order next epoch");
    memory.checkNoOutstanding();
    System.out.println("ok: the order depends only on (seed, epoch): " + epoch0);

    // 3. Backpressure and cancel: one batch per request; cancelling releases what the pass holds.
    StepVerifier.create(pipeline(data).flux(ctx), 0)
        .expectSubscription()
        .thenRequest(1)
        .consumeNextWith(b -> rows(b, 4, new TreeSet<>()))
        .thenRequest(1)
        .consumeNextWith(b -> rows(b, 4, new TreeSet<>()))
        .thenCancel()
        .verify();
    memory.checkNoOutstanding();
    System.out.println("ok: one batch per request, nothing outstanding after a cancel");

    // 4. An error in the middle of a batch: the rows before it arrive, the half-built batch is released.
    Pipeline<Batch> failing = Pipeline.from(data)
        .map(e -> {
          if (e.index() == 5) {
            throw new IllegalStateException("bad row 5");
          }
          return e;
        })
        .batch(4);
    StepVerifier.create(failing.flux(ctx))
        .consumeNextWith(b -> rows(b, 4, new TreeSet<>()))
        .expectErrorMessage("bad row 5")
        .verify();
    memory.checkNoOutstanding();
    System.out.println("ok: an error mid-batch is signalled after the complete batches, nothing outstanding");

    // 5. Cancel with work on other threads (a parallel map, batches prefetched ahead): verify()
    //    returns once the cancel is signalled, while a worker may still be finishing the batch it
    //    builds; it releases that batch when its step ends, so wait for the memory, bounded.
    Pipeline<Batch> ahead = Pipeline.from(Datasets.synthetic(1_000, 16, 1))
        .shuffle()
        .map(e -> e, 4)
        .batch(8)
        .prefetch(4);
    StepVerifier.create(ahead.flux(ctx), 0)
        .thenRequest(1)
        .consumeNextWith(b -> rows(b, 8, new TreeSet<>()))
        .thenCancel()
        .verify(Duration.ofSeconds(30));
    memory.awaitNoOutstanding(Duration.ofSeconds(10));
    System.out.println("ok: after a cancel with prefetch and a parallel map, every pooled byte came back");
    System.out.println("off-heap bytes outstanding: " + memory.outstandingBytes());
  }

  /** Checks a batch's size, records its indices, and closes it. */
  private static void rows(Batch b, int expected, TreeSet<Long> seen) {
    try (b) {
      check(b.size() == expected, "a batch of " + expected + " rows, not " + b.size());
      for (int i = 0; i < b.size(); i++) {
        check(seen.add(b.index(i)), "index " + b.index(i) + " twice");
      }
    }
  }

  /** The indices of a pass, batches closed as they are read. */
  private static List<Long> indices(Flux<Batch> pass) {
    List<Long> out = new ArrayList<>();
    pass.doOnNext(b -> {
      try (b) {
        for (int i = 0; i < b.size(); i++) {
          out.add(b.index(i));
        }
      }
    }).blockLast();
    return out;
  }

  private static void check(boolean condition, String what) {
    if (!condition) {
      throw new AssertionError(what);
    }
  }
}
