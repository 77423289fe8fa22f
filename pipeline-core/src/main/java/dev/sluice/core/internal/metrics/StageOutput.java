package dev.sluice.core.internal.metrics;

import dev.sluice.core.Batch;
import dev.sluice.core.Example;
import dev.sluice.core.Tensor;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.atomic.AtomicLongFieldUpdater;
import reactor.util.context.Context;

/**
 * The measurement of one stage's output: the elements and bytes it emits, and how the time of the
 * pass splits between the stage waiting for its downstream (busy with the previous element, or not
 * asking) and its downstream waiting for it (it asked and nothing came). Reports to a
 * {@link StageMeter}, and the downstream's waiting to the meter of the next measured stage found in
 * the downstream's context (the pass's consumer when there is none).
 *
 * <p>Whoever emits the stage's elements drives it: a {@link FluxStageProbe} between the stage and
 * its downstream, or a publisher of Sluice that measures its own output ({@link SelfMeasured}), so
 * that no subscriber is added to the path of its elements. The emitter calls {@link #start} when it
 * is subscribed (before its downstream's {@code onSubscribe}), {@link #request} with each request
 * of its downstream, {@link #before} and {@link #after} around each {@code onNext} it makes, and
 * {@link #finish} when it terminates or is cancelled; an operator gives its upstream
 * {@link #context()} as its subscriber context, so the operators of the stage find the meter there
 * ({@link StageMeter#from}).
 *
 * <p><b>Cost.</b> No clock is read per element: an element costs two opaque stores (the output's
 * progress: how many went through, and whether the downstream holds one now; the sampler needs to
 * see them, not to see them in order with anything else) and a test of its count, in methods small
 * enough to be inlined into the emitter; a stage of batches also counts each batch's bytes (the
 * first element decides which kind of stage it is). The time is split by sampling the output's
 * state in time ({@link StageSampler}, once per millisecond): its downstream busy with an element,
 * demand outstanding (the downstream waits), or no demand. The shares apply to the exact wall time
 * of each interval of {@value PassMetrics#FLUSH_MILLIS} ms at most, at the end of which the meter
 * and the flight recorder get what the interval measured. A stage's buffer fill is sampled at the
 * same ticks, and once when the stage emits its first element (a buffer shuffle's buffer is full
 * then), so that a short pass reports it too. Bytes count exactly for batches and are estimated for
 * examples from one in {@value #EXAMPLE_BYTES_EVERY} (a lazy example, which has read nothing yet,
 * counts no bytes).
 */
public final class StageOutput extends DemandClock implements StageSampler.Sampled {
  /** One example in this many is measured for the byte count. */
  static final int EXAMPLE_BYTES_EVERY = 1024;

  private final StageMeter meter;
  private final StageMeter next;
  private final boolean handOffs;
  private final Context context;

  /** Twice the elements that went through, plus 1 while the downstream handles one (opaque stores). */
  volatile long progress;
  static final VarHandle PROGRESS;

  static {
    try {
      PROGRESS = MethodHandles.lookup().findVarHandle(StageOutput.class, "progress", long.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  /** Bytes emitted (ordered stores). */
  volatile long bytes;
  static final AtomicLongFieldUpdater<StageOutput> BYTES = AtomicLongFieldUpdater.newUpdater(StageOutput.class, "bytes");

  // signal thread only
  private BatchHandOffEvent handOff;
  /** The stage emits elements other than batches (decided by its first element). */
  private boolean examples;
  /** Each batch handed on arms the timing of the next hand-off. */
  private boolean armAfter;

  // the interval since the last flush; guarded by this
  private long windowStart;
  private int busyTicks;
  private int upTicks;
  private int demandTicks;
  private double upShare = 1.0;
  private long elementsFlushed;
  private long bytesFlushed;
  private StageWaitsEvent waits;
  private boolean closed;

  /**
   * @param meter where the stage's measurements go
   * @param downstream the context of the stage's downstream subscriber
   */
  public StageOutput(StageMeter meter, Context downstream) {
    this.meter = meter;
    StageMeter found = StageMeter.from(downstream);
    this.next = found != null ? found : meter.pass().consumer();
    this.handOffs = found == null && meter.pass().handOffEvents();
    this.context = downstream.put(StageMeter.KEY, meter);
  }

  /** The downstream's context with this stage's meter: the context an operator gives its upstream. */
  public Context context() {
    return context;
  }

  /** The emitter was subscribed: the pass's time starts here. */
  public void start() {
    synchronized (this) {
      windowStart = System.nanoTime();
      waits = meter.beginWaits();
    }
    if (handOffs) {
      arm(System.nanoTime()); // the first batch's wait starts here
    }
    StageSampler.register(this);
  }

  /** The downstream requested {@code n} more (a valid request). */
  public void request(long n) {
    requested(n);
  }

  /** Requested by the downstream in total. */
  public long requestedFromDownstream() {
    return requested;
  }

  @Override
  void armed() {
    handOff = meter.beginHandOff();
  }

  /** Before the emitter hands {@code t} on; returns what {@link #after} takes. */
  public long before(Object t) {
    long n = ++received;
    if (!examples || (n & (EXAMPLE_BYTES_EVERY - 1)) == 0) {
      note(t, n);
    }
    PROGRESS.setOpaque(this, 2 * n - 1);
    return n;
  }

  /** After the downstream's {@code onNext} of the element for which {@link #before} returned {@code n}. */
  public void after(long n) {
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
  private void note(Object t, long n) {
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

  /** The pass ended at this stage (it terminated, or was cancelled): the last interval goes to the meters. Idempotent. */
  public void finish() {
    StageSampler.unregister(this);
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
      flush(System.nanoTime(), true);
    }
  }
}
