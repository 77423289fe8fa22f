package dev.sluice.operators;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.sluice.core.Batch;
import dev.sluice.core.MemoryManager;
import dev.sluice.core.testing.NoLeaks;
import dev.sluice.operators.internal.FluxPrefetch;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import java.util.stream.LongStream;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;
import reactor.test.util.RaceTestUtils;

/**
 * Races and the spin path of {@link Prefetch} ({@link FluxPrefetch}): cancel against onNext, cancel
 * against the drain, an error behind queued elements, a consumer that spins for its next element.
 * Every round's parameters derive from the round number, so a failing round can be replayed.
 */
@ExtendWith(NoLeaks.class)
class PrefetchRaceTest {
  /** Rounds per race test: about 1 s each on a 2-core machine. */
  static final int ROUNDS = 2000;

  @Test
  void cancelRacingOnNextDeliversOrDiscardsEveryBatchExactlyOnce() {
    List<Ledger<Batch>> ledgers = new ArrayList<>();
    for (int round = 0; round < ROUNDS; round++) {
      String where = "round " + round;
      int bufferSize = 1 + round % 4;
      long demand = switch ((round >> 2) % 3) {
        case 0 -> Long.MAX_VALUE;
        case 1 -> 1;
        default -> bufferSize;
      };
      int before = (round / 12) % bufferSize; // emitted before the race; the rest (at least one) races the cancel
      Ledger<Batch> ledger = new Ledger<>();
      ledgers.add(ledger);
      ManualSource<Batch> source = new ManualSource<>();
      BaseSubscriber<Batch> sub = new BaseSubscriber<>() {
        @Override
        protected void hookOnSubscribe(Subscription s) {
          s.request(demand);
        }

        @Override
        protected void hookOnNext(Batch b) {
          ledger.delivered(b);
          b.close();
        }
      };
      Flux.from(source).transform(Prefetch.<Batch>of(bufferSize))
          .doOnDiscard(Batch.class, ledger::discarded)
          .subscribe(sub);
      source.awaitSubscriber(where);
      Batch[] batches = new Batch[bufferSize]; // no more than the operator asked for up front
      for (int i = 0; i < bufferSize; i++) {
        batches[i] = ElementTestSupport.batchOf(round * 4L + i);
      }
      for (int i = 0; i < before; i++) {
        ledger.emitted(batches[i]);
        source.emit(batches[i]);
      }
      RaceTestUtils.race(() -> {
        for (int i = before; i < bufferSize; i++) {
          ledger.emitted(batches[i]);
          source.emit(batches[i]);
        }
      }, sub::cancel);
      await(where + ": the upstream saw the cancel", () -> source.cancelled.getCount() == 0);
      await(where + ": every emitted batch delivered or discarded", ledger::settled);
      ledger.check(where, bufferSize);
      await(where + ": every batch released", () -> MemoryManager.shared().outstandingBytes() == 0);
    }
    // A second look once every round is long over: no element was discarded (or delivered) again later.
    for (int round = 0; round < ROUNDS; round++) {
      ledgers.get(round).check("round " + round + ", rechecked", -1);
    }
  }

