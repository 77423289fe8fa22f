package dev.sluice.core;

import io.micrometer.core.instrument.MeterRegistry;
import java.util.Objects;

/**
 * Pipeline-wide settings, as tf.data's {@code Options}: immutable, built with {@link #builder()}.
 *
 * @param deterministic whether parallel operators must keep element order (default true)
 * @param memory the memory manager batches are allocated from (default {@link MemoryManager#shared()})
 * @param nullPolicy what a null in a non-nullable position does (default {@link NullPolicy#FILL})
 * @param metrics the registry every stage reports its {@code sluice.stage.*} meters to, or null (the
 *     default) for none: a pipeline without a registry, and without a flight recording that enables
 *     Sluice's events, records nothing and has no measuring operator in its passes
 * @param name the pipeline's name, the {@code pipeline} tag of its meters and events (default
 *     {@value #DEFAULT_NAME})
 */
public record Options(boolean deterministic, MemoryManager memory, NullPolicy nullPolicy, MeterRegistry metrics,
    String name) {
  /** The name of a pipeline whose options give none. */
  public static final String DEFAULT_NAME = "pipeline";

  private static final Options DEFAULTS = new Options(true, MemoryManager.shared(), NullPolicy.FILL, null, DEFAULT_NAME);

  /**
   * Options with the given values; {@code memory}, {@code nullPolicy} and {@code name} must not be
   * null and {@code name} must not be blank; {@code metrics} may be null (no registry).
   */
  public Options {
    Objects.requireNonNull(memory, "memory");
    Objects.requireNonNull(nullPolicy, "nullPolicy");
    Objects.requireNonNull(name, "name");
    if (name.isBlank()) {
      throw new IllegalArgumentException("name must not be blank but it was '" + name + "'");
    }
  }

  /** Deterministic, the shared memory manager, {@link NullPolicy#FILL}, no metrics, named {@value #DEFAULT_NAME}. */
  public static Options defaults() {
    return DEFAULTS;
  }

  /** A builder starting from {@link #defaults()}. */
  public static Builder builder() {
    return new Builder(DEFAULTS);
  }

  /** A builder starting from these options. */
  public Builder toBuilder() {
    return new Builder(this);
  }

  /** What a source does with a null value. */
  public enum NullPolicy {
    /** Deliver a fill value (zeros or empty) and mark the row invalid in the column's validity. */
    FILL,
    /** Fail the read with a {@link DatasetFormatException} naming the row. */
    FAIL
  }

  /** Builds {@link Options}. */
  public static final class Builder {
    private boolean deterministic;
    private MemoryManager memory;
    private NullPolicy nullPolicy;
    private MeterRegistry metrics;
    private String name;

    private Builder(Options from) {
      this.deterministic = from.deterministic;
      this.memory = from.memory;
      this.nullPolicy = from.nullPolicy;
      this.metrics = from.metrics;
      this.name = from.name;
    }

    /** Whether parallel operators keep element order; returns this builder. */
    public Builder deterministic(boolean value) {
      this.deterministic = value;
      return this;
    }

    /** The memory manager batches are allocated from; returns this builder. */
    public Builder memory(MemoryManager value) {
      this.memory = Objects.requireNonNull(value, "memory");
      return this;
    }

    /** What a null in a non-nullable position does; returns this builder. */
    public Builder nullPolicy(NullPolicy value) {
      this.nullPolicy = Objects.requireNonNull(value, "nullPolicy");
      return this;
    }

    /**
     * The registry every stage of the pipeline reports its meters to (docs/metrics.md); returns this
     * builder.
     */
    public Builder metrics(MeterRegistry registry) {
      this.metrics = Objects.requireNonNull(registry, "registry");
      return this;
    }

    /** No metrics registry (the default); returns this builder. */
    public Builder withoutMetrics() {
      this.metrics = null;
      return this;
    }

    /** The pipeline's name, the {@code pipeline} tag of its meters, not blank; returns this builder. */
    public Builder name(String value) {
      Objects.requireNonNull(value, "name");
      if (value.isBlank()) {
        throw new IllegalArgumentException("name must not be blank but it was '" + value + "'");
      }
      this.name = value;
      return this;
    }

    /** The options set so far. */
    public Options build() {
      return new Options(deterministic, memory, nullPolicy, metrics, name);
    }
  }
}
