package dev.sluice.operators;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.core.Batch;
import dev.sluice.core.Datasets;
import dev.sluice.core.Options;
import dev.sluice.core.Options.PrefetchSpin;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.testing.NoLeaks;
import dev.sluice.operators.internal.FluxPrefetch;
import dev.sluice.operators.internal.PrefetchOperator;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.IntStream;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;

@ExtendWith(NoLeaks.class)
class PrefetchTest {
  /** The adaptive spin's budget, when a processor is spare. */
  private static final long SPIN_NANOS = TimeUnit.MICROSECONDS.toNanos(50);

  @Test
  void neverRunsMoreThanBufferSizeAhead() {
    for (int bufferSize : new int[] {1, 2, 4, 7}) {
      AtomicLong produced = new AtomicLong();
      AtomicLong delivered = new AtomicLong();
      AtomicInteger violations = new AtomicInteger();
      AtomicLong maxAhead = new AtomicLong();
      Flux<Long> counting = Flux.<Long, Long>generate(() -> 0L, (i, sink) -> {
        long ahead = produced.incrementAndGet() - delivered.get();
        maxAhead.accumulateAndGet(ahead, Math::max);
        if (ahead > bufferSize) {
          violations.incrementAndGet();
        }
        if (i < 200) {
          sink.next(i);
        } else {
          sink.complete();
        }
        return i + 1;
      });
      StepVerifier.create(counting.transform(Prefetch.of(bufferSize)).doOnNext(x -> delivered.incrementAndGet()), 0)
          .thenRequest(1)
          .expectNextCount(1)
          .thenRequest(5)
          .expectNextCount(5)
          .thenRequest(Long.MAX_VALUE)
          .expectNextCount(194)
          .verifyComplete();
      assertEquals(0, violations.get(), "bufferSize " + bufferSize + ": max ahead " + maxAhead.get());
      assertTrue(maxAhead.get() >= 1);
    }
  }

  @Test
  void withoutDemandTheProducerFillsExactlyTheBuffer() {
    AtomicLong produced = new AtomicLong();
    CountDownLatch filled = new CountDownLatch(3);
    Flux<Long> counting = Flux.<Long, Long>generate(() -> 0L, (i, sink) -> {
      produced.incrementAndGet();
      filled.countDown();
      sink.next(i);
      return i + 1;
    });
    StepVerifier.create(counting.transform(Prefetch.of(3)), 0)
        .expectSubscription()
        .then(() -> {
          try {
            assertTrue(filled.await(10, TimeUnit.SECONDS));
          } catch (InterruptedException e) {
            throw new AssertionError(e);
          }
        })
        .then(() -> assertEquals(3, produced.get(), "3 ahead with no demand"))
        .thenRequest(1)
        .expectNext(0L)
        .thenCancel()
        .verify();
  }

  @Test
  void theProducerRunsOnAnotherThread() throws InterruptedException {
    AtomicReference<Thread> producer = new AtomicReference<>();
    CountDownLatch started = new CountDownLatch(1);
    Flux<Integer> source = Flux.range(0, 10).doOnRequest(n -> {
      producer.compareAndSet(null, Thread.currentThread());
      started.countDown();
    });
    AtomicReference<Thread> consumer = new AtomicReference<>();
    List<Integer> out = source.transform(Prefetch.of(2))
        .doOnNext(x -> consumer.compareAndSet(null, Thread.currentThread()))
        .collectList().block();
    assertTrue(started.await(10, TimeUnit.SECONDS));
    assertEquals(10, out.size());
    assertNotEquals(Thread.currentThread(), producer.get());
    assertNotEquals(Thread.currentThread(), consumer.get());
  }

  @Test
  void cancelClosesEveryQueuedBatch() throws InterruptedException {
    for (int round = 0; round < 20; round++) {
      List<Batch> made = new CopyOnWriteArrayList<>();
      CountDownLatch done = new CountDownLatch(1);
      Flux<Batch> batches = Pipeline.from(Datasets.range(10_000)).batch(10).flux()
          .doOnNext(made::add)
          .doFinally(s -> done.countDown())
          .transform(Prefetch.of(4));
      StepVerifier.create(batches, 2)
          .consumeNextWith(Batch::close)
          .consumeNextWith(Batch::close)
          .thenCancel()
          .verify();
      assertTrue(done.await(10, TimeUnit.SECONDS), "the producer saw the cancel");
      TestSources.awaitNoOutstanding();
      for (Batch b : made) {
        assertTrue(b.isClosed(), b + " was dropped without being closed");
      }
    }
  }

  @Test
  void cancelDiscardsTheQueuedElementsInOrder() {
    CountDownLatch filled = new CountDownLatch(4);
    List<Object> discarded = new CopyOnWriteArrayList<>();
    StepVerifier.create(Flux.range(0, 100).doOnNext(x -> filled.countDown()).transform(Prefetch.of(4))
            .doOnDiscard(Integer.class, discarded::add), 0)
        .expectSubscription()
        .then(() -> {
          try {
            assertTrue(filled.await(10, TimeUnit.SECONDS));
          } catch (InterruptedException e) {
            throw new AssertionError(e);
          }
        })
        .thenRequest(1)
        .expectNext(0)
        .thenCancel() // 1, 2, 3 queued; no replenishment yet (it comes after 3 of 4)
        .verify(Duration.ofSeconds(10));
    Awaitility.await().pollDelay(Duration.ZERO).atMost(Duration.ofSeconds(10)).until(() -> discarded.size() >= 3);
    assertEquals(List.of(1, 2, 3), discarded);
  }