  @Test
  void cancelRacingTheDrainDeliversOrDiscardsEveryBatchExactlyOnce() {
    List<Ledger<Batch>> ledgers = new ArrayList<>();
    for (int round = 0; round < ROUNDS; round++) {
      String where = "round " + round;
      int bufferSize = 1 + round % 4;
      boolean finite = (round & 4) == 0; // finite: the upstream has completed with the buffer full
      long demand = switch ((round >> 3) % 3) {
        case 0 -> 1;
        case 1 -> bufferSize;
        default -> Long.MAX_VALUE;
      };
      long size = finite ? bufferSize : Long.MAX_VALUE;
      Ledger<Batch> ledger = new Ledger<>();
      ledgers.add(ledger);
      // Flux.generate cleans up its state once it emits no more: after the cancel and any element
      // still being emitted when it came, so from then on the ledger's list of emitted batches is final.
      CountDownLatch producerDone = new CountDownLatch(1);
      AtomicBoolean completed = new AtomicBoolean();
      BaseSubscriber<Batch> sub = new BaseSubscriber<>() {
        @Override
        protected void hookOnSubscribe(Subscription s) {
          // no demand: the buffer fills
        }

        @Override
        protected void hookOnNext(Batch b) {
          ledger.delivered(b);
          b.close();
        }

        @Override
        protected void hookOnComplete() {
          completed.set(true);
        }
      };
      long first = round * 8L;
      Flux.<Batch, Long>generate(() -> 0L, (i, sink) -> {
        if (i < size) {
          Batch b = ElementTestSupport.batchOf(first + i);
          ledger.emitted(b);
          sink.next(b);
          if (i + 1 == size) {
            sink.complete(); // with the last element: the operator holds a full buffer and the end
          }
        } else {
          sink.complete();
        }
        return i + 1;
      }, i -> producerDone.countDown())
          .transform(Prefetch.of(bufferSize))
          .doOnDiscard(Batch.class, ledger::discarded)
          .subscribe(sub);
      await(where + ": the buffer filled", () -> ledger.emittedCount() == bufferSize);
      RaceTestUtils.race(() -> sub.request(demand), sub::cancel);
      await(where + ": the producer stopped", () -> producerDone.getCount() == 0);
      await(where + ": every emitted batch delivered or discarded", ledger::settled);
      ledger.check(where, -1);
      assertTrue(ledger.deliveredCount() <= demand, where + ": delivered more than requested");
      if (completed.get()) {
        assertTrue(finite, where + ": an endless upstream completed");
        assertEquals(bufferSize, ledger.deliveredCount(), where + ": completed before delivering the buffer");
      }
      await(where + ": every batch released", () -> MemoryManager.shared().outstandingBytes() == 0);
    }
    for (int round = 0; round < ROUNDS; round++) {
      ledgers.get(round).check("round " + round + ", rechecked", -1);
    }
  }

  @Test
  void anErrorRacingTheDrainArrivesAfterEveryElementQueuedBeforeIt() throws InterruptedException {
    for (int round = 0; round < ROUNDS; round++) {
      String where = "round " + round;
      int count = 1 + round % 4; // within the 4 the operator asks for up front
      long demand = (round & 4) == 0 ? Long.MAX_VALUE : count; // exact demand: the error needs none of its own
      long spinNanos = (round & 8) == 0 ? 0L : TimeUnit.MICROSECONDS.toNanos(50);
      IllegalStateException boom = new IllegalStateException("boom " + round);
      ManualSource<Integer> source = new ManualSource<>();
      List<Integer> got = Collections.synchronizedList(new ArrayList<>());
      AtomicReference<Throwable> error = new AtomicReference<>();
      AtomicBoolean completed = new AtomicBoolean();
      CountDownLatch terminated = new CountDownLatch(1);
      BaseSubscriber<Integer> sub = new BaseSubscriber<>() {
        @Override
        protected void hookOnSubscribe(Subscription s) {
          // the demand races the signals
        }

        @Override
        protected void hookOnNext(Integer v) {
          got.add(v);
        }

        @Override
        protected void hookOnError(Throwable t) {
          error.set(t);
          terminated.countDown();
        }

        @Override
        protected void hookOnComplete() {
          completed.set(true);
          terminated.countDown();
        }
      };
      new FluxPrefetch<>(Flux.from(source), 4, Schedulers.boundedElastic(), Schedulers.boundedElastic(), spinNanos)
          .subscribe(sub);
      Subscriber<? super Integer> upstream = source.awaitSubscriber(where);
      RaceTestUtils.race(() -> {
        for (int i = 0; i < count; i++) {
          source.emit(i);
        }
        upstream.onError(boom);
      }, () -> sub.request(demand));
      assertTrue(terminated.await(10, TimeUnit.SECONDS), where + ": no terminal signal");
      assertFalse(completed.get(), where + ": completed instead of failing");
      assertSame(boom, error.get(), where);
      assertEquals(IntStream.range(0, count).boxed().toList(), List.copyOf(got), where + ": elements before the error");
    }
  }

