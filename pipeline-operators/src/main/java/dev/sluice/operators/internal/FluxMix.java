package dev.sluice.operators.internal;

import dev.sluice.core.spi.StageCounters;
import java.util.Objects;
import java.util.Queue;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.concurrent.atomic.AtomicLongFieldUpdater;
import java.util.concurrent.atomic.AtomicReferenceFieldUpdater;
import java.util.function.Supplier;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Exceptions;
import reactor.core.Scannable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Operators;
import reactor.util.concurrent.Queues;
import reactor.util.context.Context;

/**
 * Takes each element from one of several sources, the one a {@link Chooser} picks: the operator
 * behind {@code sample}, {@code choose} and {@code concatenate}. A source is subscribed when it is
 * first picked and keeps at most {@code prefetch} elements queued; the chooser is asked for the next
 * source once the previous element was emitted (or, with a selector, once the selector's next value
 * arrived), and told when the source it picked turned out exhausted: it may then end the pass, pick
 * again, or have the source's next cycle (its pass for the next epoch) opened. The choices depend
 * only on the chooser and on how many elements each source has, never on timing.
 *
 * <p>Follows Reactor's rules: a WIP drain loop, saturating demand, no signal after a terminal one;
 * on cancel, error or an early end every queued element goes to the discard hook and every open
 * source is cancelled. A source's error reaches the subscriber in order, where that source's next
 * element would have: after every element before it in the mix's order (so what is emitted before
 * an error does not depend on timing); an error of a source the mix never takes from again is not
 * signalled. Each element taken is counted per source in the stage's counters
 * ({@link #COUNTER}, tag {@code source}).
 *
 * @param <T> the element type
 */
final class FluxMix<T> extends Flux<T> implements Scannable {
  /** The counter of the elements taken from each source, tagged {@code source}. */
  static final String COUNTER = "mix.elements";

  /** Opens source {@code source}'s pass number {@code cycle} from element {@code offset} on. */
  interface Sources<T> {
    Publisher<? extends T> open(int source, long cycle, long offset);
  }

  /** Picks the source of each element; one per subscription. */
  interface Chooser {
    /** Ends the pass. */
    int END = -1;
    /** Asks {@link #next} again. */
    int REDRAW = -2;
    /** Opens the source's next cycle and takes from it. */
    int CYCLE = -3;

    /**
     * The source of the next element, or {@link #END}.
     *
     * @param selected the selector's next value when there is a selector, else 0
     */
    int next(long selected);

    /**
     * Source {@code source}, just picked, has no element left in its current pass.
     *
     * @param emptyPass whether that pass, opened from its start, delivered nothing
     * @return {@link #END}, {@link #REDRAW} or {@link #CYCLE}
     */
    int exhausted(int source, boolean emptyPass);

    /** An element of {@code source} was emitted. */
    default void taken(int source) {}
  }

  private final int count;
  private final Sources<T> sources;
  private final long[] startCycles;
  private final long[] startOffsets;
  private final Publisher<? extends Number> selector;
  private final Supplier<? extends Chooser> chooser;
  private final int prefetch;

  /**
   * @param count the number of sources
   * @param sources opens a source's pass
   * @param startCycles per source, the cycle its first opening opens
   * @param startOffsets per source, the element its first opening starts at
   * @param selector the choices, or null when the chooser picks on its own
   * @param chooser a chooser per subscription
   * @param prefetch elements queued per open source, &gt; 0
   */
  FluxMix(int count, Sources<T> sources, long[] startCycles, long[] startOffsets,
      Publisher<? extends Number> selector, Supplier<? extends Chooser> chooser, int prefetch) {
    this.count = count;
    this.sources = Objects.requireNonNull(sources, "sources");
    this.startCycles = startCycles.clone();
    this.startOffsets = startOffsets.clone();
    this.selector = selector;
    this.chooser = Objects.requireNonNull(chooser, "chooser");
    this.prefetch = prefetch;
  }

  @Override
  public void subscribe(CoreSubscriber<? super T> actual) {
    Chooser c;
    try {
      c = Objects.requireNonNull(chooser.get(), "the chooser");
    } catch (Throwable e) {
      Operators.error(actual, Operators.onOperatorError(e, actual.currentContext()));
      return;
    }
    MixSubscriber<T> s = new MixSubscriber<>(this, actual, c);
    actual.onSubscribe(s);
    s.drain();
  }

  @Override
  public Object scanUnsafe(Attr key) {
    if (key == Attr.PREFETCH) {
      return prefetch;
    }
    return key == Attr.RUN_STYLE ? Attr.RunStyle.SYNC : null;
  }

