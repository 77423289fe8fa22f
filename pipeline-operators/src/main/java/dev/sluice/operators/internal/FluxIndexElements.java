package dev.sluice.operators.internal;

import dev.sluice.core.internal.Fatal;
import dev.sluice.core.Example;
import dev.sluice.core.HasSchema;
import dev.sluice.core.RandomAccessDataset;
import dev.sluice.core.internal.metrics.SelfMeasured;
import dev.sluice.core.internal.metrics.StageMeter;
import dev.sluice.core.internal.metrics.StageOutput;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLongFieldUpdater;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Scannable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Operators;

/**
 * The elements of a random-access source at the positions of an {@link IndexSequence}, one per
 * position, on the thread that requests them: the index path's source when element operators follow
 * it. The indices are computed 256 at a time. A dataset of examples with a declared schema yields
 * {@link Example#lazy} rows: nothing is read until an operator looks at a field, and {@code batch}
 * gathers unchanged rows in bulk.
 *
 * <p>Measured, it measures its own output ({@link SelfMeasured}): a measured pass adds no subscriber
 * between the source and the first element operator.
 *
 * <p><b>Reactive Streams semantics.</b> Emits only what was requested, synchronously within
 * {@code request}; a failure of the source ({@code get}) ends the pass with that error; holds no
 * element between requests, so a cancel discards nothing.
 */
final class FluxIndexElements extends Flux<Object> implements SelfMeasured, Scannable {
  private static final int BLOCK = 256;

  private final RandomAccessDataset<?> source;
  private final IndexSequence seq;
  private final StageMeter meter; // measures the output, or null

  FluxIndexElements(RandomAccessDataset<?> source, IndexSequence seq) {
    this(source, seq, null);
  }

  private FluxIndexElements(RandomAccessDataset<?> source, IndexSequence seq, StageMeter meter) {
    this.source = source;
    this.seq = seq;
    this.meter = meter;
  }

  @Override
  public Flux<?> measuredBy(StageMeter stageMeter) {
    return new FluxIndexElements(source, seq, Objects.requireNonNull(stageMeter, "stageMeter"));
  }

  @Override
  public void subscribe(CoreSubscriber<? super Object> actual) {
    StageOutput out = meter == null ? null : new StageOutput(meter, actual.currentContext());
    ElementsSubscription s = new ElementsSubscription(actual, source, seq, out);
    if (out != null) {
      out.start();
    }
    actual.onSubscribe(s);
  }

  @Override
  public Object scanUnsafe(Attr key) {
    if (key == Attr.RUN_STYLE) {
      return Attr.RunStyle.SYNC;
    }
    return null;
  }

  static final class ElementsSubscription implements Subscription, Scannable {
    final CoreSubscriber<? super Object> actual;
    final RandomAccessDataset<?> source;
    final RandomAccessDataset<Example> rows; // the source when it yields lazy rows, else null
    final IndexSequence seq;
    final long length;
    final StageOutput out; // or null
    final long[] block = new long[BLOCK];

    long position; // the next position; emitter only
    int at;        // position % BLOCK, without a 64-bit division per element

    volatile boolean cancelled;
    volatile long requested;
    static final AtomicLongFieldUpdater<ElementsSubscription> REQUESTED =
        AtomicLongFieldUpdater.newUpdater(ElementsSubscription.class, "requested");

    @SuppressWarnings("unchecked")
    ElementsSubscription(CoreSubscriber<? super Object> actual, RandomAccessDataset<?> source, IndexSequence seq,
        StageOutput out) {
      this.actual = actual;
      this.source = source;
      this.rows = source instanceof HasSchema h && h.schema() != null ? (RandomAccessDataset<Example>) source : null;
      this.seq = seq;
      this.length = seq.length();
      this.out = out;
    }

    @Override
    public void request(long n) {
      if (Operators.validate(n)) {
        if (out != null) {
          out.request(n);
        }
        if (Operators.addCap(REQUESTED, this, n) == 0) { // else the emitter running below sees it
          emit(n);
        }
      }
    }

    @Override
    public void cancel() {
      if (!cancelled) {
        cancelled = true;
        if (out != null) {
          out.finish();
        }
      }
    }

    /** Emits while there is demand; the one thread that does (the request that found none). */
    private void emit(long n) {
      final CoreSubscriber<? super Object> a = actual;
      long e = 0;
      for (;;) {
        while (e != n && position < length) {
          if (cancelled) {
            return;
          }
          Object v;
          try {
            v = next();
          } catch (Throwable t) {
            cancelled = true;
            if (out != null) {
              out.finish();
            }
            a.onError(Operators.onOperatorError(this, Fatal.signalable(t, "read"), a.currentContext()));
            return;
          }
          if (out == null) {
            a.onNext(v);
          } else {
            long k = out.before(v);
            a.onNext(v);
            out.after(k);
          }
          e++;
        }
        if (cancelled) {
          return;
        }
        if (position >= length) {
          cancelled = true; // terminated: later requests do nothing
          if (out != null) {
            out.finish();
          }
          a.onComplete();
          return;
        }
        n = requested;
        if (n == e) {
          n = REQUESTED.addAndGet(this, -e);
          if (n == 0) {
            return;
          }
          e = 0;
        }
      }
    }

    /** The element at the next position. */
    private Object next() {
      long p = position;
      int i = at;
      if (i == 0) {
        seq.fill(p, block, (int) Math.min(BLOCK, length - p));
      }
      position = p + 1;
      at = i + 1 == BLOCK ? 0 : i + 1;
      return rows != null ? Example.lazy(rows, block[i]) : source.get(block[i]);
    }

    @Override
    public Object scanUnsafe(Attr key) {
      if (key == Attr.ACTUAL) {
        return actual;
      }
      if (key == Attr.CANCELLED || key == Attr.TERMINATED) {
        return cancelled;
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
