package dev.sluice.core.internal.metrics;

import dev.sluice.core.Options;
import io.micrometer.core.instrument.MeterRegistry;

/**
 * What one pass of a pipeline measures, decided when the pass is assembled: the registry of its
 * options (or none) and the Sluice flight-recorder events a running recording enables. A pass with
 * neither gets no {@code PassMetrics} ({@link #of} returns null) and so no measuring operator at all.
 */
public final class PassMetrics {
  /** How often, at most, a stage hands what it measured to the registry and the flight recorder. */
  public static final long FLUSH_MILLIS = 100;

  private final MeterRegistry registry;
  private final String pipeline;
  private final boolean stageEvents;
  private final boolean decodeEvents;
  private final boolean handOffEvents;
  private final int consumerPosition;
  private volatile StageMeter consumer;

  private PassMetrics(MeterRegistry registry, String pipeline, boolean stageEvents, boolean decodeEvents,
      boolean handOffEvents, int consumerPosition) {
    this.registry = registry;
    this.pipeline = pipeline;
    this.stageEvents = stageEvents;
    this.decodeEvents = decodeEvents;
    this.handOffEvents = handOffEvents;
    this.consumerPosition = consumerPosition;
  }

  /**
   * The metrics of a pass with {@code options}, or null when there is nothing to record (no registry
   * and no recording that enables Sluice's events).
   *
   * @param consumerPosition the position given to the pass's consumer (one past the last stage)
   */
  public static PassMetrics of(Options options, int consumerPosition) {
    boolean stage = Jfr.enabled(StageWaitsEvent::new);
    boolean decode = Jfr.enabled(SplitDecodeEvent::new);
    boolean handOff = Jfr.enabled(BatchHandOffEvent::new);
    if (options.metrics() == null && !stage && !decode && !handOff) {
      return null;
    }
    return new PassMetrics(options.metrics(), options.name(), stage, decode, handOff, consumerPosition);
  }

  /** The registry, or null when only the flight recorder listens. */
  public MeterRegistry registry() {
    return registry;
  }

  /** The pipeline's name (the {@code pipeline} tag). */
  public String pipeline() {
    return pipeline;
  }

  boolean stageEvents() {
    return stageEvents;
  }

  boolean decodeEvents() {
    return decodeEvents;
  }

  boolean handOffEvents() {
    return handOffEvents;
  }

  /** The meters of the stage at {@code position} (0 is the source) whose operator is {@code operator}. */
  public StageMeter stage(int position, String operator) {
    return new StageMeter(this, position, operator);
  }

  /** The consumer of the pass, as a stage after the last one: what it waited for. */
  StageMeter consumer() {
    StageMeter c = consumer;
    if (c == null) {
      synchronized (this) {
        c = consumer;
        if (c == null) {
          c = new StageMeter(this, consumerPosition, StageMeter.CONSUMER);
          consumer = c;
        }
      }
    }
    return c;
  }
}
