package dev.sluice.operators.internal;

import dev.sluice.core.internal.Fatal;
import dev.sluice.core.internal.TrackedScheduler;
import java.util.ArrayDeque;
import java.util.Objects;
import java.util.Queue;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.concurrent.atomic.AtomicLongFieldUpdater;
import java.util.concurrent.atomic.AtomicReferenceFieldUpdater;
import java.util.function.Function;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Exceptions;
import reactor.core.Scannable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.FluxOperator;
import reactor.core.publisher.Operators;
import reactor.core.scheduler.Scheduler;
import reactor.util.concurrent.Queues;
import reactor.util.context.Context;

/**
 * tf.data's deterministic {@code interleave(map_func, cycle_length, block_length)}: keeps up to
 * {@code cycleLength} inner publishers open, one per slot of a cycle, and emits {@code blockLength}
 * consecutive elements from each slot in turn. When a slot's inner publisher completes, the cycle
 * moves on and the slot takes the next upstream element. The order is exactly tf.data's sequential
 * order whatever the timing: slots are refilled in the order they emptied, and an element is only
 * taken from the slot the cycle is at.
 *
 * <p>Every open inner publisher prefetches (a bounded queue each); with a {@link Scheduler} each is
 * subscribed on it, so up to {@code cycleLength} inputs are read concurrently; a cancel never
 * interrupts a worker's task ({@code FluxSubscribeOnUninterrupted}).
 *
 * <p>Discard support: on cancel and on error, the elements queued in every slot and the upstream
 * elements not yet opened go to {@link Operators#onDiscard}.
 *
 * @param <T> upstream elements (e.g. file names)
 * @param <R> emitted elements
 */
public final class FluxInterleave<T, R> extends FluxOperator<T, R> {
  private final Function<? super T, ? extends Publisher<? extends R>> mapper;
  private final int cycleLength;
  private final int blockLength;
  private final int prefetch;
  private final Scheduler scheduler;

  /**
   * @param cycleLength inner publishers open at once, &gt; 0
   * @param blockLength consecutive elements per slot, &gt; 0
   * @param prefetch elements each inner publisher produces ahead, &gt; 0
   * @param scheduler where inner publishers are subscribed, or null for the calling thread
   */
  public FluxInterleave(Flux<? extends T> source, Function<? super T, ? extends Publisher<? extends R>> mapper,
      int cycleLength, int blockLength, int prefetch, Scheduler scheduler) {
    super(source);
    this.mapper = Objects.requireNonNull(mapper, "mapper");
    if (cycleLength <= 0) {
      throw new IllegalArgumentException("cycleLength > 0 required but it was " + cycleLength);
    }
    if (blockLength <= 0) {
      throw new IllegalArgumentException("blockLength > 0 required but it was " + blockLength);
    }
    if (prefetch <= 0) {
      throw new IllegalArgumentException("prefetch > 0 required but it was " + prefetch);
    }
    this.cycleLength = cycleLength;
    this.blockLength = blockLength;
    this.prefetch = prefetch;
    this.scheduler = scheduler == null ? null : TrackedScheduler.of(scheduler);
  }

  @Override
  public void subscribe(CoreSubscriber<? super R> actual) {
    source.subscribe(new InterleaveSubscriber<>(actual, mapper, cycleLength, blockLength, prefetch, scheduler));
  }

  @Override
  public Object scanUnsafe(Attr key) {
    if (key == Attr.PREFETCH) {
      return prefetch;
    }
    if (key == Attr.RUN_STYLE) {
      return scheduler == null ? Attr.RunStyle.SYNC : Attr.RunStyle.ASYNC;
    }
    return super.scanUnsafe(key);
  }

  static final class InterleaveSubscriber<T, R> implements CoreSubscriber<T>, Subscription, Scannable {
    final CoreSubscriber<? super R> actual;
    final Context ctx;
    final Function<? super T, ? extends Publisher<? extends R>> mapper;
    final int cycleLength;
    final int blockLength;
    final int prefetch;
    final Scheduler scheduler;
    final Queue<T> inputs;

    Subscription upstream;
    volatile boolean upstreamDone;
    volatile boolean cancelled;
    boolean terminated;

    volatile Throwable error;
    @SuppressWarnings("rawtypes")
    static final AtomicReferenceFieldUpdater<InterleaveSubscriber, Throwable> ERROR =
        AtomicReferenceFieldUpdater.newUpdater(InterleaveSubscriber.class, Throwable.class, "error");