  /** The mixer's per-subscription state. */
  static final class MixSubscriber<T> implements Subscription, Scannable {
    private final FluxMix<T> parent;
    private final CoreSubscriber<? super T> actual;
    private final Chooser chooser;
    private final Inner<T>[] inners;
    private final long[] cycles;
    private final boolean[] opened;
    private final StageCounters counters;
    private final long[] unreported;
    private Inner<Number> selector;
    private int current = -1;
    private long emitted;
    private volatile boolean terminated;

    volatile long requested;
    static final AtomicLongFieldUpdater<MixSubscriber> REQUESTED =
        AtomicLongFieldUpdater.newUpdater(MixSubscriber.class, "requested");
    volatile int wip;
    static final AtomicIntegerFieldUpdater<MixSubscriber> WIP = AtomicIntegerFieldUpdater.newUpdater(MixSubscriber.class, "wip");
    volatile Throwable error;
    static final AtomicReferenceFieldUpdater<MixSubscriber, Throwable> ERROR =
        AtomicReferenceFieldUpdater.newUpdater(MixSubscriber.class, Throwable.class, "error");
    volatile boolean cancelled;

    @SuppressWarnings("unchecked")
    MixSubscriber(FluxMix<T> parent, CoreSubscriber<? super T> actual, Chooser chooser) {
      this.parent = parent;
      this.actual = actual;
      this.chooser = chooser;
      this.inners = new Inner[parent.count];
      this.cycles = parent.startCycles.clone();
      this.opened = new boolean[parent.count];
      this.counters = StageCounters.of(actual.currentContext());
      this.unreported = new long[parent.count];
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
      cancelAll();
      if (WIP.getAndIncrement(this) == 0) {
        clearAll();
      }
    }

    void innerError(Throwable e) {
      if (Exceptions.addThrowable(ERROR, this, e)) {
        drain();
      } else {
        Operators.onErrorDropped(e, actual.currentContext());
      }
    }

    private void cancelAll() {
      for (Inner<T> in : inners) {
        if (in != null) {
          in.cancel();
        }
      }
      if (selector != null) {
        selector.cancel();
      }
    }

    private void clearAll() {
      Context ctx = actual.currentContext();
      for (Inner<T> in : inners) {
        if (in != null) {
          Operators.onDiscardQueueWithClear(in.queue, ctx, null);
        }
      }
      if (selector != null) {
        selector.queue.clear();
      }
      report();
    }

    /** Cancels and releases everything; the caller then signals the terminal event. */
    private void finish() {
      terminated = true;
      cancelAll();
      clearAll();
    }

    /** Hands the per-source counts not reported yet to the stage's counters. */
    private void report() {
      if (!counters.isRecording()) {
        return;
      }
      for (int i = 0; i < unreported.length; i++) {
        long n = unreported[i];
        if (n > 0) {
          unreported[i] = 0;
          counters.add(COUNTER, "source", Integer.toString(i), n);
        }
      }
    }

    private Inner<T> open(int source) {
      long offset = opened[source] ? 0 : parent.startOffsets[source];
      opened[source] = true;
      Inner<T> in = new Inner<>(this, parent.prefetch, offset);
      inners[source] = in;
      try {
        Publisher<? extends T> p = Objects.requireNonNull(parent.sources.open(source, cycles[source], offset),
            "the source's pass");
        p.subscribe(in);
      } catch (Throwable e) {
        in.done = true;
        innerError(Operators.onOperatorError(e, actual.currentContext()));
      }
      return in;
    }

    /**
     * Drains after a source delivered {@code element}: when the drain is held for good (cancelled
     * or terminated), the element is discarded here, since no drain will look at the queue again.
     */
    void drainAfter(Object element) {
      if (WIP.getAndIncrement(this) != 0) {
        if (cancelled || terminated) {
          Operators.onDiscard(element, actual.currentContext());
        }
        return;
      }
      drainLoop();
    }

    void drain() {
      if (WIP.getAndIncrement(this) != 0) {
        return;
      }
      drainLoop();
    }

