package dev.sluice.core.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.core.testing.NoLeaks;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.test.scheduler.VirtualTimeScheduler;

/** A pass's tasks are counted from scheduling until they return or are dropped, on every path. */
class TrackedSchedulerTest {
  private static final long WAIT = Duration.ofSeconds(10).toNanos();

  private final Scheduler single = Schedulers.newSingle("tracked-test");
  private final Scheduler tracked = TrackedScheduler.of(single);
  private final PassTasks pass = new PassTasks();

  @AfterEach
  void dispose() {
    single.dispose();
  }

  /** Runs {@code action} with the pass current, as the iterator does around its calls. */
  private <T> T inPass(java.util.function.Supplier<T> action) {
    PassTasks previous = pass.enterCall();
    try {
      return action.get();
    } finally {
      pass.exitCall(previous);
    }
  }

  private static void await(CountDownLatch latch) throws InterruptedException {
    assertThat(latch.await(10, TimeUnit.SECONDS)).as("latch").isTrue();
  }

  @Test
  void aWorkerDisposedWhenIdleLetsItsRunningTaskFinishUninterrupted() throws Exception {
    Scheduler elastic = Schedulers.newBoundedElastic(1, 10, "tracked-dispose-test");
    try {
      Scheduler.Worker worker = elastic.createWorker();
      CountDownLatch started = new CountDownLatch(1);
      CountDownLatch release = new CountDownLatch(1);
      CountDownLatch finished = new CountDownLatch(1);
      AtomicBoolean interrupted = new AtomicBoolean();
      worker.schedule(() -> {
        started.countDown();
        try {
          release.await();
        } catch (InterruptedException e) {
          interrupted.set(true);
        }
        finished.countDown();
      });
      await(started);
      TrackedScheduler.disposeWhenIdle(worker);
      TrackedScheduler.disposeWhenIdle(worker); // a second call (a cancel after a terminal signal) is harmless
      assertThat(worker.isDisposed()).as("disposed while its task runs").isFalse();
      release.countDown();
      await(finished);
      assertThat(interrupted).as("the running task was interrupted").isFalse();
      Awaitility.await().atMost(Duration.ofSeconds(10)).until(worker::isDisposed);
      TrackedScheduler.disposeWhenIdle(worker); // disposed already: nothing to do, nothing thrown
      assertThatThrownBy(() -> worker.schedule(() -> { })).isInstanceOf(RejectedExecutionException.class);
    } finally {
      elastic.dispose();
    }
  }

