package dev.sluice.core.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.core.MemoryLimitException;
import dev.sluice.core.MemoryManager;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;

class OrderedParallelTest {
  /** A result that records how often it was released. */
  static final class Res {
    final int task;
    final int item;
    final AtomicInteger released = new AtomicInteger();

    Res(int task, int item) {
      this.task = task;
      this.item = item;
    }
  }

  /** Spins for a pseudo-random while, so tasks finish out of order (no sleeping). */
  static long spin(int seed) {
    long x = seed;
    int n = new SplittableRandom(seed).nextInt(200_000);
    for (int i = 0; i < n; i++) {
      x = Mix.mix64(x);
    }
    return x;
  }

  @Test
  void emitsEveryRunInInputOrderWhateverTheParallelism() {
    for (int parallelism : new int[] {1, 2, 4, 9}) {
      List<String> out = OrderedParallel.<Integer, String>flatMap(Flux.range(0, 40), (i, o) -> {
        spin(i * 31 + parallelism);
        for (int k = 0; k < i % 4; k++) {
          o.accept(i + "." + k);
        }
      }, parallelism, Schedulers.parallel(), s -> { }).collectList().block();
      List<String> expected = new ArrayList<>();
      for (int i = 0; i < 40; i++) {
        for (int k = 0; k < i % 4; k++) {
          expected.add(i + "." + k);
        }
      }
      assertThat(out).isEqualTo(expected);
    }
  }

  @Test
  void cancelReleasesEveryResultNotEmittedExactlyOnce() throws InterruptedException {
    for (int round = 0; round < 50; round++) {
      Map<Res, Boolean> made = new ConcurrentHashMap<>();
      int take = round % 7;
      Flux<Res> flux = OrderedParallel.<Integer, Res>flatMap(Flux.range(0, 1000), (i, o) -> {
        for (int k = 0; k < 3; k++) {
          Res r = new Res(i, k);
          made.put(r, true);
          o.accept(r);
        }
      }, 3, Schedulers.parallel(), r -> r.released.incrementAndGet());
      // tasks still running when the stage ended stop at their next result, which is released
      CancelReleases.check(flux, take, made.keySet(), r -> r.released.get(), r -> "task " + r.task + " item " + r.item);
      assertThat(made.size()).isLessThan(3 * 20); // nothing like the 1,000 inputs: tasks stop
    }
  }

  @Test
  void aTaskThatFinishesAfterTheCancelHasItsResultReleased() throws InterruptedException {
    CountDownLatch started = new CountDownLatch(1);
    CountDownLatch go = new CountDownLatch(1);
    CountDownLatch released = new CountDownLatch(1);
    CountDownLatch ended = new CountDownLatch(1);
    AtomicInteger afterStop = new AtomicInteger();
    Flux<Res> flux = OrderedParallel.<Integer, Res>flatMap(Flux.just(1), (i, o) -> {
      started.countDown();
      boolean interrupted = false;
      while (true) { // the cancel may interrupt this worker: the task still finishes later
        try {
          go.await();
          break;
        } catch (InterruptedException e) {
          interrupted = true;
        }
      }
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
      o.accept(new Res(i, 0));
      afterStop.incrementAndGet(); // not reached: the output stops the task
    }, 1, Schedulers.boundedElastic(), r -> released.countDown());
    StepVerifier.create(flux.doFinally(signal -> ended.countDown()), 1)
        .then(() -> assertThat(awaitQuietly(started)).isTrue())
        .thenCancel()
        .verify();
    assertThat(ended.await(5, TimeUnit.SECONDS)).isTrue();
    go.countDown();
    assertThat(released.await(5, TimeUnit.SECONDS)).isTrue();
    assertThat(afterStop.get()).isZero();
  }

