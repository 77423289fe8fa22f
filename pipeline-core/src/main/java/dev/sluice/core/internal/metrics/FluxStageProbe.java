package dev.sluice.core.internal.metrics;

import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Scannable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Operators;
import reactor.util.context.Context;

/**
 * Measures a stage at its output ({@link StageOutput}) from a subscriber between the stage and its
 * downstream, for the stages that do not measure themselves ({@link SelfMeasured}).
 *
 * <p><b>Reactive Streams semantics.</b> Passes every signal through unchanged, on the thread it came
 * on; holds nothing, so discards nothing.
 *
 * @param <T> the element type
 */
public final class FluxStageProbe<T> extends Flux<T> implements Scannable {
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

  static final class ProbeSubscriber<T> implements CoreSubscriber<T>, Subscription, Scannable {
    final CoreSubscriber<? super T> actual;
    final StageOutput out;
    Subscription upstream;

    ProbeSubscriber(CoreSubscriber<? super T> actual, StageMeter meter) {
      this.actual = actual;
      this.out = new StageOutput(meter, actual.currentContext());
    }

    @Override
    public Context currentContext() {
      return out.context();
    }

    @Override
    public void onSubscribe(Subscription s) {
      if (Operators.validate(upstream, s)) {
        upstream = s;
        out.start();
        actual.onSubscribe(this);
      }
    }

    @Override
    public void onNext(T t) {
      long n = out.before(t);
      actual.onNext(t);
      out.after(n);
    }

    @Override
    public void onError(Throwable t) {
      out.finish();
      actual.onError(t);
    }

    @Override
    public void onComplete() {
      out.finish();
      actual.onComplete();
    }

    @Override
    public void request(long n) {
      if (Operators.validate(n)) {
        out.request(n);
        upstream.request(n);
      }
    }

    @Override
    public void cancel() {
      upstream.cancel();
      out.finish();
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
        return out.requestedFromDownstream();
      }
      if (key == Attr.RUN_STYLE) {
        return Attr.RunStyle.SYNC;
      }
      return null;
    }
  }
}
