package dev.sluice.core.internal.metrics;

import dev.sluice.core.Batch;
import dev.sluice.core.Example;
import dev.sluice.core.Tensor;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.atomic.AtomicLongFieldUpdater;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Scannable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Operators;
import reactor.util.context.Context;

/**
 * Measures a stage at its output, without changing its signals: the elements and bytes it emits,
 * and how the time of the pass splits between the stage waiting for its downstream (busy with the
 * previous element, or not asking) and its downstream waiting for it (it asked and nothing came).
 * Reports to a {@link StageMeter}, and the downstream's waiting to the meter of the next measured
 * stage found in the subscriber's context (the pass's consumer when there is none).
 *
 * <p><b>Cost.</b> No clock is read per element: an element costs two opaque stores (the output's
 * progress: how many went through, and whether the downstream holds one now; the sampler needs to
 * see them, not to see them in order with anything else) and a test of its count, in an
 * {@code onNext} kept small enough to be inlined where the upstream emits; a stage of batches also
 * counts each batch's bytes (the first element decides which kind of stage it is). The
 * time is split by sampling the output's state in time ({@link StageSampler}, once per millisecond):
 * its downstream busy with an element, demand outstanding (the downstream waits), or no demand. The
 * shares apply to the exact wall time of each interval of {@value PassMetrics#FLUSH_MILLIS} ms at
 * most, at the end of which the meter and the flight recorder get what the interval measured.
 * A stage's buffer fill is sampled at the same ticks, and once when the stage emits its first
 * element (a buffer shuffle's buffer is full then), so that a short pass reports it too.
 * Bytes count exactly for batches and are estimated for examples from one in
 * {@value #EXAMPLE_BYTES_EVERY} (a lazy example, which has read nothing yet, counts no bytes).
 *
 * <p>The stage's own operators find the meter in the subscriber context ({@link StageMeter#from}).
 *
 * <p><b>Reactive Streams semantics.</b> Passes every signal through unchanged, on the thread it came
 * on; holds nothing, so discards nothing.
 *
 * @param <T> the element type
 */
public final class FluxStageProbe<T> extends Flux<T> implements Scannable {
  /** One example in this many is measured for the byte count. */
  static final int EXAMPLE_BYTES_EVERY = 1024;

  private final Flux<? extends T> source;
  private final StageMeter meter;

  /**
   * @param source the stage's output
   * @param meter where the stage's measurements go
   */
  public FluxStageProbe(Flux<? extends T> source, StageMeter meter) {
    this.source = source;
    this.meter = meter;
  }

  @Override
  public void subscribe(CoreSubscriber<? super T> actual) {
    source.subscribe(new ProbeSubscriber<>(actual, meter));
  }

  @Override
  public Object scanUnsafe(Attr key) {
    if (key == Attr.PARENT) {
      return source;
    }
    if (key == Attr.RUN_STYLE) {
      return Attr.RunStyle.SYNC;
    }
    return null;
  }