  private static boolean awaitQuietly(CountDownLatch latch) {
    try {
      return latch.await(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  @Test
  void aFailedTaskFailsAfterTheRunsBeforeItAndItsPartialOutputIsReleased() {
    List<Res> released = new ArrayList<>();
    Flux<Res> flux = OrderedParallel.<Integer, Res>flatMap(Flux.range(0, 10), (i, o) -> {
      o.accept(new Res(i, 0));
      if (i == 4) {
        throw new IllegalStateException("task 4 broke");
      }
      o.accept(new Res(i, 1));
    }, 4, Schedulers.parallel(), r -> {
      synchronized (released) {
        released.add(r);
      }
    });
    List<Integer> tasks = new ArrayList<>();
    StepVerifier.create(flux.map(r -> r.task))
        .recordWith(() -> tasks)
        .thenConsumeWhile(t -> true)
        .expectErrorMessage("task 4 broke")
        .verify();
    assertThat(tasks).containsExactly(0, 0, 1, 1, 2, 2, 3, 3);
    synchronized (released) {
      assertThat(released).extracting(r -> r.task).contains(4);
      assertThat(released).allMatch(r -> r.task >= 4);
    }
  }

  @Test
  void checksItsArguments() {
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> OrderedParallel.<Integer, Integer>flatMap(
            Flux.just(1), (i, o) -> o.accept(i), 0, Schedulers.parallel(), x -> { }))
        .hasMessage("parallelism > 0 required but it was 0");
  }

  @Test
  void aCancelDoesNotInterruptARunningTask() throws InterruptedException {
    CountDownLatch started = new CountDownLatch(1);
    CountDownLatch proceed = new CountDownLatch(1);
    CountDownLatch done = new CountDownLatch(1);
    AtomicInteger interrupted = new AtomicInteger();
    AtomicInteger released = new AtomicInteger();
    OrderedParallel.Task<Integer, Integer> task = (input, out) -> {
      started.countDown();
      try {
        if (!proceed.await(1, TimeUnit.MINUTES)) {
          throw new IllegalStateException("never told to proceed");
        }
      } catch (InterruptedException e) {
        interrupted.incrementAndGet(); // an interrupt would have closed a FileChannel the task reads
        Thread.currentThread().interrupt();
      } finally {
        done.countDown();
      }
      out.accept(input);
    };
    reactor.core.Disposable subscription = OrderedParallel.flatMap(Flux.just(1), task, 1, Schedulers.boundedElastic(),
        r -> released.incrementAndGet()).subscribe();
    assertTrue(started.await(1, TimeUnit.MINUTES));
    subscription.dispose();
    proceed.countDown();
    assertTrue(done.await(1, TimeUnit.MINUTES));
    assertEquals(0, interrupted.get(), "the running task was interrupted by the cancel");
    org.awaitility.Awaitility.await().atMost(java.time.Duration.ofMinutes(1)).until(() -> released.get() == 1);
  }

  @Test
  void aCancelEndsATaskWaitForMemoryWithoutAnInterrupt() throws InterruptedException {
    MemoryManager memory = new MemoryManager();
    memory.setLimit(1 << 20);
    memory.setMaxWait(Duration.ofMinutes(10)); // a wait would outlast the test
    var held = memory.pool("consumer").allocate(1 << 20); // what the consumer holds fills the limit
    for (boolean stripes : new boolean[] {false, true}) {
      AtomicReference<Thread> worker = new AtomicReference<>();
      AtomicReference<Throwable> failure = new AtomicReference<>();
      AtomicBoolean interrupted = new AtomicBoolean();
      CountDownLatch done = new CountDownLatch(1);
      Runnable allocate = () -> {
        worker.set(Thread.currentThread());
        try {
          memory.pool("task").allocate(4096).close();
        } catch (RuntimeException e) {
          failure.set(e);
        } finally {
          interrupted.set(Thread.currentThread().isInterrupted());
          done.countDown();
        }
      };
      Flux<Integer> stage = stripes
          ? OrderedParallel.range(1, (w, n) -> {
            allocate.run();
            return (int) n;
          }, 1, 1, Schedulers.boundedElastic(), r -> { })
          : OrderedParallel.flatMap(Flux.just(1), (Integer input, java.util.function.Consumer<Integer> out) -> {
            allocate.run();
            out.accept(input);
          }, 1, Schedulers.boundedElastic(), r -> { });
      reactor.core.Disposable subscription = stage.subscribe();
      Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> waitsForMemory(worker.get()));
      subscription.dispose();
      assertTrue(done.await(1, TimeUnit.MINUTES), "the wait ended");
      assertThat(failure.get()).as(stripes ? "range" : "flatMap").isInstanceOf(MemoryLimitException.class)
          .hasMessageContaining("the pass was cancelled while it waited for memory");
      assertThat(interrupted).as("interrupted").isFalse();
    }
    held.close();
    memory.checkNoOutstanding();
  }

  private static boolean waitsForMemory(Thread t) {
    return t != null && Arrays.stream(t.getStackTrace()).anyMatch(
        f -> f.getClassName().equals(MemoryManager.class.getName()) && f.getMethodName().equals("await"));
  }
}