  @Test
  void anErrorWaitsForTheDemandOfTheElementsQueuedBeforeIt() throws InterruptedException {
    for (long spinNanos : new long[] {0L, TimeUnit.MICROSECONDS.toNanos(50), TimeUnit.MILLISECONDS.toNanos(10)}) {
      CountDownLatch errored = new CountDownLatch(1);
      Flux<Integer> source = Flux.range(0, 3)
          .concatWith(Flux.error(new IllegalStateException("boom")))
          .doAfterTerminate(errored::countDown); // after the operator has taken the error
      StepVerifier.create(
              new FluxPrefetch<>(source, 4, Schedulers.boundedElastic(), Schedulers.boundedElastic(), spinNanos), 0)
          .expectSubscription()
          .then(() -> await("the upstream failed", () -> errored.getCount() == 0))
          .thenRequest(1)
          .expectNext(0)
          .thenRequest(2) // had the error overtaken the queue, the next expectation would see it
          .expectNext(1, 2)
          .expectErrorMessage("boom")
          .verify(Duration.ofSeconds(10));
    }
  }

  /** A producer that pauses for less and for more than the consumer's spin (0: the consumer never spins). */
  @ParameterizedTest
  @ValueSource(longs = {0L, 10_000_000L})
  void everyElementArrivesInOrderAndTheCompletionFollowsWhateverTheSpin(long spinNanos) {
    int n = 300;
    // Pauses on a timer: every 7th element 1 ms (within a 10 ms spin), every 50th 15 ms (beyond it).
    Flux<Integer> slowish = Flux.range(0, n).delayUntil(i -> i % 50 == 49 ? Mono.delay(Duration.ofMillis(15))
        : i % 7 == 6 ? Mono.delay(Duration.ofMillis(1)) : Mono.empty());
    StepVerifier.create(new FluxPrefetch<>(slowish, 4, Schedulers.boundedElastic(), Schedulers.boundedElastic(),
            spinNanos))
        .expectNextSequence(IntStream.range(0, n).boxed().toList())
        .expectComplete()
        .verify(Duration.ofSeconds(10));
    // The same with backpressure, in steps smaller and larger than the buffer.
    StepVerifier.create(new FluxPrefetch<>(slowish, 4, Schedulers.boundedElastic(), Schedulers.boundedElastic(),
            spinNanos), 0)
        .thenRequest(1)
        .expectNext(0)
        .thenRequest(9)
        .expectNextSequence(IntStream.range(1, 10).boxed().toList())
        .thenRequest(Long.MAX_VALUE)
        .expectNextSequence(IntStream.range(10, n).boxed().toList())
        .expectComplete()
        .verify(Duration.ofSeconds(10));
  }

  @Test
  void aSpinningConsumerNoticesCompletionErrorAndCancelWithoutWaitingOutItsSpin() throws InterruptedException {
    // 30 s: far beyond verify's 10 s, so only noticing the signal ends the wait in time.
    long spinNanos = TimeUnit.SECONDS.toNanos(30);
    Scheduler consumer = Schedulers.newSingle("spinning-consumer");
    try {
      // The consumer takes element 4, finds the queue empty with demand left and spins: the end comes 20 ms later.
      StepVerifier.create(new FluxPrefetch<>(Flux.range(0, 5).concatWith(Mono.delay(Duration.ofMillis(20))
                .then(Mono.<Integer>empty())), 4, Schedulers.boundedElastic(), consumer, spinNanos))
          .expectNext(0, 1, 2, 3, 4)
          .expectComplete()
          .verify(Duration.ofSeconds(10));
      StepVerifier.create(new FluxPrefetch<>(Flux.range(0, 5).concatWith(Mono.delay(Duration.ofMillis(20))
                .then(Mono.<Integer>error(new IllegalStateException("late boom")))), 4, Schedulers.boundedElastic(),
                consumer, spinNanos))
          .expectNext(0, 1, 2, 3, 4)
          .expectErrorMessage("late boom")
          .verify(Duration.ofSeconds(10));

      CountDownLatch upstreamCancelled = new CountDownLatch(1);
      CountDownLatch gotAll = new CountDownLatch(5);
      BaseSubscriber<Integer> sub = new BaseSubscriber<>() {
        @Override
        protected void hookOnNext(Integer v) {
          gotAll.countDown();
        }
      };
      new FluxPrefetch<>(Flux.range(0, 5).concatWith(Flux.never()).doOnCancel(upstreamCancelled::countDown), 4,
          Schedulers.boundedElastic(), consumer, spinNanos).subscribe(sub);
      assertTrue(gotAll.await(10, TimeUnit.SECONDS));
      sub.cancel(); // from this thread, while the consumer spins for a sixth element that never comes
      assertTrue(upstreamCancelled.await(10, TimeUnit.SECONDS), "the upstream saw the cancel");
      // The consumer scheduler has one thread: this task runs only once the drain has given it back.
      CountDownLatch consumerFree = new CountDownLatch(1);
      consumer.schedule(consumerFree::countDown);
      assertTrue(consumerFree.await(10, TimeUnit.SECONDS), "the consumer still spins after the cancel");
    } finally {
      consumer.dispose();
    }
  }

