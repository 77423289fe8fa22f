package dev.sluice.operators.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.core.testing.NoLeaks;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.reactivestreams.Subscription;
import reactor.core.Disposable;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;
import reactor.test.util.RaceTestUtils;

@ExtendWith(NoLeaks.class)
class FluxSubscribeOnUninterruptedTest {

  @Test
  void subscribesAndRequestsOnTheWorkerAndKeepsBackpressure() {
    CountingScheduler scheduler = new CountingScheduler(Schedulers.boundedElastic());
    Thread test = Thread.currentThread();
    List<Thread> requestedOn = new CopyOnWriteArrayList<>();
    Flux<Integer> f = new FluxSubscribeOnUninterrupted<>(
        Flux.range(0, 10).doOnRequest(n -> requestedOn.add(Thread.currentThread())), scheduler);
    StepVerifier.create(f, 0)
        .thenRequest(3).expectNext(0, 1, 2)
        .thenRequest(7).expectNext(3, 4, 5, 6, 7, 8, 9)
        .verifyComplete();
    assertEquals(2, requestedOn.size());
    requestedOn.forEach(t -> assertNotSame(test, t));
    Awaitility.await().atMost(Duration.ofMinutes(1)).until(() -> scheduler.live.get() == 0); // worker disposed
  }

  @Test
  void aCancelDisposesTheWorkerOnlyAfterTheRunningTaskAndDiscardsItsLateElement() throws Exception {
    CountingScheduler scheduler = new CountingScheduler(Schedulers.boundedElastic());
    CountDownLatch running = new CountDownLatch(1);
    CountDownLatch proceed = new CountDownLatch(1);
    CountDownLatch passEnded = new CountDownLatch(1);
    AtomicBoolean interrupted = new AtomicBoolean();
    AtomicInteger discarded = new AtomicInteger();
    Flux<Integer> f = new FluxSubscribeOnUninterrupted<>(Flux.<Integer>generate(sink -> {
      running.countDown();
      try {
        proceed.await(1, TimeUnit.MINUTES);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      interrupted.set(Thread.interrupted());
      sink.next(1);
    }), scheduler);
    Disposable pass = f.doOnDiscard(Integer.class, i -> discarded.incrementAndGet())
        .doFinally(s -> passEnded.countDown())
        .subscribe();
    assertTrue(running.await(1, TimeUnit.MINUTES));
    pass.dispose();
    assertTrue(passEnded.await(1, TimeUnit.MINUTES));
    assertEquals(1, scheduler.live.get(), "the worker was disposed while its task still ran");
    proceed.countDown();
    Awaitility.await().atMost(Duration.ofMinutes(1)).until(() -> scheduler.live.get() == 0);
    assertFalse(interrupted.get(), "the cancel interrupted the running task");
    assertEquals(1, discarded.get(), "the late element was not discarded");
  }

  @Test
  void aCancelRacingRequestsAndTheSubscriptionLeavesNoWorker() {
    CountingScheduler scheduler = new CountingScheduler(Schedulers.boundedElastic());
    AtomicInteger discarded = new AtomicInteger();
    AtomicInteger emitted = new AtomicInteger();
    AtomicInteger generated = new AtomicInteger();
    for (int round = 0; round < 200; round++) {
      BaseSubscriber<Integer> sub = new BaseSubscriber<>() {
        @Override
        protected void hookOnSubscribe(Subscription s) {
        }

        @Override
        protected void hookOnNext(Integer value) {
          emitted.incrementAndGet();
        }
      };
      new FluxSubscribeOnUninterrupted<>(Flux.range(0, 50).doOnNext(i -> generated.incrementAndGet()), scheduler)
          .doOnDiscard(Integer.class, i -> discarded.incrementAndGet())
          .subscribe(sub);
      RaceTestUtils.race(sub::cancel, () -> sub.request(7));
    }
    Awaitility.await().atMost(Duration.ofMinutes(1)).until(() -> scheduler.live.get() == 0);
    assertEquals(generated.get(), emitted.get() + discarded.get(), "an element was neither emitted nor discarded");
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
}
