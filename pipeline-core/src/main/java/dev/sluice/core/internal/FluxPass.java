package dev.sluice.core.internal;

import java.util.Objects;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Scannable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Operators;
import reactor.util.context.Context;

/**
 * The boundary of one pass of a pipeline: everything the pass runs, on the subscriber's thread or on
 * a scheduler, ends in a signal to the subscriber, never in a throwable lost on a worker thread.
 *
 * <p>Reactor rethrows JVM errors ({@link VirtualMachineError}, {@link LinkageError},
 * {@link ThreadDeath}) where it catches them instead of signalling them. Thrown on a worker, such an
 * error ends the worker's task and the subscriber waits forever; thrown in a call of the subscriber
 * (subscribe, request), it escapes that call. The boundary closes both ways out:
 * <ul>
 *   <li>it subscribes, requests and cancels with a {@link PassTasks} current (the pass already
 *       current on the thread, as under {@code PipelineIterator}, or one of its own), so that every
 *       task the pass's stages schedule through a {@link TrackedScheduler} belongs to the pass, and
 *       a task that throws hands the throwable to the pass ({@link PassTasks#fail}), which routes it
 *       here;</li>
 *   <li>a throwable out of the upstream's {@code subscribe} or {@code request} is caught here.</li>
 * </ul>
 * Either way the boundary cancels the upstream and signals {@code onError} (a JVM error wrapped in
 * a {@link dev.sluice.core.FatalErrorException}), after the elements already on their way. Stages
 * that buffer release what they hold on that cancel; a stage whose own state the throwable cut
 * through may not, which is why sources and operators also turn JVM errors of their own work into
 * error signals where they arise ({@link Fatal}), so that the boundary is the safety net.
 *
 * <p><b>Reactive Streams semantics.</b> Passes every signal through unchanged (a JVM error in an
 * upstream {@code onError} is wrapped). Elements that arrive after the boundary has failed go to
 * the discard hook.
 *
 * @param <T> the element type
 */
public final class FluxPass<T> extends Flux<T> implements Scannable {
  private final Flux<? extends T> source;

  private FluxPass(Flux<? extends T> source) {
    this.source = source;
  }

  /** {@code source} behind the boundary of a pass. */
  public static <T> Flux<T> of(Flux<? extends T> source) {
    return new FluxPass<>(Objects.requireNonNull(source, "source"));
  }

  @Override
  public void subscribe(CoreSubscriber<? super T> actual) {
    PassTasks current = PassTasks.current();
    PassTasks pass = current != null ? current : new PassTasks();
    PassSubscriber<T> s = new PassSubscriber<>(actual, pass);
    pass.addRoute(s);
    PassTasks previous = pass.enterCall();
    try {
      source.subscribe(s);
    } catch (Throwable e) {
      s.fail(e);
    } finally {
      pass.exitCall(previous);
    }
  }

  @Override
  public Object scanUnsafe(Attr key) {
    return key == Attr.PARENT ? source : key == Attr.RUN_STYLE ? Attr.RunStyle.SYNC : null;
  }

  static final class PassSubscriber<T> implements CoreSubscriber<T>, Subscription, PassTasks.FailureRoute {
    private final CoreSubscriber<? super T> actual;
    private final CoreSubscriber<? super T> serial; // onNext from the upstream and onError from a failed task may race
    private final PassTasks pass;
    private volatile Subscription upstream;
    private volatile int done;
    @SuppressWarnings("rawtypes")
    private static final AtomicIntegerFieldUpdater<PassSubscriber> DONE =
        AtomicIntegerFieldUpdater.newUpdater(PassSubscriber.class, "done");
    private volatile int subscribed;
    @SuppressWarnings("rawtypes")
    private static final AtomicIntegerFieldUpdater<PassSubscriber> SUBSCRIBED =
        AtomicIntegerFieldUpdater.newUpdater(PassSubscriber.class, "subscribed");

    PassSubscriber(CoreSubscriber<? super T> actual, PassTasks pass) {
      this.actual = actual;
      this.serial = Operators.serialize(actual);
      this.pass = pass;
    }

    @Override
    public Context currentContext() {
      return actual.currentContext();
    }

    @Override
    public void onSubscribe(Subscription s) {
      if (Operators.validate(upstream, s)) {
        upstream = s;
        if (SUBSCRIBED.compareAndSet(this, 0, 1)) {
          serial.onSubscribe(this);
        } else {
          s.cancel(); // the boundary failed before the upstream subscribed
        }
      }
    }

    @Override
    public void onNext(T t) {
      if (done != 0) {
        Operators.onDiscard(t, actual.currentContext());
        return;
      }
      serial.onNext(t);
    }

    @Override
    public void onError(Throwable t) {
      if (!DONE.compareAndSet(this, 0, 1)) {
        Operators.onErrorDropped(t, actual.currentContext());
        return;
      }
      pass.removeRoute(this);
      serial.onError(Fatal.signalable(t, null));
    }

    @Override
    public void onComplete() {
      if (DONE.compareAndSet(this, 0, 1)) {
        pass.removeRoute(this);
        serial.onComplete();
      }
    }

    @Override
    public void request(long n) {
      PassTasks previous = pass.enterCall();
      try {
        upstream.request(n);
      } catch (Throwable e) {
        fail(e);
      } finally {
        pass.exitCall(previous);
      }
    }

    @Override
    public void cancel() {
      pass.removeRoute(this);
      DONE.compareAndSet(this, 0, 1);
      cancelUpstream();
    }

    private void cancelUpstream() {
      Subscription s = upstream;
      if (s == null) {
        return;
      }
      PassTasks previous = pass.enterCall();
      try {
        s.cancel();
      } catch (Throwable ignored) {
        // the pass ends anyway; the upstream's own failure to stop is not the subscriber's
      } finally {
        pass.exitCall(previous);
      }
    }

    @Override
    public boolean fail(Throwable error) {
      if (!DONE.compareAndSet(this, 0, 1)) {
        return false;
      }
      pass.removeRoute(this);
      Throwable e = Fatal.signalable(error, "a task of the pass");
      if (SUBSCRIBED.compareAndSet(this, 0, 1)) { // the upstream never subscribed (or is subscribing)
        Operators.error(actual, e);
        return true;
      }
      cancelUpstream();
      serial.onError(e);
      return true;
    }
  }
}
