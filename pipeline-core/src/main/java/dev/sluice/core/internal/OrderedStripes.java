package dev.sluice.core.internal;

import dev.sluice.core.internal.metrics.StageMeter;
import dev.sluice.core.spi.WaitCancellation;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.concurrent.atomic.AtomicLongFieldUpdater;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.Consumer;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Operators;
import reactor.core.scheduler.Scheduler;
import reactor.util.context.Context;

/**
 * {@link OrderedParallel#range}: the results for the numbers {@code 0 .. count-1}, worker {@code w}
 * of {@code parallelism} computing the numbers {@code n ≡ w (mod parallelism)} in increasing order,
 * each worker at most {@code ahead} results ahead of the subscriber, emitted in number order.
 *
 * <p>A worker hands a result over through its own ring of {@code ahead} slots: one volatile store,
 * no task or subscription per result. Emission runs on whichever thread finds the next result
 * ready (a worker that just stored it, or the subscriber's thread that requests), so the subscriber
 * needs no thread of its own. A worker whose ring is full ends its run; the drain that takes from
 * that ring schedules it again once half the ring is free, so no thread ever waits on a full ring
 * and a worker that runs ahead is woken once per several results, not once per result.
 *
 * <p>Every result is emitted or released exactly once: each slot is emptied by an atomic
 * {@code getAndSet}, by the drain that emits it, by the sweep after a cancel, an error or a
 * failed task, or by its worker when it stored the result after the stage had ended. No result is
 * emitted after {@code cancel()} returned: the drain takes a result out of its slot, then releases
 * it instead of emitting it when the cancel came meanwhile.
 */
final class OrderedStripes<R> extends Flux<R> {
  private final long count;
  private final OrderedParallel.IndexedTask<? extends R> task;
  private final int parallelism;
  private final int ahead;
  private final Scheduler scheduler;
  private final Consumer<? super R> release;
  private final StageMeter meter;

  OrderedStripes(long count, OrderedParallel.IndexedTask<? extends R> task, int parallelism, int ahead, Scheduler scheduler,
      Consumer<? super R> release, StageMeter meter) {
    this.count = count;
    this.task = task;
    this.parallelism = parallelism;
    this.ahead = ahead;
    this.scheduler = scheduler;
    this.release = release;
    this.meter = meter;
  }

  @Override
  public void subscribe(CoreSubscriber<? super R> actual) {
    Coordinator<R> c = new Coordinator<>(this, actual);
    actual.onSubscribe(c);
    c.drain(); // an empty range completes without demand
  }

  /** A task's failure, stored in the slot of the number it failed on. */
  private record Failure(Throwable error) {}

  private static final class Coordinator<R> implements Subscription {
    private static final AtomicIntegerFieldUpdater<Coordinator> WIP =
        AtomicIntegerFieldUpdater.newUpdater(Coordinator.class, "wip");
    private static final AtomicLongFieldUpdater<Coordinator> REQUESTED =
        AtomicLongFieldUpdater.newUpdater(Coordinator.class, "requested");
    private static final AtomicIntegerFieldUpdater<Coordinator> STARTED =
        AtomicIntegerFieldUpdater.newUpdater(Coordinator.class, "started");

    private static final int RUNNING = 0;
    private static final int SUSPENDED = 1;

    private final OrderedStripes<R> parent;
    private final CoreSubscriber<? super R> actual;
    private final int workers;
    private final int ahead;
    /** Per worker, its ring of results: the result for number n sits in ring n % workers, slot (n / workers) % ahead. */
    private final AtomicReferenceArray<Object>[] rings;
    /** Per worker, RUNNING (scheduled or running) or SUSPENDED (its ring was full when it stopped). */
    private final AtomicIntegerArray state;
    /** Per worker, k of its next number {@code w + k * workers}; written only by the worker's current run. */
    private final long[] nextK;

    volatile int wip;
    volatile long requested;
    volatile int started;
    /** Set once: the subscriber cancelled, or the stage completed or failed; workers stop. */
    volatile boolean stopped;
    /** Current while a worker runs: cancelled when the stage stops, it ends a worker's wait for pooled memory. */
    final WaitCancellation waits = new WaitCancellation();
    /** Set once when a worker could not be scheduled; the drain ends the stage with it. */
    volatile Throwable rejected;
    /**
     * The thread handing a result to the subscriber, or null. Written before the drain's last look at
     * {@link #stopped}, read by {@link #cancel} after setting it: either the drain sees the cancel
     * and releases the result, or the cancel sees the emission and waits for it, so no result reaches
     * the subscriber after its cancel returned (operators such as {@code concatMap} drop, without
     * discarding, a value that arrives after their cancel).
     */
    volatile Thread emitter;
    /** The next number to emit; read and written only by the drain that holds {@link #wip}. */
    private long next;

    @SuppressWarnings("unchecked")
    Coordinator(OrderedStripes<R> parent, CoreSubscriber<? super R> actual) {
      this.parent = parent;
      this.actual = actual;
      this.workers = (int) Math.max(1, Math.min(parent.parallelism, parent.count));
      this.ahead = parent.ahead;
      this.rings = new AtomicReferenceArray[workers];
      for (int w = 0; w < workers; w++) {
        rings[w] = new AtomicReferenceArray<>(ahead);
      }
      this.state = new AtomicIntegerArray(workers);
      this.nextK = new long[workers];
    }

    @Override
    public void request(long n) {
      if (!Operators.validate(n)) {
        return;
      }
      Operators.addCap(REQUESTED, this, n);
      if (started == 0 && STARTED.compareAndSet(this, 0, 1) && parent.count > 0) {
        if (parent.meter != null) {
          parent.meter.workers(workers);
        }
        for (int w = 0; w < workers && rejected == null; w++) {
          schedule(w);
        }
      }
      drain();
    }