    volatile long requested;
    @SuppressWarnings("rawtypes")
    static final AtomicLongFieldUpdater<InterleaveSubscriber> REQUESTED =
        AtomicLongFieldUpdater.newUpdater(InterleaveSubscriber.class, "requested");

    volatile int wip;
    @SuppressWarnings("rawtypes")
    static final AtomicIntegerFieldUpdater<InterleaveSubscriber> WIP =
        AtomicIntegerFieldUpdater.newUpdater(InterleaveSubscriber.class, "wip");

    // Drain-loop state.
    final InnerSubscriber<R>[] slots;
    final ArrayDeque<Integer> toFill = new ArrayDeque<>();
    long inputsOutstanding;
    int cycleIndex;
    int blockIndex;
    boolean inputsExhausted;

    @SuppressWarnings("unchecked")
    InterleaveSubscriber(CoreSubscriber<? super R> actual, Function<? super T, ? extends Publisher<? extends R>> mapper,
        int cycleLength, int blockLength, int prefetch, Scheduler scheduler) {
      this.actual = actual;
      this.ctx = actual.currentContext();
      this.mapper = mapper;
      this.cycleLength = cycleLength;
      this.blockLength = blockLength;
      this.prefetch = prefetch;
      this.scheduler = scheduler;
      this.inputs = Queues.<T>get(cycleLength).get();
      this.slots = new InnerSubscriber[cycleLength];
      for (int i = 0; i < cycleLength; i++) {
        toFill.add(i);
      }
    }

    @Override
    public Context currentContext() {
      return ctx;
    }

    @Override
    public void onSubscribe(Subscription s) {
      if (Operators.validate(upstream, s)) {
        upstream = s;
        actual.onSubscribe(this);
        drain();
      }
    }

    @Override
    public void onNext(T t) {
      if (upstreamDone) {
        Operators.onNextDropped(t, ctx);
        return;
      }
      if (!inputs.offer(t)) {
        Operators.onDiscard(t, ctx);
        onError(Operators.onOperatorError(upstream,
            new IllegalStateException("interleave: upstream emitted more than requested"), t, ctx));
        return;
      }
      drain();
    }

    @Override
    public void onError(Throwable t) {
      if (upstreamDone) {
        Operators.onErrorDropped(t, ctx);
        return;
      }
      if (!Exceptions.addThrowable(ERROR, this, t)) {
        Operators.onErrorDropped(t, ctx);
      }
      upstreamDone = true;
      drain();
    }

    @Override
    public void onComplete() {
      if (upstreamDone) {
        return;
      }
      upstreamDone = true;
      drain();
    }

    void innerError(Throwable t) {
      if (!Exceptions.addThrowable(ERROR, this, t)) {
        Operators.onErrorDropped(t, ctx);
      }
      drain();
    }

    @Override
    public void request(long n) {
      if (Operators.validate(n)) {
        Operators.addCap(REQUESTED, this, n);
        drain();
      }
    }

    @Override
    public void cancel() {
      if (cancelled) {
        return;
      }
      cancelled = true;
      upstream.cancel();
      drain();
    }

    /** Cancels every inner publisher and discards everything held; drain-loop only. */
    void clear() {
      for (int i = 0; i < slots.length; i++) {
        InnerSubscriber<R> inner = slots[i];
        if (inner != null) {
          inner.cancel();
          Operators.onDiscardQueueWithClear(inner.queue, ctx, null);
          // Keep the cancelled inner in its slot, so elements it still delivers are discarded later.
        }
      }
      Operators.onDiscardQueueWithClear(inputs, ctx, null);
    }

    void advance() {
      cycleIndex = cycleIndex + 1 == cycleLength ? 0 : cycleIndex + 1;
      blockIndex = 0;
    }

    /** Opens upstream elements in the slots waiting for one, in the order the slots emptied. */
    boolean open() {
      while (!toFill.isEmpty()) {
        T in = inputs.poll();
        if (in == null) {
          return true;
        }
        inputsOutstanding--;
        int slot = toFill.poll();
        Publisher<? extends R> p;
        try {
          p = Objects.requireNonNull(mapper.apply(in), "the interleave function returned a null Publisher");
        } catch (Throwable e) {
          Throwable ex = Operators.onOperatorError(upstream, Fatal.signalable(e, "interleave"), in, ctx);
          innerErrorInLoop(ex);
          return false;
        }
        InnerSubscriber<R> inner = new InnerSubscriber<>(this, prefetch);
        slots[slot] = inner;
        if (scheduler != null) {
          new FluxSubscribeOnUninterrupted<R>(Flux.from(p), scheduler).subscribe(inner);
        } else {
          p.subscribe(inner);
        }
      }
      return true;
    }