  @Test
  void aTaskCountsUntilItReturnsAndTheTasksItSchedulesInheritThePass() throws Exception {
    CountDownLatch release = new CountDownLatch(1);
    AtomicReference<PassTasks> seenByChild = new AtomicReference<>();
    CountDownLatch childRan = new CountDownLatch(1);
    inPass(() -> tracked.schedule(() -> {
      try {
        release.await();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      tracked.schedule(() -> { // scheduled by a task: belongs to the pass too
        seenByChild.set(PassTasks.current());
        childRan.countDown();
      });
    }));
    assertThat(pass.active()).isEqualTo(1);
    assertThat(pass.awaitIdle(System.nanoTime())).isFalse(); // the deadline has passed: not idle
    release.countDown();
    assertThat(pass.awaitIdle(System.nanoTime() + WAIT)).isTrue();
    await(childRan);
    assertThat(seenByChild.get()).isSameAs(pass);
    assertThat(PassTasks.current()).isNull();
  }

  @Test
  void aTaskDisposedBeforeItStartsNeverRunsAndNoLongerCounts() throws Exception {
    CountDownLatch blocker = new CountDownLatch(1);
    CountDownLatch blocking = new CountDownLatch(1);
    single.schedule(() -> { // not in a pass: occupies the only thread
      blocking.countDown();
      try {
        blocker.await();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    });
    await(blocking);
    AtomicBoolean ran = new AtomicBoolean();
    Disposable d = inPass(() -> tracked.schedule(() -> ran.set(true)));
    assertThat(pass.active()).isEqualTo(1);
    d.dispose();
    assertThat(d.isDisposed()).isTrue();
    assertThat(pass.active()).isZero();
    CountDownLatch after = new CountDownLatch(1);
    blocker.countDown();
    single.schedule(after::countDown);
    await(after); // the executor went past the place of the disposed task
    assertThat(ran).isFalse();
  }

  @Test
  void disposingAWorkerDropsItsPendingTasksAndRejectsNewOnes() throws Exception {
    Scheduler.Worker worker = tracked.createWorker();
    CountDownLatch blocker = new CountDownLatch(1);
    CountDownLatch blocking = new CountDownLatch(1);
    AtomicInteger ran = new AtomicInteger();
    inPass(() -> {
      worker.schedule(() -> {
        blocking.countDown();
        try {
          blocker.await();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt(); // the dispose interrupts the running task
        }
      });
      worker.schedule(ran::incrementAndGet);
      worker.schedule(ran::incrementAndGet);
      return null;
    });
    await(blocking);
    assertThat(pass.active()).isEqualTo(3);
    worker.dispose();
    assertThat(pass.awaitIdle(System.nanoTime() + WAIT)).isTrue(); // the running one returned, the others dropped
    assertThatThrownBy(() -> inPass(() -> worker.schedule(ran::incrementAndGet)))
        .isInstanceOf(RejectedExecutionException.class);
    assertThat(pass.active()).isZero();
    assertThat(ran).hasValue(0);
  }

  /**
   * Reactor's {@code subscribeOn} ignores a rejected request only when the worker says it is
   * disposed; a worker in the middle of its dispose (its pass tasks dropped, the worker it decorates
   * not yet) must already say so, or the rejection is thrown out of the drain of the operator that
   * asked, and the pass waits forever for a signal that never comes.
   */
  @Test
  void aWorkerThatRejectsTasksWhileItIsDisposedSaysItIsDisposed() {
    Scheduler.Worker real = single.createWorker();
    AtomicReference<Scheduler.Worker> trackedWorker = new AtomicReference<>();
    AtomicReference<Boolean> saidDisposed = new AtomicReference<>();
    AtomicReference<Throwable> scheduled = new AtomicReference<>();
    Scheduler.Worker midDispose = new Scheduler.Worker() {
      @Override
      public Disposable schedule(Runnable task) {
        return real.schedule(task);
      }

      @Override
      public void dispose() { // the tracked worker has dropped its pass tasks, this one is not disposed yet
        try {
          inPass(() -> trackedWorker.get().schedule(() -> { }));
        } catch (RuntimeException e) {
          scheduled.set(e);
        }
        saidDisposed.set(trackedWorker.get().isDisposed());
        real.dispose();
      }

      @Override
      public boolean isDisposed() {
        return real.isDisposed();
      }
    };
    Scheduler delegate = new Scheduler() {
      @Override
      public Disposable schedule(Runnable task) {
        return single.schedule(task);
      }

      @Override
      public Worker createWorker() {
        return midDispose;
      }
    };
    trackedWorker.set(TrackedScheduler.of(delegate).createWorker());
    trackedWorker.get().dispose();
    assertThat(scheduled.get()).isInstanceOf(RejectedExecutionException.class);
    assertThat(saidDisposed.get()).isTrue();
    assertThat(pass.active()).isZero();
  }

  @Test
  void aRejectedTaskDoesNotCount() {
    single.dispose();
    assertThatThrownBy(() -> inPass(() -> tracked.schedule(() -> { }))).isInstanceOf(RejectedExecutionException.class);
    assertThat(pass.active()).isZero();
  }

  @Test
  void delayedAndPeriodicTasksCountUntilTheyRunOrAreDisposed() throws Exception {
    VirtualTimeScheduler time = VirtualTimeScheduler.create();
    Scheduler virtual = TrackedScheduler.of(time);
    AtomicInteger delayed = new AtomicInteger();
    AtomicInteger periodic = new AtomicInteger();
    Disposable every = inPass(() -> {
      virtual.schedule(delayed::incrementAndGet, 10, TimeUnit.SECONDS);
      return virtual.createWorker().schedulePeriodically(periodic::incrementAndGet, 1, 1, TimeUnit.SECONDS);
    });
    assertThat(pass.active()).isEqualTo(2);
    time.advanceTimeBy(Duration.ofSeconds(3));
    assertThat(periodic).hasValue(3);
    assertThat(pass.active()).isEqualTo(2);
    time.advanceTimeBy(Duration.ofSeconds(7));
    assertThat(delayed).hasValue(1);
    assertThat(pass.active()).isEqualTo(1); // the periodic task belongs to the pass until it is disposed
    every.dispose();
    assertThat(pass.awaitIdle(System.nanoTime() + WAIT)).isTrue();
    time.advanceTimeBy(Duration.ofSeconds(5));
    assertThat(periodic).hasValue(10);
    time.dispose();
  }

  @Test
  void withoutAPassTasksGoToTheSchedulerAsTheyAre() throws Exception {
    CountDownLatch ran = new CountDownLatch(1);
    AtomicReference<PassTasks> seen = new AtomicReference<>(pass);
    tracked.schedule(() -> {
      seen.set(PassTasks.current());
      ran.countDown();
    });
    await(ran);
    assertThat(seen.get()).isNull();
    assertThat(pass.active()).isZero();
    assertThat(TrackedScheduler.of(tracked)).isSameAs(tracked);
  }

  @Test
  void reactorsOwnOperatorsOnATrackedSchedulerAreCountedUntilTheCancelledPassStops() throws Exception {
    Scheduler elastic = TrackedScheduler.of(Schedulers.boundedElastic());
    Scheduler parallel = TrackedScheduler.of(Schedulers.parallel());
    for (int round = 0; round < 100; round++) {
      CountDownLatch first = new CountDownLatch(1);
      Disposable d = inPass(() -> Flux.range(0, 1_000_000).subscribeOn(elastic).publishOn(parallel, 8)
          .subscribe(i -> first.countDown()));
      await(first);
      inPass(() -> {
        d.dispose();
        return null;
      });
      assertThat(pass.awaitIdle(System.nanoTime() + WAIT)).as("round %d: %s", round, pass).isTrue();
    }
  }

  @Test
  void theTestGuardFlagsATaskOfAPassOnAnUntrackedScheduler() throws Exception {
    NoLeaks guard = new NoLeaks();
    guard.beforeEach(null);
    CountDownLatch ran = new CountDownLatch(2);
    inPass(() -> tracked.schedule(ran::countDown));
    guard.afterEach(null); // tracked: fine
    guard.beforeEach(null);
    inPass(() -> single.schedule(ran::countDown));
    assertThatThrownBy(() -> guard.afterEach(null)).isInstanceOf(AssertionError.class)
        .hasMessageContaining("do not count them")
        .cause().hasMessageContaining("without TrackedScheduler");
    await(ran);
  }
}