  /** PrefetchTest's bound on the producer, with a consumer that spins (10 ms) through the producer's pauses. */
  @Test
  void aSpinningConsumerNeverLetsTheProducerRunMoreThanBufferSizeAhead() {
    long spinNanos = TimeUnit.MILLISECONDS.toNanos(10);
    for (int bufferSize : new int[] {1, 2, 4, 7}) {
      String where = "bufferSize " + bufferSize;
      AtomicLong requested = new AtomicLong(); // asked of the upstream by the operator
      AtomicLong received = new AtomicLong(); // handed to the operator
      AtomicLong delivered = new AtomicLong(); // handed on by the operator
      AtomicLong maxAhead = new AtomicLong();
      AtomicInteger violations = new AtomicInteger();
      Flux<Long> producer = Flux.<Long, Long>generate(() -> 0L, (i, sink) -> {
        if (i % 16 == 15) {
          busyWaitMicros(200); // the consumer spins through this pause
        }
        if (i < 200) {
          sink.next(i);
        } else {
          sink.complete();
        }
        return i + 1;
      }).doOnRequest(n -> {
        if (requested.addAndGet(n) - delivered.get() > bufferSize) {
          violations.incrementAndGet();
        }
      }).doOnNext(x -> {
        long ahead = received.incrementAndGet() - delivered.get();
        maxAhead.accumulateAndGet(ahead, Math::max);
        if (ahead > bufferSize) {
          violations.incrementAndGet();
        }
      });
      Flux<Long> prefetched = new FluxPrefetch<>(producer, bufferSize, Schedulers.boundedElastic(),
          Schedulers.boundedElastic(), spinNanos).doOnNext(x -> delivered.incrementAndGet());
      StepVerifier.create(prefetched, 0)
          .expectSubscription()
          .then(() -> await(where + ": the buffer filled", () -> received.get() == bufferSize))
          .thenRequest(1)
          .expectNext(0L)
          .thenRequest(5)
          .expectNextSequence(LongStream.range(1, 6).boxed().toList())
          .thenRequest(Long.MAX_VALUE)
          .expectNextSequence(LongStream.range(6, 200).boxed().toList())
          .expectComplete()
          .verify(Duration.ofSeconds(10));
      assertEquals(0, violations.get(), where + ": max ahead " + maxAhead.get());
      assertEquals(bufferSize, maxAhead.get(), where + ": the buffer was filled without demand");
    }
  }

  /** Waits (polling, no fixed sleep) until {@code condition} holds, for at most 10 s. */
  static void await(String what, Callable<Boolean> condition) {
    Awaitility.await(what).pollInSameThread().pollDelay(Duration.ZERO).pollInterval(Duration.ofNanos(100_000))
        .atMost(Duration.ofSeconds(10)).until(condition);
  }

