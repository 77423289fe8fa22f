package dev.sluice.operators;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.core.Batch;
import dev.sluice.core.DatasetFormatException;
import dev.sluice.core.Datasets;
import dev.sluice.core.Example;
import dev.sluice.core.MemoryManager;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.PipelineIterator;
import dev.sluice.core.Tensor;
import dev.sluice.core.testing.CloseRounds;
import dev.sluice.core.testing.NoLeaks;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import reactor.test.StepVerifier;

/**
 * The plain Java ways of consuming a pipeline never leak: {@link Pipeline#iterate} releases what a
 * stopped pass holds at once, Reactor's own blocking iterables once the dropped batches are
 * collected (the leak detector).
 */
@ExtendWith(NoLeaks.class)
class IterateTest {
  /** How long a close waits for a pass before it gives up (PipelineIterator's bound). */
  private static final long CLOSE_WAIT_SECONDS = 10;
  private static final PipelineContext CTX = PipelineContext.defaults().withSeed(11);

  /** Many batches, a parallel map of batches (chunks on workers) and a prefetch on another thread. */
  private static Pipeline<Batch> busy() {
    return Pipeline.from(Datasets.synthetic(100_000, 16, 1)).shuffle().batch(64).map(b -> b, 4, true).prefetch(4);
  }