    void innerErrorInLoop(Throwable e) {
      if (!Exceptions.addThrowable(ERROR, this, e)) {
        Operators.onErrorDropped(e, ctx);
      }
    }

    void requestInputs() {
      if (upstreamDone || cancelled || terminated) {
        return;
      }
      long want = toFill.size() - inputsOutstanding;
      if (want > 0) {
        inputsOutstanding += want;
        upstream.request(want);
      }
    }

    void drain() {
      if (WIP.getAndIncrement(this) != 0) {
        return;
      }
      int missed = 1;
      final CoreSubscriber<? super R> a = actual;
      for (;;) {
        long r = requested;
        long e = 0L;
        for (;;) {
          if (cancelled) {
            clear();
            break;
          }
          if (terminated) {
            clear(); // elements an inner publisher delivers after the error
            break;
          }
          if (error != null) {
            terminated = true;
            upstream.cancel();
            clear();
            a.onError(Exceptions.terminate(ERROR, this));
            break;
          }
          boolean d = upstreamDone;
          if (!open()) {
            continue;
          }
          if (d && inputs.isEmpty() && !inputsExhausted) {
            inputsExhausted = true;
            toFill.clear();
          }
          InnerSubscriber<R> cur = slots[cycleIndex];
          if (cur == null) {
            if (!inputsExhausted) {
              break; // this slot waits for the next upstream element
            }
            boolean any = false;
            for (InnerSubscriber<R> s : slots) {
              if (s != null) {
                any = true;
                break;
              }
            }
            if (!any) {
              terminated = true;
              a.onComplete();
              break;
            }
            advance();
            continue;
          }
          boolean innerDone = cur.done;
          if (cur.queue.isEmpty()) {
            if (innerDone) {
              slots[cycleIndex] = null;
              if (!inputsExhausted) {
                toFill.add(cycleIndex);
              }
              advance();
              requestInputs();
              continue;
            }
            break; // wait for the inner publisher
          }
          if (e == r) {
            break;
          }
          R v = cur.queue.poll();
          a.onNext(v);
          e++;
          cur.consumed();
          if (++blockIndex == blockLength) {
            advance();
          }
        }
        if (e != 0L && r != Long.MAX_VALUE) {
          REQUESTED.addAndGet(this, -e);
        }
        requestInputs();
        missed = WIP.addAndGet(this, -missed);
        if (missed == 0) {
          break;
        }
      }
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
        return terminated;
      }
      if (key == Attr.ERROR) {
        return error;
      }
      if (key == Attr.PREFETCH) {
        return prefetch;
      }
      if (key == Attr.REQUESTED_FROM_DOWNSTREAM) {
        return requested;
      }
      return null;
    }
  }

  static final class InnerSubscriber<R> implements CoreSubscriber<R> {
    final InterleaveSubscriber<?, R> parent;
    final int prefetch;
    final int limit;
    final Queue<R> queue;
    volatile boolean done;
    int consumed;

    volatile Subscription subscription;
    @SuppressWarnings("rawtypes")
    static final AtomicReferenceFieldUpdater<InnerSubscriber, Subscription> S =
        AtomicReferenceFieldUpdater.newUpdater(InnerSubscriber.class, Subscription.class, "subscription");

    InnerSubscriber(InterleaveSubscriber<?, R> parent, int prefetch) {
      this.parent = parent;
      this.prefetch = prefetch;
      this.limit = Math.max(1, prefetch - (prefetch >> 2));
      this.queue = Queues.<R>get(prefetch).get();
    }

    @Override
    public Context currentContext() {
      return parent.ctx;
    }

    @Override
    public void onSubscribe(Subscription s) {
      if (Operators.setOnce(S, this, s)) {
        s.request(prefetch);
      }
    }

    @Override
    public void onNext(R t) {
      if (!queue.offer(t)) {
        Operators.onDiscard(t, parent.ctx);
        onError(new IllegalStateException("interleave: an inner publisher emitted more than requested"));
        return;
      }
      parent.drain();
    }

    @Override
    public void onError(Throwable t) {
      done = true;
      parent.innerError(t);
    }

    @Override
    public void onComplete() {
      done = true;
      parent.drain();
    }

    /** One element taken by the drain loop: request more in batches. */
    void consumed() {
      if (++consumed == limit) {
        consumed = 0;
        Subscription s = subscription;
        if (s != null) {
          s.request(limit);
        }
      }
    }

    void cancel() {
      Operators.terminate(S, this);
    }
  }
}
