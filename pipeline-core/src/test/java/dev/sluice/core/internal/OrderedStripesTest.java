package dev.sluice.core.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;

/** {@link OrderedParallel#range}: order, backpressure, errors, cancel and release. */
class OrderedStripesTest {
  /** A result that records how often it was released. */
  static final class Res {
    final long number;
    final AtomicInteger released = new AtomicInteger();

    Res(long number) {
      this.number = number;
    }
  }

  @Test
  void emitsEveryNumberInOrderWhateverTheParallelismAndLookAhead() {
    for (int parallelism : new int[] {1, 2, 3, 8}) {
      for (int ahead : new int[] {1, 2, 5}) {
        int p = parallelism;
        List<Long> out = OrderedParallel.<Long>range(101, (w, n) -> {
          assertThat(n % p).isEqualTo(w); // worker w computes its stripe
          OrderedParallelTest.spin((int) n * 31 + p);
          return n;
        }, parallelism, ahead, Schedulers.parallel(), x -> { }).collectList().block();
        List<Long> expected = new ArrayList<>();
        for (long n = 0; n < 101; n++) {
          expected.add(n);
        }
        assertThat(out).as("parallelism %d, ahead %d", parallelism, ahead).isEqualTo(expected);
      }
    }
  }

  @Test
  void oneThreadServesManyWorkersWhoseRingsFillUp() {
    Scheduler single = Schedulers.newSingle("one-thread");
    try {
      List<Long> out = OrderedParallel.<Long>range(200, (w, n) -> n, 5, 2, single, x -> { })
          .collectList().block(Duration.ofSeconds(30));
      assertThat(out).hasSize(200).isSorted().doesNotHaveDuplicates();
    } finally {
      single.dispose();
    }
  }

  @Test
  void anEmptyRangeCompletesWithoutDemandAndStartsNoWorker() {
    AtomicInteger ran = new AtomicInteger();
    StepVerifier.create(OrderedParallel.<Long>range(0, (w, n) -> {
      ran.incrementAndGet();
      return n;
    }, 2, 1, Schedulers.parallel(), x -> { }), 0).verifyComplete();
    assertThat(ran.get()).isZero();
  }

