package dev.sluice.core;

import java.util.Objects;

/**
 * Pipeline-wide settings, as tf.data's {@code Options}: immutable, built with {@link #builder()}.
 *
 * @param deterministic whether parallel operators must keep element order (default true)
 * @param memory the memory manager batches are allocated from (default {@link MemoryManager#shared()})
 * @param nullPolicy what a null in a non-nullable position does (default {@link NullPolicy#FILL})
 */
public record Options(boolean deterministic, MemoryManager memory, NullPolicy nullPolicy) {
  private static final Options DEFAULTS = new Options(true, MemoryManager.shared(), NullPolicy.FILL);

  /** Options with the given values; {@code memory} and {@code nullPolicy} must not be null. */
  public Options {
    Objects.requireNonNull(memory, "memory");
    Objects.requireNonNull(nullPolicy, "nullPolicy");
  }

  /** Deterministic, the shared memory manager, {@link NullPolicy#FILL}. */
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

    private Builder(Options from) {
      this.deterministic = from.deterministic;
      this.memory = from.memory;
      this.nullPolicy = from.nullPolicy;
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

    /** The options set so far. */
    public Options build() {
      return new Options(deterministic, memory, nullPolicy);
    }
  }
}