  /** Collects what Reactor's queues dropped without a discard hook: the leak detector returns it. */
  private static void awaitCollected() {
    Awaitility.await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(20)).until(() -> {
      System.gc();
      return MemoryManager.shared().outstandingBytes() == 0;
    });
  }

  // The snippets run in methods of their own: a dead local of the test method would keep Reactor's
  // iterator, and the batches in its queue, reachable from the test's stack frame.

  private static void toStreamSnippet() {
    try (Stream<Batch> s = Pipeline.from(Datasets.synthetic(10_000, 16, 1)).shuffle().batch(64).flux().toStream()) {
      s.limit(5).forEach(Batch::close);
    }
  }

  private static void toIterableBreakSnippet() {
    int seen = 0;
    for (Batch b : Pipeline.from(Datasets.synthetic(10_000, 16, 1)).shuffle().batch(64).flux().toIterable()) {
      b.close();
      if (++seen == 5) {
        break;
      }
    }
  }

  private static void doOnDiscardSnippet() {
    try (Stream<Batch> s = Pipeline.from(Datasets.synthetic(10_000, 16, 1)).shuffle().batch(64).flux()
        .doOnDiscard(Batch.class, Batch::close).toStream()) {
      s.limit(5).forEach(Batch::close);
    }
  }

  @Test
  void toStreamWithLimitLeavesNothingOnceCollected() {
    toStreamSnippet();
    awaitCollected();
    MemoryManager.shared().checkNoOutstanding();
  }

  @Test
  void toIterableWithBreakLeavesNothingOnceCollected() {
    toIterableBreakSnippet();
    awaitCollected();
    MemoryManager.shared().checkNoOutstanding();
  }

  @Test
  void toStreamAfterDoOnDiscardLeavesNothingOnceCollected() {
    doOnDiscardSnippet();
    awaitCollected();
    MemoryManager.shared().checkNoOutstanding();
  }

  @Test
  void aTensorReadAfterItsBatchClosedNamesTheBatch() {
    try (PipelineIterator<Batch> it = Pipeline.from(Datasets.synthetic(1_000, 16, 1)).shuffle().batch(64).iterate()) {
      Batch b = it.next();
      Tensor v = b.column("x").values();
      float first = v.getFloat(0);
      assertThat(first).isBetween(0f, 1f);
      b.close();
      try (Batch next = it.next()) { // reuses the pooled memory of the first
        assertThat(next.column("x").values().toFloatArray()).hasSize(64 * 16);
        assertThatThrownBy(() -> v.getFloat(0)).isInstanceOf(IllegalStateException.class).hasMessageContaining(b.name());
        assertThatThrownBy(v::toFloatArray).isInstanceOf(IllegalStateException.class).hasMessageContaining(b.name());
      }
    }
  }

  @Test
  void aStepVerifierThatTakesAFewBatchesAndCancelsLeavesNothing() {
    StepVerifier.create(busy().flux(CTX), 0)
        .thenRequest(3)
        .consumeNextWith(Batch::close)
        .consumeNextWith(Batch::close)
        .consumeNextWith(Batch::close)
        .thenCancel()
        .verify(Duration.ofSeconds(30));
    TestSources.awaitNoOutstanding();
  }

  @Test
  void iterateClosedAfterFiveOfManyBatchesLeavesNothingAtOnce() {
    List<Long> firstIndices = new ArrayList<>();
    try (PipelineIterator<Batch> batches = busy().iterate(CTX)) {
      for (Batch b : batches) {
        try (b) {
          firstIndices.add(b.index(0));
          assertThat(b.column("x").values().shape().dim(0)).isEqualTo(64);
        }
        if (firstIndices.size() == 5) {
          break;
        }
      }
      assertThat(MemoryManager.shared().outstandingBytes()).isPositive(); // the stages hold batches ahead
    }
    MemoryManager.shared().checkNoOutstanding(); // at once: no wait, no GC
    assertThat(firstIndices).hasSize(5);
  }

  @Test
  void iterateDeliversThePassInOrderAndItsStreamClosesIt() {
    Pipeline<Batch> p = Pipeline.from(Datasets.range(1_000)).shuffle().batch(32, false, 2).prefetch(3);
    List<Long> expected = new ArrayList<>();
    p.flux(CTX).doOnNext(b -> {
      try (b) {
        for (long v : b.column("value").values().toLongArray()) {
          expected.add(v);
        }
      }
    }).blockLast();
    List<Long> got = new ArrayList<>();
    try (PipelineIterator<Batch> it = p.iterate(CTX)) {
      while (it.hasNext()) {
        try (Batch b = it.next()) {
          for (long v : b.column("value").values().toLongArray()) {
            got.add(v);
          }
        }
      }
      assertThat(it.hasNext()).isFalse();
      assertThatThrownBy(it::next).isInstanceOf(NoSuchElementException.class);
    }
    assertThat(got).isEqualTo(expected);
    try (Stream<Batch> s = p.iterate(CTX).stream()) {
      assertThat(s.limit(3).peek(Batch::close).count()).isEqualTo(3);
    }
    MemoryManager.shared().checkNoOutstanding();
  }

  @Test
  void epochsAreIteratedOneAfterAnother() {
    Pipeline<Example> p = Pipeline.from(Datasets.range(10)).shuffle();
    List<Long> expected = p.epochs(CTX, 3).map(Example::index).collectList().block();
    List<Long> got = new ArrayList<>();
    try (PipelineIterator<Example> it = p.iterate(CTX, 3)) {
      it.forEachRemaining(e -> got.add(e.index()));
    }
    assertThat(got).hasSize(30).isEqualTo(expected);
  }

  @Test
  void aFailureIsThrownAfterTheElementsBeforeItAsItIs() {
    Pipeline<Batch> p = Pipeline.from(TestSources.failingAt(100, 70)).batch(10).prefetch(2);
    List<Long> firsts = new ArrayList<>();
    try (PipelineIterator<Batch> it = p.iterate(CTX)) {
      assertThatThrownBy(() -> {
        while (it.hasNext()) {
          try (Batch b = it.next()) {
            firsts.add(b.index(0));
          }
        }
      }).isInstanceOf(DatasetFormatException.class).hasMessageContaining("row 70");
      assertThatThrownBy(it::hasNext).isInstanceOf(DatasetFormatException.class); // sticky
    }
    assertThat(firsts).containsExactly(0L, 10L, 20L, 30L, 40L, 50L, 60L);
    MemoryManager.shared().checkNoOutstanding();
  }

  @Test
  void closingTwiceIsHarmlessAndUseAfterCloseThrows() {
    PipelineIterator<Batch> it = Pipeline.from(Datasets.range(100)).batch(10).iterate();
    it.next().close();
    it.close();
    it.close();
    assertThat(it.isClosed()).isTrue();
    assertThatThrownBy(it::hasNext).isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
    assertThatThrownBy(it::next).isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
    Iterator<Batch> once = it.iterator();
    assertThat(once).isSameAs(it);
    assertThatThrownBy(it::iterator).isInstanceOf(IllegalStateException.class).hasMessageContaining("once");
    MemoryManager.shared().checkNoOutstanding();
  }

  @Test
  void aBatchTheConsumerStillHoldsStaysValidAndCloseDoesNotWaitForIt() {
    Batch kept;
    try (PipelineIterator<Batch> it = busy().iterate(CTX)) {
      kept = it.next();
    }
    assertThat(MemoryManager.shared().outstandingBytes()).isPositive();
    assertThat(kept.column("x").values().toFloatArray()).hasSize(64 * 16);
    kept.close();
    MemoryManager.shared().checkNoOutstanding();
  }

  @Test
  void closingWhilePrefetchAndAParallelMapAreFullNeverLeaks() throws Exception {
    ThreadLocalRandom random = ThreadLocalRandom.current();
    for (int round = 0; round < 300; round++) {
      PipelineIterator<Batch> it = busy().iterate(CTX.withEpoch(round));
      int take = random.nextInt(3);
      for (int i = 0; i < take && it.hasNext(); i++) {
        it.next().close();
      }
      if (round % 3 == 2) {
        // let the stages fill: the parallel map holds several chunks of 64 batches (4.5 KiB each) ahead
        Awaitility.await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(1))
            .until(() -> MemoryManager.shared().outstandingBytes() >= 1_000_000);
      }
      if (round % 2 == 0) {
        it.close();
      } else {
        // another thread closes while this one waits for, or takes, the next batch
        CompletableFuture<Void> closer = CompletableFuture.runAsync(it::close);
        try {
          while (it.hasNext()) {
            it.next().close();
          }
        } catch (IllegalStateException closed) {
          assertThat(closed).hasMessageContaining("closed");
        }
        closer.get(30, TimeUnit.SECONDS);
      }
      MemoryManager.shared().checkNoOutstanding();
    }
  }

  @Test
  void anInterruptedConsumerStopsWaitingAndThePassIsClosed() {
    // a source that never emits: the consumer waits until it is interrupted
    PipelineIterator<Batch> it = PipelineIterator.of(reactor.core.publisher.Flux.<Batch>never());
    Thread.currentThread().interrupt();
    try {
      assertThatThrownBy(it::hasNext).isInstanceOf(IllegalStateException.class).hasMessageContaining("interrupted")
          .hasCauseInstanceOf(InterruptedException.class);
      assertThat(Thread.currentThread().isInterrupted()).isTrue();
      assertThat(it.isClosed()).isTrue();
    } finally {
      Thread.interrupted();
    }
  }

  @Test
  void closeLeavesNothingBehindOnTheElementPathWithPrefetchParallelMapsAndPaddedBatch() {
    // the sequential map's work lies between the parallel map's last look at the cancel and the
    // padded batch's allocation: a close that arrives then must wait for that batch
    Pipeline<Batch> p = Pipeline.from(Datasets.range(100_000)).shuffle(1_000).map(e -> e, 2, true)
        .map(IterateTest::busyIdentity).paddedBatch(16).map(b -> b, 2, true).prefetch(4);
    CloseRounds.closeRightAway(300, 21, (round, memory) -> over(p, memory).iterate(CTX.withEpoch(round)));
  }

  @Test
  void closeLeavesNothingBehindAfterAParallelGatherOnTheIndexPath() {
    // a gather of 1,024 permuted rows computes its indices before it allocates the batch
    Pipeline<Batch> p = Pipeline.from(Datasets.synthetic(1_000_000, 4, 1)).shuffle().batch(1_024, false, 2).prefetch(4);
    CloseRounds.closeRightAway(300, 22, (round, memory) -> over(p, memory).iterate(CTX.withEpoch(round)));
  }

  @Test
  void closeFromAnotherThreadWaitsForTheBatchTheConsumersRequestIsBuilding() throws Exception {
    MemoryManager memory = new MemoryManager(0);
    AtomicReference<PipelineIterator<Batch>> self = new AtomicReference<>();
    CountDownLatch building = new CountDownLatch(1);
    // no asynchronous stage: the consumer's request builds each batch on the consumer's thread
    Pipeline<Batch> p = over(Pipeline.from(Datasets.range(1_000)).map(e -> {
      if (e.index() == 47) { // the last row of the third batch
        building.countDown();
        while (!self.get().isClosed()) {
          Thread.onSpinWait();
        }
        for (int i = 0; i < 500; i++) { // the close has begun: the batch is allocated well after it
          busyIdentity(e);
        }
      }
      return e;
    }).batch(16), memory);
    PipelineIterator<Batch> it = p.iterate(CTX);
    self.set(it);
    it.next().close();
    it.next().close();
    CompletableFuture<Void> consumer = CompletableFuture.runAsync(
        () -> assertThatThrownBy(it::hasNext).isInstanceOf(IllegalStateException.class).hasMessageContaining("closed"));
    assertThat(building.await(10, TimeUnit.SECONDS)).isTrue();
    it.close();
    long allocated = memory.allocatedBytesTotal();
    assertThat(memory.outstandingBytes()).isZero();
    consumer.get(10, TimeUnit.SECONDS); // the batch went to the closed iterator, which closed it
    assertThat(memory.allocatedBytesTotal()).as("allocated after close() returned").isEqualTo(allocated);
  }

  @Test
  void closingFromAStageOfThePassItselfDoesNotWaitForItself() throws Exception {
    AtomicReference<PipelineIterator<Batch>> self = new AtomicReference<>();
    CountDownLatch closeReturned = new CountDownLatch(1);
    Pipeline<Batch> p = Pipeline.from(Datasets.range(10_000)).batch(10).map(b -> {
      if (b.index(0) == 100) {
        self.get().close(); // on the prefetch's producer thread, a task of the pass
        closeReturned.countDown();
      }
      return b;
    }).prefetch(2);
    List<Long> firsts = new ArrayList<>();
    try (PipelineIterator<Batch> it = p.iterate(CTX)) {
      self.set(it);
      assertThatThrownBy(() -> {
        while (it.hasNext()) {
          try (Batch b = it.next()) {
            firsts.add(b.index(0));
          }
        }
      }).isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
    }
    assertThat(closeReturned.await(CLOSE_WAIT_SECONDS / 2, TimeUnit.SECONDS)).as("close() called by a stage returned")
        .isTrue();
    assertThat(firsts).startsWith(0L, 10L).allMatch(i -> i < 100);
    TestSources.awaitNoOutstanding();
  }

  /** Returns {@code e} after a few microseconds of arithmetic (a stand-in for an augmentation). */
  private static Example busyIdentity(Example e) {
    long x = e.index();
    for (int i = 0; i < 2_000; i++) {
      x = x * 6364136223846793005L + 1442695040888963407L;
    }
    return x == 42 ? e : e; // keeps the loop
  }

  private static <T> Pipeline<T> over(Pipeline<T> p, MemoryManager memory) {
    return p.withOptions(p.options().toBuilder().memory(memory).build());
  }

  @Test
  void closeLeavesNothingBehindWhileInterleaveReadersRunAhead() {
    // odd rounds interleave in tf.data's order, even rounds in arrival order (Reactor's flatMap)
    CloseRounds.closeRightAway(200, 23, (round, memory) -> over(Pipeline.from(Datasets.range(32))
        .interleave(e -> Datasets.synthetic(2_000, 16, e.index()), 4, 8, 2, round % 2 == 1)
        .batch(64).map(b -> b, 2, true).prefetch(2), memory).iterate(CTX.withEpoch(round)));
  }

  @Test
  void aPaddedBatchTheConsumerStillHoldsIsAccountedFor() {
    Pipeline<Batch> padded = Pipeline.from(Datasets.range(10_000)).map(e -> e, 2, true).paddedBatch(16).prefetch(4);
    Batch kept;
    try (PipelineIterator<Batch> it = padded.iterate(CTX)) {
      kept = it.next();
    }
    assertThat(kept.column("value").values().toLongArray()).hasSize(16);
    kept.close();
    MemoryManager.shared().checkNoOutstanding(); // at once: close waited for everything but the kept batch
  }
}
