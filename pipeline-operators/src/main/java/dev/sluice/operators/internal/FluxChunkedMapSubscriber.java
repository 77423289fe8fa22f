package dev.sluice.operators.internal;

import dev.sluice.core.internal.Fatal;
import dev.sluice.core.internal.OrderedChunks;
import java.util.function.Function;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Scannable;
import reactor.core.publisher.Operators;
import reactor.core.scheduler.Scheduler;
import reactor.util.context.Context;

/**
 * The per-subscription state of {@link FluxChunkedMap}: the filling chunk (shared with a stopping
 * thread by a Dekker handshake), the upstream's requests and the tuner; complete chunks go to the
 * {@link OrderedChunks} engine, which maps them and emits their results. The operator's javadoc
 * states the contract.
 *
 * @param <T> input type
 * @param <R> output type
 */
final class FluxChunkedMapSubscriber<T, R> extends OrderedChunks<R> implements CoreSubscriber<T>, Scannable {
  final Function<? super T, ? extends R> fn;
  final FluxChunkedMapTuner tuner;

  Subscription upstream;

  // The filling chunk: written by onNext (and onComplete/onError), read by a stopping thread.
  Object[] filling;
  volatile int fillCount;
  volatile int fillCapacity;
  long fillStarted;
  /** Guarded by {@code fillLock}: elements of {@code filling} already discarded after a stop. */
  int fillDiscarded;
  final Object fillLock = new Object();

  /** Elements requested from the upstream; drain only. */
  long requestedUpstream;

  FluxChunkedMapSubscriber(CoreSubscriber<? super R> actual, Function<? super T, ? extends R> fn, int parallel,
      boolean deterministic, Scheduler scheduler, FluxChunkedMapTuner tuner) {
    super(actual, parallel, deterministic, scheduler, tuner.adaptive);
    this.fn = fn;
    this.tuner = tuner;
  }

  @Override
  public Context currentContext() {
    return context();
  }

  @Override
  public void onSubscribe(Subscription s) {
    if (Operators.validate(upstream, s)) {
      upstream = s;
      actualSubscriber().onSubscribe(this);
      drain(); // requests the first chunks ahead of the downstream, as tf.data prefetches
    }
  }

  @Override
  public void onNext(T t) {
    if (isInputDone()) {
      Operators.onNextDropped(t, context());
      return;
    }
    if (stopped) {
      Operators.onDiscard(t, context()); // after a stop the filling chunk may be full and is never handed on
      return;
    }
    Object[] f = filling;
    int n = fillCount;
    if (f == null) {
      f = new Object[tuner.chunkSize()];
      filling = f;
      fillCapacity = f.length;
      fillStarted = tuner.adaptive ? System.nanoTime() : 0L;
    }
    f[n] = t;
    fillCount = n + 1; // volatile: publishes the element before stopped is read (Dekker with the stop)
    if (stopped) {
      discardFilling();
      return;
    }
    if (n + 1 == f.length) {
      handOn();
    }
  }

  /** Hands the filling chunk to the engine (full, or the last one at the end); nothing after a stop. */
  void handOn() {
    Chunk c;
    synchronized (fillLock) {
      int n = fillCount;
      if (stopped || n == 0) {
        return;
      }
      c = new Chunk(filling, n, tuner.adaptive ? System.nanoTime() - fillStarted : 0L);
      filling = null;
      fillCount = 0;
      fillDiscarded = 0;
    }
    accept(c, tuner.mapsInline(c.size()));
  }

  /** Maps the chunk's elements in place; an element skipped under onErrorContinue leaves no result. */
  @Override
  @SuppressWarnings("unchecked")
  protected int map(Chunk c) {
    Context ctx = context();
    Object[] in = c.items();
    int size = c.size();
    int i = 0;
    int k = 0;
    for (; i < size; i++) {
      Object r;
      try {
        r = fn.apply((T) in[i]);
        if (r == null) {
          throw new NullPointerException("The mapper returned a null value."); // as Flux.map says it
        }
      } catch (RuntimeException | Error e) {
        Throwable stop = e instanceof RuntimeException ? Operators.onNextError(in[i], e, ctx) : e;
        in[i] = null; // element i went to fn
        if (stop == null) {
          continue; // onErrorContinue downstream dropped it
        }
        c.fail(Fatal.signalable(stop, "map")); // a JVM error too: Reactor would rethrow it on this worker
        for (int j = i + 1; j < size; j++) {
          Operators.onDiscard(in[j], ctx);
          in[j] = null;
        }
        break;
      }
      in[k++] = r;
    }
    for (int j = k; j < i; j++) {
      in[j] = null;
    }
    return k;
  }

  @Override
  protected void mapped(Chunk c, long nanos, boolean inline) {
    if (tuner.adaptive) {
      tuner.observe(c.size(), c.fillNanos(), nanos, inline);
    }
  }

  @Override
  public void onError(Throwable t) {
    if (isInputDone()) {
      Operators.onErrorDropped(t, context());
      return;
    }
    handOn();
    inputDone(t);
  }

  @Override
  public void onComplete() {
    if (isInputDone()) {
      return;
    }
    handOn();
    inputDone(null);
  }

  /** No more chunks: cancels the upstream and discards the filling chunk (Dekker with onNext). */
  @Override
  protected void onStop() {
    upstream.cancel();
    discardFilling();
  }

  /** Discards the elements of the filling chunk that nobody discarded yet. */
  void discardFilling() {
    synchronized (fillLock) {
      int n = fillCount; // volatile read first: it makes onNext's plain write of filling visible
      Object[] f = filling;
      if (f == null) {
        return;
      }
      for (int j = fillDiscarded; j < n; j++) {
        Operators.onDiscard(f[j], context());
        f[j] = null;
      }
      fillDiscarded = n;
    }
  }

  /**
   * Keeps {@code (parallel + 1) × chunkSize} elements plus the filling chunk's capacity requested
   * and not yet released (the capacity, not the current chunk size: a chunk started before the
   * size shrank must still fill).
   */
  @Override
  protected void replenish(long released) {
    long budget = (long) (parallelism() + 1) * tuner.chunkSize() + Math.max(fillCapacity, tuner.chunkSize());
    long want = budget - (requestedUpstream - released);
    // top up in halves of a chunk (or all of it at first), not per element
    if (want > 0 && (requestedUpstream == 0 || want >= Math.max(1, tuner.chunkSize() / 2))) {
      requestedUpstream += want;
      upstream.request(want);
    }
  }

  @Override
  public Object scanUnsafe(Attr key) {
    if (key == Attr.PARENT) {
      return upstream;
    }
    if (key == Attr.ACTUAL) {
      return actualSubscriber();
    }
    if (key == Attr.CANCELLED) {
      return isCancelled();
    }
    if (key == Attr.TERMINATED) {
      return isTerminated();
    }
    if (key == Attr.REQUESTED_FROM_DOWNSTREAM) {
      return requested();
    }
    if (key == Attr.RUN_STYLE) {
      return Attr.RunStyle.ASYNC;
    }
    return null;
  }
}
