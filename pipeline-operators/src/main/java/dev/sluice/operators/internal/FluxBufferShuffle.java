package dev.sluice.operators.internal;

import dev.sluice.core.PipelineContext;
import dev.sluice.core.internal.Mix;
import java.util.Arrays;
import java.util.Queue;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.concurrent.atomic.AtomicLongFieldUpdater;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Scannable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.FluxOperator;
import reactor.core.publisher.Operators;
import reactor.util.concurrent.Queues;
import reactor.util.context.Context;

/**
 * tf.data's buffer shuffle as a Reactor operator: fills a buffer of {@code bufferSize} elements,
 * then emits a uniformly chosen element of the full buffer each time downstream asks and refills
 * the freed slot with the next upstream element; when upstream completes, the rest of the buffer
 * is emitted in random order.
 *
 * <p>The random stream is a {@link SplittableRandom} seeded from (seed, epoch) at subscription, so
 * the order depends only on the elements and the {@link PipelineContext}, never on thread timing:
 * an element is only ever drawn from a full buffer (or after upstream completed). Upstream demand is
 * bounded so that buffered plus requested-but-not-received elements never exceed
 * {@code bufferSize}.
 *
 * <p>Discard support: on cancel and on upstream error every buffered or queued element goes to
 * {@link Operators#onDiscard}.
 *
 * @param <T> the element type
 */
public final class FluxBufferShuffle<T> extends FluxOperator<T, T> {
  /** Salt that separates the buffer shuffle's random stream from other consumers of (seed, epoch). */
  static final long SALT = 0x5B0F_F1E5_B0FF_E125L;
  /** Upper bound of the hand-off queue between onNext and the drain loop. */
  static final int MAX_QUEUE = 1 << 12;

  private final int bufferSize;
  private final boolean hasSeed;
  private final long seed;
  private final boolean reshuffleEachIteration;

  /**
   * @param bufferSize elements kept, &gt; 0
   * @param hasSeed whether {@code seed} overrides the context's seed
   * @param seed the operator's own seed (used when {@code hasSeed})
   * @param reshuffleEachIteration true: the order changes with the context's epoch
   */
  public FluxBufferShuffle(Flux<? extends T> source, int bufferSize, boolean hasSeed, long seed,
      boolean reshuffleEachIteration) {
    super(source);
    if (bufferSize <= 0) {
      throw new IllegalArgumentException("bufferSize > 0 required but it was " + bufferSize);
    }
    this.bufferSize = bufferSize;
    this.hasSeed = hasSeed;
    this.seed = seed;
    this.reshuffleEachIteration = reshuffleEachIteration;
  }

  /** The random stream for a context: what a subscription with that context will use. */
  public static SplittableRandom random(long seed, long epoch) {
    return new SplittableRandom(Mix.seed(seed, epoch, SALT));
  }

  @Override
  public void subscribe(CoreSubscriber<? super T> actual) {
    PipelineContext pc = PipelineContext.from(actual.currentContext());
    long s = hasSeed ? seed : pc.seed();
    long epoch = reshuffleEachIteration ? pc.epoch() : 0;
    source.subscribe(new BufferShuffleSubscriber<>(actual, bufferSize, random(s, epoch)));
  }

  @Override
  public Object scanUnsafe(Attr key) {
    if (key == Attr.PREFETCH) {
      return bufferSize;
    }
    if (key == Attr.RUN_STYLE) {
      return Attr.RunStyle.SYNC;
    }
    return super.scanUnsafe(key);
  }

  static final class BufferShuffleSubscriber<T> implements CoreSubscriber<T>, Subscription, Scannable {
    final CoreSubscriber<? super T> actual;
    final Context ctx;
    final int bufferSize;
    final SplittableRandom random;
    final int queueCapacity;
    final Queue<T> queue;

    Subscription upstream;
    /** Drain-loop state: the shuffle buffer and its fill. */
    Object[] buffer;
    int count;
    /** Drain-loop state: requested from upstream and not yet moved into the buffer. */
    long outstanding;

    volatile boolean done;
    Throwable error;
    volatile boolean cancelled;
    /** True once a terminal signal went downstream (or the subscription was cleared). */
    boolean terminated;

