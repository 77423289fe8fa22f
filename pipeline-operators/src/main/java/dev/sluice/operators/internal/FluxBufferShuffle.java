package dev.sluice.operators.internal;

import dev.sluice.core.PipelineContext;
import dev.sluice.core.internal.Mix;
import dev.sluice.core.internal.metrics.SelfMeasured;
import dev.sluice.core.internal.metrics.StageMeter;
import dev.sluice.core.internal.metrics.StageOutput;
import java.util.Arrays;
import java.util.Objects;
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
 * tf.data's buffer shuffle as a Reactor operator: fills a buffer of {@code bufferSize} slots; then
 * each element emitted is the content of a uniformly drawn slot, and the freed slot takes the next
 * upstream element; when upstream completes, the rest of the buffer is emitted in random order.
 *
 * <p>The draws come from a {@link SplittableRandom} seeded from (seed, epoch) at subscription, and
 * freed slots are refilled first-in first-out, so the order depends only on the elements and the
 * {@link PipelineContext}, never on thread timing. Refills are requested lazily and in batches: a
 * draw that hits a slot whose refill has not arrived yet waits for it. The distribution is exactly
 * tf.data's (each emitted element is uniform among the {@code bufferSize} buffered ones), and
 * buffered plus requested-but-not-received elements never exceed {@code bufferSize}.
 *
 * <p>Discard support: on cancel and on upstream error every buffered or queued element goes to
 * {@link Operators#onDiscard}.
 *
 * @param <T> the element type
 */
public final class FluxBufferShuffle<T> extends FluxOperator<T, T> implements SelfMeasured {
  /** Salt that separates the buffer shuffle's random stream from other consumers of (seed, epoch). */
  static final long SALT = 0x5B0F_F1E5_B0FF_E125L;
  /** Upper bound of the hand-off queue between onNext and the drain loop. */
  static final int MAX_QUEUE = 1 << 12;

  private final int bufferSize;
  private final boolean hasSeed;
  private final long seed;
  private final boolean reshuffleEachIteration;
  private final PipelineContext context;
  private final Restored restored;
  private final StageMeter meter; // measures the output, or null

  /**
   * The state of a buffer shuffle after some emissions, recomputed from positions
   * ({@link BufferShuffleResume}): a subscription resumes from it as if it had emitted them. For
   * one subscription: it holds elements.
   *
   * @param random the draws' generator, advanced past the draws already made
   * @param slots the buffer's slots (null: a hole); in draining order when {@code draining}
   * @param initialFilled slots filled once
   * @param filled elements in the slots
   * @param draining upstream is over and the rest of the buffer is going out
   * @param holes emitted slots not refilled, oldest first
   * @param exhausted the upstream has no more elements (it is subscribed to, and completes at once)
   */
  record Restored(SplittableRandom random, Object[] slots, int initialFilled, int filled, boolean draining,
      int[] holes, boolean exhausted) {}

  /**
   * @param bufferSize elements kept, &gt; 0
   * @param hasSeed whether {@code seed} overrides the context's seed
   * @param seed the operator's own seed (used when {@code hasSeed})
   * @param reshuffleEachIteration true: the order changes with the context's epoch
   */
  public FluxBufferShuffle(Flux<? extends T> source, int bufferSize, boolean hasSeed, long seed,
      boolean reshuffleEachIteration) {
    this(source, bufferSize, hasSeed, seed, reshuffleEachIteration, null);
  }

  /**
   * @param context the pass's context, fixed at assembly (a pipeline stage), or null to read it from
   *     the Reactor context at subscription
   */
  public FluxBufferShuffle(Flux<? extends T> source, int bufferSize, boolean hasSeed, long seed,
      boolean reshuffleEachIteration, PipelineContext context) {
    this(source, bufferSize, hasSeed, seed, reshuffleEachIteration, context, null, null);
  }

  /** A buffer shuffle resumed from {@code restored}, over the upstream elements after those it held. */
  FluxBufferShuffle(Flux<? extends T> source, int bufferSize, Restored restored) {
    this(source, bufferSize, false, 0, true, null, restored, null);
  }

  private FluxBufferShuffle(Flux<? extends T> source, int bufferSize, boolean hasSeed, long seed,
      boolean reshuffleEachIteration, PipelineContext context, Restored restored, StageMeter meter) {
    super(source);
    this.context = context;
    this.restored = restored;
    this.meter = meter;
    if (bufferSize <= 0) {
      throw new IllegalArgumentException("bufferSize > 0 required but it was " + bufferSize);
    }
    this.bufferSize = bufferSize;
    this.hasSeed = hasSeed;
    this.seed = seed;
    this.reshuffleEachIteration = reshuffleEachIteration;
  }

  /** This buffer shuffle measuring its own output: no probe between it and its downstream. */
  @Override
  public FluxBufferShuffle<T> measuredBy(StageMeter stageMeter) {
    return new FluxBufferShuffle<>(source, bufferSize, hasSeed, seed, reshuffleEachIteration, context, restored,
        Objects.requireNonNull(stageMeter, "stageMeter"));
  }

  /** The random stream for a context: what a subscription with that context will use. */
  public static SplittableRandom random(long seed, long epoch) {
    return new SplittableRandom(Mix.seed(seed, epoch, SALT));
  }

  @Override
  public void subscribe(CoreSubscriber<? super T> actual) {
    if (restored != null) {
      BufferShuffleSubscriber<T> s = new BufferShuffleSubscriber<>(actual, bufferSize, restored.random(), meter);
      s.restore(restored);
      source.subscribe(s);
      return;
    }
    PipelineContext pc = context != null ? context : PipelineContext.from(actual.currentContext());
    long s = hasSeed ? seed : pc.seed();
    long epoch = reshuffleEachIteration ? pc.epoch() : 0;
    source.subscribe(new BufferShuffleSubscriber<>(actual, bufferSize, random(s, epoch), meter));
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
    final int requestBatch;
    final Queue<T> queue;
    /** Measures the output when the stage is measured, else null. */
    final StageOutput out;

    Subscription upstream;

    // Drain-loop state. The buffer is bufferSize slots; an empty slot is a hole waiting for the next
    // upstream element. Holes are refilled first-in first-out (the never-filled slots 0, 1, ... first,
    // then the slots in the order they were emitted), so which element lands in which slot is a
    // function of the input order only.
    Object[] slots;
    /** Slots 0 .. initialFilled-1 have been filled once; the rest were never filled. */
    int initialFilled;
    /** Emitted slots waiting for a refill, FIFO. */
    int[] holes = new int[16];
    int holeHead;
    int holeCount;
    /** Elements in the slots. */
    int filled;
    /** The current draw, kept until its slot can be emitted; -1 when none. */
    int pick = -1;
    /** Requested from upstream and not yet moved into a slot. */
    long outstanding;
    /** After upstream completed and a draw hit a slot that will never be refilled. */
    boolean draining;

    volatile boolean done;
    Throwable error;
    volatile boolean cancelled;
    /** True once a terminal signal went downstream. */
    boolean terminated;

    volatile long requested;
    @SuppressWarnings("rawtypes")
    static final AtomicLongFieldUpdater<BufferShuffleSubscriber> REQUESTED =
        AtomicLongFieldUpdater.newUpdater(BufferShuffleSubscriber.class, "requested");

    /**
     * The thread inside {@link #drain}, or null. Written only by that thread, so only that thread
     * ever reads itself here: {@link #request} uses it to recognise a call from its own onNext.
     */
    Thread drainer;
    /** Requested from inside onNext and not yet added to {@link #requested}; drainer only. */
    long localRequested;
    /** Elements the upstream delivered into their slots from inside the drain loop; drainer only. */
    long directFills;

    volatile int wip;
    @SuppressWarnings("rawtypes")
    static final AtomicIntegerFieldUpdater<BufferShuffleSubscriber> WIP =
        AtomicIntegerFieldUpdater.newUpdater(BufferShuffleSubscriber.class, "wip");

    BufferShuffleSubscriber(CoreSubscriber<? super T> actual, int bufferSize, SplittableRandom random,
        StageMeter measuredBy) {
      this.actual = actual;
      this.out = measuredBy == null ? null : new StageOutput(measuredBy, actual.currentContext());
      this.ctx = out == null ? actual.currentContext() : out.context();
      this.bufferSize = bufferSize;
      this.random = random;
      this.queueCapacity = Math.min(bufferSize, MAX_QUEUE);
      this.requestBatch = Math.max(1, Math.min(queueCapacity / 4, 256));
      this.queue = Queues.<T>get(queueCapacity).get();
      this.slots = new Object[Math.min(bufferSize, 256)];
      StageMeter meter = StageMeter.from(ctx);
      if (meter != null) {
        meter.buffer(() -> filled + queue.size(), bufferSize); // read racily by the stage's probe
      }
    }

    @Override
    public Context currentContext() {
      return ctx;
    }

    /** Starts from a recomputed state instead of an empty buffer; before subscribing. */
    void restore(Restored r) {
      slots = r.slots().length == 0 ? new Object[1] : r.slots();
      initialFilled = r.initialFilled();
      filled = r.filled();
      draining = r.draining();
      for (int h : r.holes()) {
        addHole(h);
      }
      done = r.exhausted(); // as the original had seen the upstream complete
    }

    @Override
    public void onSubscribe(Subscription s) {
      if (Operators.validate(upstream, s)) {
        upstream = s;
        if (out != null) {
          out.start();
        }
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
      if (drainer == Thread.currentThread() && outstanding > 0) {
        // a synchronous upstream answering our own request from inside the drain loop: straight
        // into its slot, no queue and no atomics (the loop notices through directFills)
        fill(t);
        outstanding--;
        directFills++;
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
        if (out != null) {
          out.request(n);
        }
        if (drainer == Thread.currentThread()) {
          // from inside our own onNext (filter, handle and the parallel map ask one at a time):
          // the drain loop running below on this thread picks it up, no atomics needed
          localRequested = Operators.addCap(localRequested, n);
          return;
        }
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
      if (out != null) {
        out.finish();
      }
      drain();
    }

    /** Hands every held element to the discard hook; drain-loop only. */
    void clear() {
      Operators.onDiscardQueueWithClear(queue, ctx, null);
      Object[] b = slots;
      int limit = draining ? filled : b.length;
      for (int i = 0; i < limit; i++) {
        Object o = b[i];
        if (o != null) {
          b[i] = null;
          Operators.onDiscard(o, ctx);
        }
      }
      filled = 0;
    }

    /** Puts an arrived element into the next hole. */
    void fill(T t) {
      int slot;
      if (initialFilled < bufferSize) {
        slot = initialFilled++;
        if (slot == slots.length) {
          slots = Arrays.copyOf(slots, (int) Math.min(bufferSize, 2L * slots.length));
        }
      } else {
        slot = holes[holeHead];
        holeHead = holeHead + 1 == holes.length ? 0 : holeHead + 1;
        holeCount--;
      }
      slots[slot] = t;
      filled++;
    }

    void addHole(int slot) {
      if (holeCount == holes.length) {
        int[] bigger = new int[holes.length * 2];
        for (int i = 0; i < holeCount; i++) {
          bigger[i] = holes[(holeHead + i) % holes.length];
        }
        holes = bigger;
        holeHead = 0;
      }
      int at = holeHead + holeCount; // < 2 × holes.length: no division (this runs once per element)
      holes[at >= holes.length ? at - holes.length : at] = slot;
      holeCount++;
    }

    /**
     * Requests elements for the holes not requested yet: in batches, or all that the hand-off queue
     * can take when {@code force} (a draw waits for a hole). Requested plus held never exceeds
     * bufferSize: only holes are ever requested.
     */
    void requestUpstream(boolean force) {
      if (done || cancelled || draining) {
        return;
      }
      long holesNow = (long) (bufferSize - initialFilled) + holeCount;
      long n = Math.min(holesNow - outstanding, queueCapacity - outstanding);
      if (n > 0 && (force || n >= requestBatch)) {
        outstanding += n;
        upstream.request(n);
      }
    }

    /** Upstream is over and a draw hit a hole: the rest of the buffer goes out uniformly at random. */
    void startDraining() {
      int k = 0;
      Object[] b = slots;
      for (int i = 0; i < b.length; i++) {
        Object o = b[i];
        if (o != null) {
          b[i] = null;
          b[k++] = o;
        }
      }
      draining = true;
      pick = -1;
    }

    /**
     * A uniform int in {@code [0, bound)} by Lemire's multiply-and-shift with rejection: exactly
     * uniform like {@code SplittableRandom.nextInt(bound)}, but without its integer division per
     * draw (this runs once per element).
     */
    static int uniform(SplittableRandom random, int bound) {
      long m = (random.nextInt() & 0xFFFF_FFFFL) * bound;
      int low = (int) m;
      if (Integer.compareUnsigned(low, bound) < 0) {
        int threshold = Integer.remainderUnsigned(-bound, bound); // 2^32 mod bound
        while (Integer.compareUnsigned(low, threshold) < 0) {
          m = (random.nextInt() & 0xFFFF_FFFFL) * bound;
          low = (int) m;
        }
      }
      return (int) (m >>> 32);
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
      drainer = Thread.currentThread();
      for (;;) {
        long r = requested;
        long e = 0L;
        long local = 0L; // requested from inside onNext during this pass
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
            fill(t);
            outstanding--;
          }
          if (d) {
            Throwable ex = error;
            if (ex != null) {
              terminated = true;
              clear();
              if (out != null) {
                out.finish();
              }
              a.onError(ex);
              break;
            }
            if (filled == 0) {
              terminated = true;
              if (out != null) {
                out.finish();
              }
              a.onComplete();
              break;
            }
          }
          if (e == r && localRequested != 0L) {
            local = Operators.addCap(local, localRequested);
            r = Operators.addCap(r, localRequested);
            localRequested = 0L;
          }
          if (e == r || (initialFilled < bufferSize && !d)) {
            break; // no demand, or the buffer has not been full once yet (tf.data fills it first)
          }
          T v;
          if (draining) {
            int j = uniform(random, filled);
            @SuppressWarnings("unchecked")
            T w = (T) slots[j];
            v = w;
            slots[j] = slots[--filled];
            slots[filled] = null;
          } else {
            if (pick < 0) {
              pick = uniform(random, bufferSize);
            }
            @SuppressWarnings("unchecked")
            T w = pick < slots.length ? (T) slots[pick] : null;
            if (w == null) {
              if (d) {
                startDraining(); // the drawn slot will never be refilled
                continue;
              }
              long fills = directFills;
              requestUpstream(true);
              if (queue.isEmpty() && directFills == fills) {
                break; // wait for the element of the drawn slot
              }
              continue;
            }
            v = w;
            slots[pick] = null;
            filled--;
            addHole(pick);
            pick = -1;
          }
          if (out == null) {
            a.onNext(v);
          } else {
            long k = out.before(v);
            a.onNext(v);
            out.after(k);
          }
          e++;
          requestUpstream(false);
        }
        local = Operators.addCap(local, localRequested);
        localRequested = 0L;
        if (local != e && r != Long.MAX_VALUE) {
          REQUESTED.addAndGet(this, local - e);
        }
        long fills = directFills;
        if (!cancelled && !terminated) {
          requestUpstream(false);
        }
        if (directFills != fills) {
          continue; // the upstream answered at once: use what it delivered before leaving
        }
        if (wip == missed) {
          drainer = null; // before giving up the loop: a later call from this thread is external
        }
        missed = WIP.addAndGet(this, -missed);
        if (missed == 0) {
          break;
        }
        drainer = Thread.currentThread();
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
        return filled + queue.size();
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
