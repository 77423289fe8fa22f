package dev.sluice.operators.internal;

import dev.sluice.core.internal.TrackedScheduler;
import dev.sluice.core.spi.WaitCancellation;
import java.util.Objects;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicLongFieldUpdater;
import java.util.concurrent.atomic.AtomicReferenceFieldUpdater;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Scannable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.FluxOperator;
import reactor.core.publisher.Operators;
import reactor.core.scheduler.Scheduler;
import reactor.util.context.Context;

/**
 * Reactor's {@code subscribeOn} without the interrupt: subscribes the source on a worker of the
 * scheduler and passes every request to it from that worker, but a cancel never interrupts the task
 * the worker runs. Reactor's {@code subscribeOn} disposes its worker on cancel, and a worker of
 * {@code boundedElastic} cancels its running task with an interrupt: a {@code FileChannel} read or
 * map under way then fails with {@code ClosedByInterruptException} and the channel is closed, so a
 * source that keeps its channel open across passes fails on every later pass.
 *
 * <p>The source's work (its subscription and every request) runs within a {@link WaitCancellation}
 * that the cancel triggers, so a wait of the source for pooled memory ends without an interrupt.
 *
 * <p><b>Reactive Streams semantics.</b> Emits what the source emits, on the source's thread;
 * backpressure and completion are the source's. Cancel cancels the source's subscription and the
 * wait cancellation, and disposes the worker once the task it runs (a read under way, say) has
 * returned; that task finishes or stops at its next signal.
 *
 * <p>Discard support: an element the source delivers after the cancel goes to
 * {@link Operators#onDiscard}.
 *
 * @param <T> the elements
 */
final class FluxSubscribeOnUninterrupted<T> extends FluxOperator<T, T> {
  private final Scheduler scheduler;

  /**
   * @param scheduler where the source is subscribed and requested from
   */
  FluxSubscribeOnUninterrupted(Flux<? extends T> source, Scheduler scheduler) {
    super(source);
    this.scheduler = TrackedScheduler.of(Objects.requireNonNull(scheduler, "scheduler"));
  }

  @Override
  public void subscribe(CoreSubscriber<? super T> actual) {
    Scheduler.Worker worker;
    try {
      worker = scheduler.createWorker();
    } catch (Throwable e) {
      Operators.error(actual, Operators.onOperatorError(e, actual.currentContext()));
      return;
    }
    SubscribeOnUninterruptedSubscriber<T> parent = new SubscribeOnUninterruptedSubscriber<>(actual, worker);
    actual.onSubscribe(parent);
    try {
      worker.schedule(() -> parent.run(source));
    } catch (RejectedExecutionException e) {
      if (!parent.cancelled) {
        parent.onError(Operators.onRejectedExecution(e, parent, null, null, actual.currentContext()));
      }
    }
  }

  @Override
  public Object scanUnsafe(Attr key) {
    if (key == Attr.RUN_ON) {
      return scheduler;
    }
    if (key == Attr.RUN_STYLE) {
      return Attr.RunStyle.ASYNC;
    }
    return super.scanUnsafe(key);
  }

  static final class SubscribeOnUninterruptedSubscriber<T> implements CoreSubscriber<T>, Subscription, Scannable {
    final CoreSubscriber<? super T> actual;
    final Context ctx;
    final Scheduler.Worker worker;
    /** Current while the source's work runs on the worker: the cancel ends its waits for pooled memory. */
    final WaitCancellation waits = new WaitCancellation();

    volatile Thread workerThread;
    volatile boolean cancelled;
    volatile boolean done;

    volatile Subscription upstream;
    @SuppressWarnings("rawtypes")
    static final AtomicReferenceFieldUpdater<SubscribeOnUninterruptedSubscriber, Subscription> UPSTREAM =
        AtomicReferenceFieldUpdater.newUpdater(SubscribeOnUninterruptedSubscriber.class, Subscription.class,
            "upstream");

    /** Demand requested before the source's subscription arrived. */
    volatile long pending;
    @SuppressWarnings("rawtypes")
    static final AtomicLongFieldUpdater<SubscribeOnUninterruptedSubscriber> PENDING =
        AtomicLongFieldUpdater.newUpdater(SubscribeOnUninterruptedSubscriber.class, "pending");

    SubscribeOnUninterruptedSubscriber(CoreSubscriber<? super T> actual, Scheduler.Worker worker) {
      this.actual = actual;
      this.ctx = actual.currentContext();
      this.worker = worker;
    }

    /** Subscribes the source; on the worker. */
    void run(org.reactivestreams.Publisher<? extends T> source) {
      workerThread = Thread.currentThread();
      if (cancelled) {
        return;
      }
      waits.run(() -> source.subscribe(this));
    }

    @Override
    public Context currentContext() {
      return ctx;
    }

    @Override
    public void onSubscribe(Subscription s) {
      if (Operators.setOnce(UPSTREAM, this, s)) {
        long r = PENDING.getAndSet(this, 0L);
        if (r != 0L) {
          requestUpstream(r, s);
        }
      }
    }

    @Override
    public void onNext(T t) {
      if (cancelled) {
        Operators.onDiscard(t, ctx);
        return;
      }
      actual.onNext(t);
    }

    @Override
    public void onError(Throwable t) {
      if (done) {
        Operators.onErrorDropped(t, ctx);
        return;
      }
      done = true;
      actual.onError(t);
      disposeWorkerWhenIdle();
    }

    @Override
    public void onComplete() {
      if (done) {
        return;
      }
      done = true;
      actual.onComplete();
      disposeWorkerWhenIdle();
    }

    @Override
    public void request(long n) {
      if (!Operators.validate(n)) {
        return;
      }
      Subscription s = upstream;
      if (s != null) {
        requestUpstream(n, s);
        return;
      }
      Operators.addCap(PENDING, this, n);
      s = upstream;
      if (s != null) {
        long r = PENDING.getAndSet(this, 0L);
        if (r != 0L) {
          requestUpstream(r, s);
        }
      }
    }

    /** Passes {@code n} to the source from the worker: directly when on it, else as a task within the cancellation. */
    void requestUpstream(long n, Subscription s) {
      if (Thread.currentThread() == workerThread) {
        s.request(n);
        return;
      }
      try {
        worker.schedule(() -> waits.run(() -> s.request(n)));
      } catch (RejectedExecutionException e) {
        if (!cancelled && !done) {
          onError(Operators.onRejectedExecution(e, this, null, null, ctx));
        }
      }
    }

    @Override
    public void cancel() {
      if (cancelled) {
        return;
      }
      cancelled = true;
      waits.cancel();
      Operators.terminate(UPSTREAM, this);
      disposeWorkerWhenIdle();
    }

    /**
     * Disposes the worker after the task it runs now, which is not interrupted: disposing it from
     * another thread would interrupt a read of the source under way.
     */
    void disposeWorkerWhenIdle() {
      TrackedScheduler.disposeWhenIdle(worker);
    }

    @Override
    public Object scanUnsafe(Attr key) {
      if (key == Attr.PARENT) {
        return upstream;
      }
      if (key == Attr.ACTUAL) {
        return actual;
      }
      if (key == Attr.CANCELLED) {
        return cancelled;
      }
      if (key == Attr.TERMINATED) {
        return done;
      }
      if (key == Attr.RUN_ON) {
        return worker;
      }
      if (key == Attr.RUN_STYLE) {
        return Attr.RunStyle.ASYNC;
      }
      return null;
    }
  }
}