  static void busyWaitMicros(long micros) {
    long until = System.nanoTime() + micros * 1_000L;
    while (System.nanoTime() < until) {
      Thread.onSpinWait();
    }
  }

  /** What happened to each element: emitted by the upstream, then delivered downstream or discarded. */
  static final class Ledger<T> {
    private final List<T> emitted = Collections.synchronizedList(new ArrayList<>());
    // Batch keeps Object's identity equality, so these count per element.
    private final Map<T, AtomicInteger> delivered = new ConcurrentHashMap<>();
    private final Map<T, AtomicInteger> discarded = new ConcurrentHashMap<>();

    void emitted(T t) {
      emitted.add(t);
    }

    void delivered(T t) {
      delivered.computeIfAbsent(t, k -> new AtomicInteger()).incrementAndGet();
    }

    void discarded(T t) {
      discarded.computeIfAbsent(t, k -> new AtomicInteger()).incrementAndGet();
    }

    int emittedCount() {
      return emitted.size();
    }

    int deliveredCount() {
      return delivered.size();
    }

    /** Every emitted element has been delivered or discarded (at least once). */
    boolean settled() {
      synchronized (emitted) {
        // counts, not keys: a key appears (at 0) just before its count goes up
        return emitted.stream().allMatch(t -> count(delivered, t) + count(discarded, t) > 0);
      }
    }

    /** Each emitted element was delivered or discarded exactly once; nothing else was seen. */
    void check(String where, int expectedEmitted) {
      List<T> all;
      synchronized (emitted) {
        all = List.copyOf(emitted);
      }
      if (expectedEmitted >= 0) {
        assertEquals(expectedEmitted, all.size(), where + ": emitted");
      }
      Set<T> known = Collections.newSetFromMap(new IdentityHashMap<>());
      known.addAll(all);
      assertEquals(all.size(), known.size(), where + ": an element was emitted twice");
      for (T t : all) {
        int d = count(delivered, t);
        int x = count(discarded, t);
        if (d + x != 1) {
          fail(where + ": " + t + " was delivered " + d + " and discarded " + x + " times");
        }
      }
      Set<T> seen = Collections.newSetFromMap(new IdentityHashMap<>());
      seen.addAll(delivered.keySet());
      seen.addAll(discarded.keySet());
      seen.removeAll(known);
      assertTrue(seen.isEmpty(), where + ": never emitted but seen: "
          + seen.stream().map(String::valueOf).collect(Collectors.joining(", ")));
    }

    private static <T> int count(Map<T, AtomicInteger> m, T t) {
      AtomicInteger c = m.get(t);
      return c == null ? 0 : c.get();
    }
  }

  /**
   * An upstream the test drives: it records demand and cancel, and emits on the caller's thread
   * (one caller at a time), never more than was requested.
   */
  static final class ManualSource<T> implements Publisher<T> {
    final CountDownLatch subscribed = new CountDownLatch(1);
    final CountDownLatch cancelled = new CountDownLatch(1);
    final AtomicLong requested = new AtomicLong();
    long emitted;
    volatile Subscriber<? super T> subscriber;

    @Override
    public void subscribe(Subscriber<? super T> s) {
      subscriber = s;
      s.onSubscribe(new Subscription() {
        @Override
        public void request(long n) {
          requested.accumulateAndGet(n, (a, b) -> a + b < 0 ? Long.MAX_VALUE : a + b);
        }

        @Override
        public void cancel() {
          cancelled.countDown();
        }
      });
      subscribed.countDown(); // after onSubscribe, so after the operator's first request
    }

    Subscriber<? super T> awaitSubscriber(String where) {
      try {
        assertTrue(subscribed.await(10, TimeUnit.SECONDS), where + ": the operator never subscribed");
      } catch (InterruptedException e) {
        throw new AssertionError(e);
      }
      return subscriber;
    }

    void emit(T t) {
      if (emitted >= requested.get()) {
        throw new AssertionError("the test emits beyond the demand: " + emitted + " of " + requested.get());
      }
      emitted++;
      subscriber.onNext(t);
    }
  }
}