  static final class ProbeSubscriber<T> extends DemandClock
      implements CoreSubscriber<T>, Subscription, Scannable, StageSampler.Sampled {
    final CoreSubscriber<? super T> actual;
    final Context ctx;
    final StageMeter meter;
    final StageMeter next;
    final boolean handOffs;
    Subscription upstream;

    /** Twice the elements that went through, plus 1 while the downstream handles one (opaque stores). */
    volatile long progress;
    static final VarHandle PROGRESS;

    static {
      try {
        PROGRESS = MethodHandles.lookup().findVarHandle(ProbeSubscriber.class, "progress", long.class);
      } catch (ReflectiveOperationException e) {
        throw new ExceptionInInitializerError(e);
      }
    }

    /** Bytes emitted (ordered stores). */
    volatile long bytes;
    @SuppressWarnings("rawtypes")
    static final AtomicLongFieldUpdater<ProbeSubscriber> BYTES =
        AtomicLongFieldUpdater.newUpdater(ProbeSubscriber.class, "bytes");

    BatchHandOffEvent handOff; // signal thread only
    /** The stage emits elements other than batches (decided by its first element); signal thread only. */
    boolean examples;
    /** Each batch handed on arms the timing of the next hand-off; signal thread only. */
    boolean armAfter;

    // the interval since the last flush; guarded by this
    long windowStart;
    int busyTicks;
    int upTicks;
    int demandTicks;
    double upShare = 1.0;
    long elementsFlushed;
    long bytesFlushed;
    StageWaitsEvent waits;
    boolean closed;

    ProbeSubscriber(CoreSubscriber<? super T> actual, StageMeter meter) {
      this.actual = actual;
      this.meter = meter;
      Context downstream = actual.currentContext();
      StageMeter found = StageMeter.from(downstream);
      this.next = found != null ? found : meter.pass().consumer();
      this.handOffs = found == null && meter.pass().handOffEvents();
      this.ctx = downstream.put(StageMeter.KEY, meter);
    }

    @Override
    public Context currentContext() {
      return ctx;
    }

    @Override
    public void onSubscribe(Subscription s) {
      if (Operators.validate(upstream, s)) {
        upstream = s;
        synchronized (this) {
          windowStart = System.nanoTime();
          waits = meter.beginWaits();
        }
        if (handOffs) {
          arm(System.nanoTime()); // the first batch's wait starts here
        }
        StageSampler.register(this);
        actual.onSubscribe(this);
      }
    }

    @Override
    void armed() {
      handOff = meter.beginHandOff();
    }

    @Override
    public void onNext(T t) {
      long n = ++received;
      // small enough to be inlined where the upstream emits: all but the per-element work is in note()
      if (!examples || (n & (EXAMPLE_BYTES_EVERY - 1)) == 0) {
        note(t, n);
      }
      PROGRESS.setOpaque(this, 2 * n - 1);
      actual.onNext(t);
      PROGRESS.setOpaque(this, 2 * n);
      if (armAfter) {
        arm(System.nanoTime());
      }
    }

    /**
     * What an element adds besides its progress, before the downstream has it: the first element
     * samples the buffer and decides whether the stage emits batches (each counted exactly, and
     * timed as a hand-off when this is the last measured stage) or other elements (one in
     * {@value #EXAMPLE_BYTES_EVERY} measured for the byte count, the only ones that come here).
     */
    private void note(T t, long n) {
      if (n == 1) {
        meter.sampleBuffer(); // a pass shorter than the sampler's period still reports its buffer once
        examples = !(t instanceof Batch);
        armAfter = handOffs && !examples;
      }
      if (t instanceof Batch b) {
        BYTES.lazySet(this, bytes + b.byteSize()); // before the downstream closes it
        if (handOffs) {
          handOff(b);
        }
      } else if ((n & (EXAMPLE_BYTES_EVERY - 1)) == 0) {
        long estimate = exampleBytes(t);
        if (estimate > 0) {
          BYTES.lazySet(this, bytes + estimate * EXAMPLE_BYTES_EVERY);
        }
      }
    }

    /** Commits the hand-off event of {@code b}, begun when the previous batch was handed off. */
    private void handOff(Batch b) {
      BatchHandOffEvent h = handOff;
      handOff = null;
      if (armed) {
        long gap = System.nanoTime() - armedAt;
        long consumerWait = gap - demandWait(gap);
        if (h != null) {
          meter.commitHandOff(h, b.size(), b.byteSize(), consumerWait);
        }
      }
    }

    /** Bytes of a materialized example, or 0 (a lazy example has read nothing yet). */
    static long exampleBytes(Object t) {
      if (!(t instanceof Example e) || e.origin() != null) {
        return 0;
      }
      long n = 0;
      for (Tensor v : e.fields().values()) {
        if (v != null) {
          n += v.byteSize();
        }
      }
      return n;
    }

    /** On the sampler's thread: notes the output's state, and hands on an interval that is over. */
    @Override
    public synchronized void tick(long now) {
      if (closed) {
        return;
      }
      long p = progress;
      if ((p & 1) != 0) {
        busyTicks++;
      } else if (requested > (p >>> 1)) {
        upTicks++;
      } else {
        demandTicks++;
      }
      meter.sampleBuffer();
      if (now - windowStart >= PassMetrics.FLUSH_MILLIS * 1_000_000L) {
        flush(now, false);
      }
    }

    /** Hands the interval up to {@code now} to the meters; guarded by this. */
    private void flush(long now, boolean last) {
      long span = Math.max(0, now - windowStart);
      int ticks = busyTicks + upTicks + demandTicks;
      if (ticks > 0) { // else the state has not been seen to change: the last shares hold
        upShare = upTicks / (double) ticks;
      }
      long up = Math.round(span * upShare);
      long down = span - up;
      long elements = ((progress + 1) >>> 1) - elementsFlushed; // one being handed on counts
      long b = bytes - bytesFlushed;
      elementsFlushed += elements;
      bytesFlushed += b;
      meter.record(span, down, up, elements, b, next);
      if (waits != null) {
        meter.commitWaits(waits, elements, b, down, up);
        waits = last ? null : meter.beginWaits();
      }
      windowStart = now;
      busyTicks = 0;
      upTicks = 0;
      demandTicks = 0;
    }

    /** The pass ended here: the last interval goes to the meters. */
    private void finish() {
      StageSampler.unregister(this);
      synchronized (this) {
        if (closed) {
          return;
        }
        closed = true;
        flush(System.nanoTime(), true);
      }
    }

    @Override
    public void onError(Throwable t) {
      finish();
      actual.onError(t);
    }

    @Override
    public void onComplete() {
      finish();
      actual.onComplete();
    }

    @Override
    public void request(long n) {
      if (Operators.validate(n)) {
        requested(n);
        upstream.request(n);
      }
    }

    @Override
    public void cancel() {
      upstream.cancel();
      finish();
    }

    @Override
    public Object scanUnsafe(Attr key) {
      if (key == Attr.PARENT) {
        return upstream;
      }
      if (key == Attr.ACTUAL) {
        return actual;
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