    @SuppressWarnings("unchecked")
    private void drainLoop() {
      int missed = 1;
      for (;;) {
        long r = requested;
        long e = emitted;
        for (;;) {
          if (cancelled) {
            clearAll();
            return;
          }
          if (error != null) {
            Throwable ex = Exceptions.terminate(ERROR, this);
            finish();
            actual.onError(ex);
            return;
          }
          if (current < 0) {
            int c;
            try {
              if (parent.selector != null) {
                if (selector == null) {
                  selector = new Inner<>(this, parent.prefetch, 0);
                  ((Publisher<Number>) parent.selector).subscribe(selector);
                  continue; // the subscription may have delivered or failed
                }
                boolean d = selector.done;
                Number v = selector.queue.poll();
                if (v == null) {
                  if (!d) {
                    break;
                  }
                  if (selector.error != null) {
                    innerError(selector.error);
                    continue;
                  }
                  c = Chooser.END;
                } else {
                  selector.requestOne();
                  c = chooser.next(v.longValue());
                }
              } else {
                c = chooser.next(0);
              }
            } catch (Throwable ex) {
              innerError(Operators.onOperatorError(ex, actual.currentContext()));
              continue;
            }
            if (c == Chooser.END) {
              finish();
              actual.onComplete();
              return;
            }
            current = c;
          }
          Inner<T> in = inners[current];
          if (in == null) {
            open(current);
            continue; // the subscription may have delivered, completed or failed
          }
          boolean d = in.done;
          T v = in.queue.peek();
          if (v == null) {
            if (!d) {
              break;
            }
            if (in.error != null) {
              innerError(in.error);
              continue;
            }
            int a;
            try {
              a = chooser.exhausted(current, in.offset == 0 && in.taken == 0);
            } catch (Throwable ex) {
              innerError(Operators.onOperatorError(ex, actual.currentContext()));
              continue;
            }
            if (a == Chooser.CYCLE) {
              cycles[current]++;
              inners[current] = null;
            } else if (a == Chooser.END) {
              finish();
              actual.onComplete();
              return;
            } else {
              current = -1;
            }
            continue;
          }
          if (e == r) {
            break;
          }
          in.queue.poll();
          actual.onNext(v);
          e++;
          in.taken++;
          int from = current;
          current = -1;
          chooser.taken(from);
          if (++unreported[from] >= 1024) {
            report();
          }
          in.requestOne();
        }
        emitted = e;
        missed = WIP.addAndGet(this, -missed);
        if (missed == 0) {
          break;
        }
      }
    }

    @Override
    public Object scanUnsafe(Attr key) {
      if (key == Attr.ACTUAL) {
        return actual;
      }
      if (key == Attr.CANCELLED) {
        return cancelled;
      }
      if (key == Attr.TERMINATED) {
        return terminated;
      }
      if (key == Attr.REQUESTED_FROM_DOWNSTREAM) {
        return requested;
      }
      if (key == Attr.ERROR) {
        return error;
      }
      if (key == Attr.PREFETCH) {
        return parent.prefetch;
      }
      return key == Attr.RUN_STYLE ? Attr.RunStyle.SYNC : null;
    }
  }

  /** One open source (or the selector): a bounded queue refilled one element per element taken. */
  static final class Inner<E> implements CoreSubscriber<E>, Scannable {
    private final MixSubscriber<?> parent;
    private final int prefetch;
    final long offset;
    final Queue<E> queue;
    long taken;
    /** The source's failure, delivered in order: when the mix next takes from it and its queue is empty. */
    Throwable error;
    volatile boolean done;
    volatile Subscription subscription;
    static final AtomicReferenceFieldUpdater<Inner, Subscription> S =
        AtomicReferenceFieldUpdater.newUpdater(Inner.class, Subscription.class, "subscription");

    Inner(MixSubscriber<?> parent, int prefetch, long offset) {
      this.parent = parent;
      this.prefetch = prefetch;
      this.offset = offset;
      this.queue = Queues.<E>get(prefetch).get();
    }

    @Override
    public Context currentContext() {
      return parent.actual.currentContext();
    }

    @Override
    public void onSubscribe(Subscription s) {
      if (Operators.setOnce(S, this, s)) {
        s.request(prefetch);
      }
    }

    @Override
    public void onNext(E e) {
      if (parent.cancelled || parent.terminated) {
        Operators.onDiscard(e, currentContext());
        return;
      }
      if (!queue.offer(e)) {
        Operators.onDiscard(e, currentContext());
        onError(Operators.onOperatorError(subscription, Exceptions.failWithOverflow(Exceptions.BACKPRESSURE_ERROR_QUEUE_FULL),
            e, currentContext()));
        return;
      }
      parent.drainAfter(e);
    }

    @Override
    public void onError(Throwable t) {
      error = t;
      done = true;
      parent.drain();
    }

    @Override
    public void onComplete() {
      done = true;
      parent.drain();
    }

    void requestOne() {
      Subscription s = subscription;
      if (s != null) {
        s.request(1);
      }
    }

    void cancel() {
      Operators.terminate(S, this);
    }

    @Override
    public Object scanUnsafe(Attr key) {
      if (key == Attr.PARENT) {
        return subscription;
      }
      if (key == Attr.ACTUAL) {
        return parent;
      }
      if (key == Attr.BUFFERED) {
        return queue.size();
      }
      if (key == Attr.TERMINATED) {
        return done;
      }
      return key == Attr.PREFETCH ? prefetch : null;
    }
  }
}
