package dev.sluice.core.internal.metrics;

import reactor.core.publisher.Flux;

/**
 * An operator or source that measures its own output when given a meter, so that measuring its
 * stage adds no subscriber between it and its downstream ({@link StageOutput} says what it must
 * call).
 */
public interface SelfMeasured {
  /** This publisher, reporting its output to {@code meter}. */
  Flux<?> measuredBy(StageMeter meter);
}