    /**
     * Stops the stage. When it returns, no result will be emitted any more: a cancel from another
     * thread than the one emitting waits for the emission under way to return, and every result not
     * emitted is released (now, or by its worker when it is stored later).
     */
    @Override
    public void cancel() {
      stopped = true;
      waits.cancel();
      Thread self = Thread.currentThread();
      for (int spins = 0; emitter != null && emitter != self; spins++) {
        if (spins < 100) {
          Thread.onSpinWait();
        } else {
          Thread.yield();
        }
      }
      drain();
    }

    /**
     * Worker {@code w}'s run: its next numbers in order, each stored in its ring, until its ring is
     * full (it suspends: the drain that frees a slot schedules it again), its numbers end or the stage
     * ends. A worker never blocks a thread, so any scheduler serves, however few its threads.
     */
    private void work(int w) {
      AtomicReferenceArray<Object> ring = rings[w];
      StageMeter meter = parent.meter != null && parent.meter.recordsWork() ? parent.meter : null;
      for (;;) {
        long k = nextK[w];
        long n = w + k * workers;
        if (n >= parent.count || stopped) {
          return;
        }
        int slot = (int) (k % ahead);
        if (ring.get(slot) != null) {
          state.set(w, SUSPENDED);
          // the drain frees a slot, then resumes a suspended worker: one of the two sees the other
          if (ring.get(slot) == null && state.compareAndSet(w, SUSPENDED, RUNNING)) {
            continue;
          }
          return;
        }
        long start = meter != null ? System.nanoTime() : 0L;
        Object result;
        try {
          result = Objects.requireNonNull(parent.task.run(w, n), "a task produced a null result");
        } catch (Throwable e) {
          result = new Failure(Fatal.signalable(e, null));
        }
        if (meter != null) {
          meter.workerTime(System.nanoTime() - start);
        }
        nextK[w] = k + 1;
        ring.set(slot, result);
        if (stopped) { // the stage ended meanwhile: the sweep may have passed this slot already
          release(ring.getAndSet(slot, null));
          return;
        }
        drain();
        if (result instanceof Failure) {
          return;
        }
      }
    }

    /**
     * Schedules worker {@code w} again if it suspended on a full ring and the subscriber has taken
     * enough of its results: called after the drain took the one that makes {@code consumed} of them.
     * A suspended worker resumes once at most half of its ring is still waiting, not at the first
     * free slot: a worker that runs ahead then fills several slots per wake-up instead of being
     * scheduled once per result. It cannot stall the drain: its waiting results are ready, and the
     * drain takes them in order down to the mark.
     */
    private void resume(int w, long consumed) {
      // nextK is read after the volatile read of SUSPENDED, which its run wrote after nextK
      if (state.get(w) == SUSPENDED && nextK[w] - consumed <= ahead / 2 && state.compareAndSet(w, SUSPENDED, RUNNING)) {
        schedule(w);
      }
    }

    private void schedule(int w) {
      try {
        parent.scheduler.schedule(() -> waits.run(() -> work(w)));
      } catch (Throwable e) { // a rejected task: the stage fails instead of waiting for it
        rejected = Operators.onRejectedExecution(e, actual.currentContext());
        drain();
      }
    }

    void drain() {
      if (WIP.getAndIncrement(this) != 0) {
        return;
      }
      int missed = 1;
      for (;;) {
        long r = requested;
        long e = 0;
        for (;;) {
          if (rejected != null) {
            fail(rejected);
            return;
          }
          if (stopped) {
            sweep();
            return; // wip stays taken: nothing is emitted any more
          }
          if (next == parent.count) {
            stopped = true;
            actual.onComplete();
            return;
          }
          if (e == r) {
            break;
          }
          int w = (int) (next % workers);
          Object v = rings[w].getAndSet((int) ((next / workers) % ahead), null);
          if (v == null) {
            break;
          }
          resume(w, next / workers + 1);
          if (v instanceof Failure f) {
            fail(f.error());
            return;
          }
          next++;
          e++;
          emitter = Thread.currentThread();
          if (stopped) { // a cancel from another thread: it did not wait for this result, so it is not emitted
            emitter = null;
            release(v);
            sweep();
            return;
          }
          @SuppressWarnings("unchecked")
          R result = (R) v;
          try {
            actual.onNext(result);
          } finally {
            emitter = null;
          }
        }
        if (e != 0 && r != Long.MAX_VALUE) {
          REQUESTED.addAndGet(this, -e);
        }
        missed = WIP.addAndGet(this, -missed);
        if (missed == 0) {
          return;
        }
      }
    }

    /** Ends the stage with {@code error} (called by the drain): the workers stop, what they produced is released. */
    private void fail(Throwable error) {
      stopped = true;
      waits.cancel();
      sweep();
      actual.onError(error);
    }

    /** Releases every result waiting in a ring. */
    private void sweep() {
      for (AtomicReferenceArray<Object> ring : rings) {
        for (int i = 0; i < ahead; i++) {
          release(ring.getAndSet(i, null));
        }
      }
    }

    @SuppressWarnings("unchecked")
    private void release(Object v) {
      if (v != null && !(v instanceof Failure)) {
        try {
          parent.release.accept((R) v);
        } catch (Throwable e) {
          Operators.onErrorDropped(e, currentContext());
        }
      }
    }

    private Context currentContext() {
      return actual.currentContext();
    }
  }
}