  @Test
  void errorsArriveAfterTheQueuedElementsAndReleaseTheRest() {
    StepVerifier.create(Pipeline.from(TestSources.failingAt(100, 55)).batch(10).prefetch(3)
            .flux(PipelineContext.defaults()).map(b -> {
              try (b) {
                return b.size();
              }
            }))
        .expectNext(10, 10, 10, 10, 10)
        .expectErrorMessage("test.npy, row 55: a broken row")
        .verify();
    TestSources.awaitNoOutstanding();
  }

  @Test
  void cancelRacingOnNextLeavesNothingOutstanding() throws InterruptedException {
    for (int round = 0; round < 200; round++) {
      int stopAfter = round % 7;
      CountDownLatch finished = new CountDownLatch(1);
      Pipeline<Batch> p = Pipeline.from(Datasets.range(5_000)).shuffle().batch(8, false, 1 + round % 3).prefetch(1 + round % 4);
      p.flux(PipelineContext.defaults().withEpoch(round))
          .doFinally(s -> finished.countDown())
          .subscribe(new reactor.core.publisher.BaseSubscriber<Batch>() {
            int seen;

            @Override
            protected void hookOnNext(Batch b) {
              b.close();
              if (++seen > stopAfter) {
                cancel(); // on the consumer thread, while the producer is emitting
              }
            }
          });
      assertTrue(finished.await(10, TimeUnit.SECONDS));
      TestSources.awaitNoOutstanding();
    }
  }

  @Test
  void terminationDoesNotInterruptTheProducerWhileItCleansUp() throws InterruptedException {
    // A source's cleanup (doFinally, Flux.using's resource close) runs on the producer thread after
    // its terminal signal: the consumer's completion must not interrupt it (subscribeOn + publishOn
    // does not; only a cancel may). Here the cleanup is still running when the downstream terminates.
    for (boolean fails : new boolean[] {false, true}) {
      for (long spinNanos : new long[] {0L, SPIN_NANOS}) {
        String where = (fails ? "error" : "completion") + ", spinNanos " + spinNanos;
        CountDownLatch downstreamTerminated = new CountDownLatch(1);
        CountDownLatch cleanedUp = new CountDownLatch(1);
        AtomicBoolean interrupted = new AtomicBoolean();
        Flux<Integer> source = Flux.range(0, 5)
            .concatWith(fails ? Flux.error(new IllegalStateException("boom")) : Flux.empty())
            .doAfterTerminate(() -> {
              try {
                downstreamTerminated.await(10, TimeUnit.SECONDS);
              } catch (InterruptedException e) {
                interrupted.set(true);
              }
              if (Thread.interrupted()) {
                interrupted.set(true);
              }
              cleanedUp.countDown();
            });
        StepVerifier.Step<Integer> step = StepVerifier.create(
                new FluxPrefetch<>(source, 4, Schedulers.boundedElastic(), Schedulers.boundedElastic(), spinNanos)
                    .doOnTerminate(downstreamTerminated::countDown))
            .expectNext(0, 1, 2, 3, 4);
        (fails ? step.expectErrorMessage("boom") : step.expectComplete()).verify(Duration.ofSeconds(10));
        assertTrue(cleanedUp.await(10, TimeUnit.SECONDS), where + ": the cleanup finished");
        assertFalse(interrupted.get(), where + ": the producer thread was interrupted during the source's cleanup");
      }
    }
  }

