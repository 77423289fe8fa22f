package dev.sluice.operators;

import java.util.BitSet;
import java.util.Objects;
import java.util.OptionalLong;

/**
 * How {@link Pipeline#sample(java.util.List, double[], MixOptions) sample} draws: its seed, what an
 * exhausted source does, and which sources repeat through their own epochs. Immutable; each
 * {@code with} method returns a new value.
 *
 * <p><b>An exhausted source.</b> With {@link #withStopOnEmptyDataset stopOnEmptyDataset} the pass ends when the drawn
 * source has no element left. Without it (the default, as tf.data), the exhausted source's weight
 * is removed, the remaining weights are renormalized and the draw is made again, until every source
 * is exhausted; a source with weight 0 is never drawn.
 *
 * <p><b>Per-source epochs.</b> A source cycled by {@link #withCycled} starts its pass for
 * its next epoch (its own shuffle) whenever its pass ends, so a small source repeats while a large
 * one is read once; a pass then ends when the sources read once end (the first drawn exhausted one
 * with {@code stopOnEmptyDataset}, the last one without). A pass whose sources all cycle never ends
 * ({@code take} bounds it).
 *
 * <pre>{@code
 * MixOptions.defaults().withSeed(7).withStopOnEmptyDataset(true).withCycled(1)
 * }</pre>
 */
public final class MixOptions {
  private static final MixOptions DEFAULTS = new MixOptions(null, false, new BitSet());

  private final Long seed;
  private final boolean stopOnEmptyDataset;
  private final BitSet cycled;

  private MixOptions(Long seed, boolean stopOnEmptyDataset, BitSet cycled) {
    this.seed = seed;
    this.stopOnEmptyDataset = stopOnEmptyDataset;
    this.cycled = cycled;
  }

  /** The pass's context's seed, {@code stopOnEmptyDataset = false} (tf.data's default), no source cycled. */
  public static MixOptions defaults() {
    return DEFAULTS;
  }

  /** These options with the draws' own seed, which wins over the context's. */
  public MixOptions withSeed(long newSeed) {
    return new MixOptions(newSeed, stopOnEmptyDataset, cycled);
  }

  /**
   * These options with tf.data's {@code stop_on_empty_dataset}: true ends the pass when the drawn
   * source is exhausted; false (the default) removes the exhausted source and draws again among the
   * others, their weights renormalized.
   */
  public MixOptions withStopOnEmptyDataset(boolean stop) {
    return new MixOptions(seed, stop, cycled);
  }

  /**
   * These options with the given sources cycled: when a cycled source's pass ends, its pass for
   * its next epoch (its own shuffle) follows, so a small source repeats while a large one is read
   * once; the mixed pass then ends when the sources read once end (as
   * {@link #withStopOnEmptyDataset} says). A cycled pass that is empty from its start counts as
   * exhausted.
   *
   * @param sources indices into the list of sources, &ge; 0
   */
  public MixOptions withCycled(int... sources) {
    BitSet next = (BitSet) cycled.clone();
    for (int i : sources) {
      if (i < 0) {
        throw new IllegalArgumentException("cycled source index >= 0 required but it was " + i);
      }
      next.set(i);
    }
    return new MixOptions(seed, stopOnEmptyDataset, next);
  }

  /** The draws' own seed, or empty for the context's. */
  public OptionalLong seed() {
    return seed == null ? OptionalLong.empty() : OptionalLong.of(seed);
  }

  /** Whether an exhausted drawn source ends the pass. */
  public boolean stopOnEmptyDataset() {
    return stopOnEmptyDataset;
  }

  /** Whether source {@code index} is cycled. */
  public boolean isCycled(int index) {
    return cycled.get(index);
  }

  /** The highest cycled index plus one (0: none). */
  int cycledLength() {
    return cycled.length();
  }

  Long seedOrNull() {
    return seed;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof MixOptions m && Objects.equals(seed, m.seed) && stopOnEmptyDataset == m.stopOnEmptyDataset
        && cycled.equals(m.cycled);
  }

  @Override
  public int hashCode() {
    return Objects.hash(seed, stopOnEmptyDataset, cycled);
  }

  @Override
  public String toString() {
    return "MixOptions[seed=" + (seed == null ? "context" : seed) + ", stopOnEmptyDataset=" + stopOnEmptyDataset
        + ", cycled=" + cycled + "]";
  }
}