    volatile long requested;
    @SuppressWarnings("rawtypes")
    static final AtomicLongFieldUpdater<BufferShuffleSubscriber> REQUESTED =
        AtomicLongFieldUpdater.newUpdater(BufferShuffleSubscriber.class, "requested");

    volatile int wip;
    @SuppressWarnings("rawtypes")
    static final AtomicIntegerFieldUpdater<BufferShuffleSubscriber> WIP =
        AtomicIntegerFieldUpdater.newUpdater(BufferShuffleSubscriber.class, "wip");

    BufferShuffleSubscriber(CoreSubscriber<? super T> actual, int bufferSize, SplittableRandom random) {
      this.actual = actual;
      this.ctx = actual.currentContext();
      this.bufferSize = bufferSize;
      this.random = random;
      this.queueCapacity = Math.min(bufferSize, MAX_QUEUE);
      this.queue = Queues.<T>get(queueCapacity).get();
      this.buffer = new Object[Math.min(bufferSize, 256)];
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
      if (done) {
        Operators.onNextDropped(t, ctx);
        return;
      }
      if (!queue.offer(t)) {
        Operators.onDiscard(t, ctx);
        onError(Operators.onOperatorError(upstream,
            new IllegalStateException("buffer shuffle: upstream emitted more than requested"), t, ctx));
        return;
      }
      drain();
    }

    @Override
    public void onError(Throwable t) {
      if (done) {
        Operators.onErrorDropped(t, ctx);
        return;
      }
      error = t;
      done = true;
      drain();
    }

    @Override
    public void onComplete() {
      if (done) {
        return;
      }
      done = true;
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

    /** Hands every held element to the discard hook; drain-loop only. */
    void clear() {
      Operators.onDiscardQueueWithClear(queue, ctx, null);
      Object[] b = buffer;
      for (int i = 0; i < count; i++) {
        Object o = b[i];
        b[i] = null;
        Operators.onDiscard(o, ctx);
      }
      count = 0;
    }

    void requestUpstream() {
      if (done || cancelled) {
        return;
      }
      long want = Math.min((long) bufferSize - count, queueCapacity) - outstanding;
      if (want > 0) {
        outstanding += want;
        upstream.request(want);
      }
    }

    /**
     * The only place that touches the buffer. Whoever enters it after a cancel discards what is
     * held, so an onNext racing with cancel never leaks its element.
     */
    void drain() {
      if (WIP.getAndIncrement(this) != 0) {
        return;
      }
      int missed = 1;
      final CoreSubscriber<? super T> a = actual;
      for (;;) {
        long r = requested;
        long e = 0L;
        for (;;) {
          if (cancelled) {
            clear();
            break;
          }
          if (terminated) {
            break;
          }
          boolean d = done;
          T t;
          while ((t = queue.poll()) != null) {
            if (count == buffer.length) {
              buffer = Arrays.copyOf(buffer, (int) Math.min(bufferSize, 2L * buffer.length));
            }
            buffer[count++] = t;
            outstanding--;
          }
          if (d) {
            Throwable ex = error;
            if (ex != null) {
              terminated = true;
              clear();
              a.onError(ex);
              break;
            }
            if (count == 0) {
              terminated = true;
              a.onComplete();
              break;
            }
          }
          if (e == r || count == 0 || (count < bufferSize && !d)) {
            break;
          }
          int j = random.nextInt(count);
          @SuppressWarnings("unchecked")
          T v = (T) buffer[j];
          buffer[j] = buffer[--count];
          buffer[count] = null;
          a.onNext(v);
          e++;
          requestUpstream();
        }
        if (e != 0L && r != Long.MAX_VALUE) {
          REQUESTED.addAndGet(this, -e);
        }
        if (!cancelled && !terminated) {
          requestUpstream();
        }
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
        return done;
      }
      if (key == Attr.ERROR) {
        return error;
      }
      if (key == Attr.PREFETCH) {
        return bufferSize;
      }
      if (key == Attr.BUFFERED) {
        return count + queue.size();
      }
      if (key == Attr.REQUESTED_FROM_DOWNSTREAM) {
        return requested;
      }
      if (key == Attr.RUN_STYLE) {
        return Attr.RunStyle.SYNC;
      }
      return null;
    }
  }
}