  @Test
  void producesNoMoreThanParallelismTimesAheadBeyondTheDemand() {
    AtomicLong produced = new AtomicLong();
    StepVerifier.create(OrderedParallel.<Long>range(1000, (w, n) -> {
      produced.incrementAndGet();
      return n;
    }, 3, 2, Schedulers.parallel(), x -> { }), 5)
        .expectNext(0L, 1L, 2L, 3L, 4L)
        .then(() -> Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> produced.get() == 5 + 3 * 2))
        .then(() -> assertThat(produced.get()).isLessThanOrEqualTo(5 + 3 * 2))
        .thenRequest(3)
        .expectNext(5L, 6L, 7L)
        .thenCancel()
        .verify();
  }

  @Test
  void cancelReleasesEveryResultNotEmittedExactlyOnce() throws InterruptedException {
    for (int round = 0; round < 50; round++) {
      Map<Res, Boolean> made = new ConcurrentHashMap<>();
      int take = round % 7;
      Flux<Res> flux = OrderedParallel.<Res>range(1000, (w, n) -> {
        Res r = new Res(n);
        made.put(r, true);
        return r;
      }, 1 + round % 3, 1 + round % 4, Schedulers.parallel(), r -> r.released.incrementAndGet());
      // a worker still computing when the stage ended releases its result itself
      CancelReleases.check(flux, take, made.keySet(), r -> r.released.get(), r -> "number " + r.number);
      assertThat(made.size()).isLessThanOrEqualTo(take + 3 * 4 + 3);
    }
  }

  /**
   * A cancel from another thread while the drain holds a result it took from its slot (here: while
   * it resumes the suspended worker of that slot): once {@code cancel()} returned, the result is
   * released rather than emitted; an operator such as {@code concatMap} would drop it unreleased.
   */
  @Test
  void aResultTakenWhileACancelRunsIsReleasedNotEmittedAfterTheCancelReturned() throws InterruptedException {
    for (int round = 0; round < 20; round++) {
      Map<Res, Boolean> made = new ConcurrentHashMap<>();
      List<Res> emitted = new CopyOnWriteArrayList<>();
      List<Res> late = new CopyOnWriteArrayList<>();
      AtomicInteger running = new AtomicInteger();
      AtomicBoolean armed = new AtomicBoolean();
      AtomicBoolean cancelReturned = new AtomicBoolean();
      CountDownLatch inDrain = new CountDownLatch(1);
      CountDownLatch cancelled = new CountDownLatch(1);
      Scheduler gate = new Scheduler() {
        @Override
        public Disposable schedule(Runnable task) {
          if (armed.compareAndSet(true, false)) { // the resume from the drain that holds a taken result
            inDrain.countDown();
            await(cancelled);
          }
          running.incrementAndGet();
          return Schedulers.parallel().schedule(() -> {
            try {
              task.run();
            } finally {
              running.decrementAndGet();
            }
          });
        }

        @Override
        public Worker createWorker() {
          throw new UnsupportedOperationException();
        }
      };
      AtomicReference<Subscription> upstream = new AtomicReference<>();
      OrderedParallel.<Res>range(1000, (w, n) -> {
        Res r = new Res(n);
        made.put(r, true);
        return r;
      }, 1, 1, gate, r -> r.released.incrementAndGet()).subscribe(new CoreSubscriber<Res>() {
        @Override
        public void onSubscribe(Subscription s) {
          upstream.set(s);
        }

        @Override
        public void onNext(Res r) {
          (cancelReturned.get() ? late : emitted).add(r);
        }

        @Override
        public void onError(Throwable t) {
        }

        @Override
        public void onComplete() {
        }
      });
      upstream.get().request(1);
      // number 0 emitted, number 1 waits in the worker's only slot, the worker suspended on number 2
      Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> emitted.size() == 1 && made.size() == 2
          && running.get() == 0);
      armed.set(true);
      Thread canceller = new Thread(() -> {
        await(inDrain);
        upstream.get().cancel();
        cancelReturned.set(true);
        cancelled.countDown();
      });
      canceller.start();
      upstream.get().request(1); // the drain takes number 1 and resumes the worker, meanwhile the cancel
      canceller.join();
      Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> running.get() == 0);
      assertThat(late).as("round %d: emitted after the cancel returned", round).isEmpty();
      for (Res r : made.keySet()) {
        assertThat(r.released.get()).as("round %d, number %d", round, r.number).isEqualTo(emitted.contains(r) ? 0 : 1);
      }
    }
  }

  private static void await(CountDownLatch latch) {
    try {
      assertThat(latch.await(5, TimeUnit.SECONDS)).isTrue();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  @Test
  void aFailedTaskFailsAfterEveryResultBeforeItsNumberAndTheRestIsReleased() {
    List<Res> released = new ArrayList<>();
    Flux<Res> flux = OrderedParallel.<Res>range(40, (w, n) -> {
      if (n == 9) {
        throw new IllegalStateException("number 9 broke");
      }
      return new Res(n);
    }, 4, 3, Schedulers.parallel(), r -> {
      synchronized (released) {
        released.add(r);
      }
    });
    List<Long> numbers = new ArrayList<>();
    StepVerifier.create(flux.map(r -> r.number))
        .recordWith(() -> numbers)
        .thenConsumeWhile(t -> true)
        .expectErrorMessage("number 9 broke")
        .verify();
    assertThat(numbers).containsExactly(0L, 1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L);
    Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> {
      synchronized (released) {
        return released.stream().allMatch(r -> r.number > 9);
      }
    });
  }

  @Test
  void aJvmErrorInATaskIsSignalledNotThrownOnTheWorker() {
    Flux<Long> flux = OrderedParallel.<Long>range(10, (w, n) -> {
      if (n == 3) {
        throw new OutOfMemoryError("simulated");
      }
      return n;
    }, 2, 2, Schedulers.parallel(), x -> { });
    StepVerifier.create(flux).expectNext(0L, 1L, 2L)
        .expectErrorSatisfies(e -> assertThat(e).hasCauseInstanceOf(OutOfMemoryError.class))
        .verify(Duration.ofSeconds(10));
  }

  @Test
  void aRejectedWorkerFailsTheStage() {
    Scheduler rejecting = new Scheduler() {
      @Override
      public Disposable schedule(Runnable task) {
        throw new RejectedExecutionException("no threads");
      }

      @Override
      public Worker createWorker() {
        throw new UnsupportedOperationException();
      }
    };
    StepVerifier.create(OrderedParallel.<Long>range(10, (w, n) -> n, 2, 2, rejecting, x -> { }))
        .expectErrorSatisfies(e -> assertThat(e).hasStackTraceContaining("no threads"))
        .verify(Duration.ofSeconds(10));
  }

  @Test
  void checksItsArguments() {
    assertThatThrownBy(() -> OrderedParallel.<Long>range(1, (w, n) -> n, 0, 1, Schedulers.parallel(), x -> { }))
        .hasMessageContaining("parallelism > 0");
    assertThatThrownBy(() -> OrderedParallel.<Long>range(1, (w, n) -> n, 1, 0, Schedulers.parallel(), x -> { }))
        .hasMessageContaining("ahead > 0");
  }
}
