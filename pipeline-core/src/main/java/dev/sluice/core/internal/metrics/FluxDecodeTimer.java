package dev.sluice.core.internal.metrics;

import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Scannable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Operators;

/**
 * Times the decode of one row range of a split: the time the source spent producing the range's
 * batches (from each request, or from the previous batch when demand was left, to the batch), not
 * the time its consumer spent with them. On completion the stage's meter records the range
 * ({@link StageMeter#DECODE}) and a {@code sluice.SplitDecode} flight-recorder event. A clock is read
 * twice per batch, so it belongs on batch-sized elements.
 *
 * <p><b>Reactive Streams semantics.</b> Passes every signal through unchanged; a cancelled or
 * failed range is not recorded.
 *
 * @param <T> the element type
 */
public final class FluxDecodeTimer<T> extends Flux<T> implements Scannable {
  private final Flux<? extends T> source;
  private final StageMeter meter;
  private final String split;
  private final long fromRow;
  private final long rows;

  private FluxDecodeTimer(Flux<? extends T> source, StageMeter meter, String split, long fromRow, long rows) {
    this.source = source;
    this.meter = meter;
    this.split = split;
    this.fromRow = fromRow;
    this.rows = rows;
  }

  /**
   * {@code range} (rows {@code fromRow .. fromRow + rows - 1} of {@code split}) timed for
   * {@code meter}, or as it is when {@code meter} is null or records no decodes.
   */
  public static <T> Flux<T> timed(Flux<T> range, StageMeter meter, String split, long fromRow, long rows) {
    return meter == null || !meter.recordsDecodes() ? range : new FluxDecodeTimer<T>(range, meter, split, fromRow, rows);
  }

  @Override
  public void subscribe(CoreSubscriber<? super T> actual) {
    source.subscribe(new DecodeSubscriber<>(actual, this));
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

  static final class DecodeSubscriber<T> extends DemandClock implements CoreSubscriber<T>, Subscription {
    final CoreSubscriber<? super T> actual;
    final FluxDecodeTimer<T> parent;
    Subscription upstream;
    SplitDecodeEvent event;
    long decodeNanos;

    DecodeSubscriber(CoreSubscriber<? super T> actual, FluxDecodeTimer<T> parent) {
      this.actual = actual;
      this.parent = parent;
    }

    @Override
    public reactor.util.context.Context currentContext() {
      return actual.currentContext();
    }

    @Override
    public void onSubscribe(Subscription s) {
      if (Operators.validate(upstream, s)) {
        upstream = s;
        event = parent.meter.beginDecode();
        arm(System.nanoTime());
        actual.onSubscribe(this);
      }
    }

    /** Adds the armed gap up to {@code now}, less its wait for demand. */
    private void gapEnds(long now) {
      if (armed) {
        long gap = now - armedAt;
        decodeNanos += gap - demandWait(gap);
      }
    }

    @Override
    public void onNext(T t) {
      received++;
      gapEnds(System.nanoTime());
      actual.onNext(t);
      arm(System.nanoTime());
    }

    @Override
    public void onError(Throwable t) {
      actual.onError(t);
    }

    @Override
    public void onComplete() {
      gapEnds(System.nanoTime());
      parent.meter.decoded(event, parent.split, parent.fromRow, parent.rows, decodeNanos);
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
    }
  }
}