  @Test
  void cancelDoesNotInterruptAProducerBlockedInARead(@TempDir Path dir) throws Exception {
    // An interrupt during a FileChannel read closes the channel, which a source keeps for its later
    // passes: a cancel lets the producer's read finish, discards what it emits and then disposes
    // the producer's worker.
    Path file = dir.resolve("rows.bin");
    Files.write(file, new byte[4096]);
    CountingScheduler scheduler = new CountingScheduler(Schedulers.boundedElastic());
    CountDownLatch reading = new CountDownLatch(1);
    CountDownLatch proceed = new CountDownLatch(1);
    CountDownLatch produced = new CountDownLatch(1);
    CountDownLatch passEnded = new CountDownLatch(1);
    AtomicBoolean interrupted = new AtomicBoolean();
    AtomicReference<Throwable> readFailed = new AtomicReference<>();
    AtomicInteger made = new AtomicInteger();
    try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
      Flux<Batch> batches = Pipeline.from(Datasets.range(1_000)).batch(10).flux()
          .map(b -> {
            if (made.getAndIncrement() != 1) {
              return b;
            }
            reading.countDown(); // the second batch is read while the consumer holds the first
            try {
              if (!proceed.await(1, TimeUnit.MINUTES)) {
                throw new IllegalStateException("never told to proceed");
              }
              channel.read(ByteBuffer.allocate(4096), 0);
            } catch (InterruptedException e) {
              interrupted.set(true);
              Thread.currentThread().interrupt();
            } catch (IOException e) {
              readFailed.set(e);
            } finally {
              if (Thread.interrupted()) {
                interrupted.set(true);
              }
              produced.countDown();
            }
            return b;
          })
          .transform(PrefetchOperator.of(4, scheduler, scheduler, PrefetchOperator.THREADS))
          .doFinally(s -> passEnded.countDown());
      Disposable pass = batches.subscribe(Batch::close);
      assertTrue(reading.await(1, TimeUnit.MINUTES));
      pass.dispose();
      assertTrue(passEnded.await(1, TimeUnit.MINUTES), "the pass ended while its producer still reads");
      proceed.countDown();
      assertTrue(produced.await(1, TimeUnit.MINUTES));
      assertFalse(interrupted.get(), "the cancel interrupted the producer");
      assertNull(readFailed.get(), "the producer's read failed");
      assertTrue(channel.isOpen(), "the cancel closed the producer's channel");
      Awaitility.await().atMost(Duration.ofMinutes(1)).until(() -> scheduler.live.get() == 0); // no worker leaks
      TestSources.awaitNoOutstanding();
      assertEquals(4096, channel.read(ByteBuffer.allocate(4096), 0), "the channel reads on for the next pass");
    }
  }

  /** A scheduler that counts its workers not yet disposed. */
  private static final class CountingScheduler implements Scheduler {
    final Scheduler delegate;
    final AtomicInteger live = new AtomicInteger();

    CountingScheduler(Scheduler delegate) {
      this.delegate = delegate;
    }

    @Override
    public Disposable schedule(Runnable task) {
      return delegate.schedule(task);
    }

    @Override
    public Worker createWorker() {
      Worker worker = delegate.createWorker();
      live.incrementAndGet();
      AtomicBoolean disposed = new AtomicBoolean();
      return new Worker() {
        @Override
        public Disposable schedule(Runnable task) {
          return worker.schedule(task);
        }

        @Override
        public void dispose() {
          if (disposed.compareAndSet(false, true)) {
            live.decrementAndGet();
          }
          worker.dispose();
        }

        @Override
        public boolean isDisposed() {
          return worker.isDisposed();
        }
      };
    }
  }

  @Test
  void resubscriptionGivesTheSameElements() {
    Flux<Long> f = Flux.range(0, 100).map(Integer::longValue).transform(Prefetch.of(5));
    assertEquals(f.collectList().block(), f.collectList().block());
  }

  @Test
  void aCheapConsumerOfAnExpensiveProducerIsServedOnTheProducersThread() {
    int n = 400;
    Map<Integer, Thread> producedOn = new ConcurrentHashMap<>();
    List<Integer> out = new CopyOnWriteArrayList<>();
    AtomicInteger onProducerThread = new AtomicInteger();
    Flux.range(0, n)
        .doOnNext(i -> {
          TestSources.spin(200_000);
          producedOn.put(i, Thread.currentThread());
        })
        .transform(Prefetch.of(4))
        .doOnNext(i -> {
          out.add(i);
          if (producedOn.get(i) == Thread.currentThread()) {
            onProducerThread.incrementAndGet();
          }
        })
        .blockLast();
    assertEquals(IntStream.range(0, n).boxed().toList(), out, "every element once, in order");
    assertTrue(onProducerThread.get() > n / 2, onProducerThread.get() + " of " + n + " on the producer's thread");
  }

  @Test
  void anExpensiveConsumerIsServedOnItsOwnWorker() {
    int n = 100;
    Map<Integer, Thread> producedOn = new ConcurrentHashMap<>();
    AtomicInteger onProducerThread = new AtomicInteger();
    Flux.range(0, n)
        .doOnNext(i -> producedOn.put(i, Thread.currentThread()))
        .transform(Prefetch.of(4))
        .doOnNext(i -> {
          if (producedOn.get(i) == Thread.currentThread()) {
            onProducerThread.incrementAndGet();
          }
          TestSources.spin(200_000);
        })
        .blockLast();
    assertEquals(0, onProducerThread.get());
  }

  @Test
  void anIdleConsumerNeverSpinsWhenThePipelineMayKeepEveryProcessorBusy() {
    int processors = Runtime.getRuntime().availableProcessors();
    PrefetchSpin adaptive = PrefetchSpin.adaptive();
    assertEquals(0, FluxPrefetch.spinBudget(adaptive, processors));
    assertEquals(0, FluxPrefetch.spinBudget(adaptive, processors + 1));
    assertEquals(SPIN_NANOS, FluxPrefetch.spinBudget(adaptive, processors - 1), "a spare processor allows the spin");
    assertEquals(adaptive, Options.defaults().prefetchSpin(), "and then only while it pays, by default");
    assertEquals(0, FluxPrefetch.spinBudget(PrefetchSpin.fixed(Duration.ZERO), processors - 1), "a fixed 0 never spins");
  }
}
