package dev.sluice.core.spi;

import dev.sluice.core.Options;
import reactor.util.context.ContextView;

/**
 * Counts a stage reports about its own work (a cache's hits and misses, rows it skipped, ...) to
 * the metrics of the pass it runs in: each name becomes a counter {@code sluice.stage.<name>} with
 * the stage's tags ({@code pipeline}, {@code stage}, {@code operator}; docs/metrics.md).
 *
 * <p>A stage finds its counters in the Reactor context of its subscription (under the key
 * {@code StageCounters.class}): every measured stage of a pipeline puts its own counters there for
 * the operators and the source upstream of it.
 * Without metrics (no registry in the pipeline's {@link Options#metrics() options}) it finds
 * {@link #NONE}, which ignores what it is given, so a stage may report unconditionally:
 *
 * <pre>{@code
 * Flux.deferContextual(view -> {
 *   StageCounters counters = StageCounters.of(view);
 *   return blocks.doOnNext(block -> counters.add(block.cached() ? "cache.hits" : "cache.misses", block.rows()));
 * })
 * }</pre>
 *
 * <p>A source that counts where no subscription context reaches (a random-access source counts in
 * {@code gather}, which the index path calls outside any flux) implements {@link Source}: the
 * planner hands it the counters of the stage that reads it when it assembles a measured pass.
 *
 * <p>Thread-safe: any thread of the stage may report.
 */
public interface StageCounters {
  /** Counters that record nothing. */
  StageCounters NONE = new StageCounters() {
    @Override
    public void add(String name, long amount) {}

    @Override
    public boolean isRecording() {
      return false;
    }
  };

  /** The counters of the stage whose operators see {@code context}, or {@link #NONE}. */
  static StageCounters of(ContextView context) {
    Object found = context.getOrDefault(StageCounters.class, null);
    return found instanceof StageCounters counters ? counters : NONE;
  }

  /**
   * Adds {@code amount} to the counter {@code sluice.stage.<name>} of this stage.
   *
   * @param name a dotted lower-case name ({@code "cache.hits"}); the same name always means the same quantity
   * @param amount what to add, &ge; 0
   */
  void add(String name, long amount);

  /**
   * Adds {@code amount} to the counter {@code sluice.stage.<name>} of this stage that carries one
   * more tag, {@code tagKey=tagValue}, besides the stage's: counts per part of a stage, such as a
   * mixer's elements per source ({@code add("mix.elements", "source", "2", 1)}). A name is always
   * used with the same tag key. The default records nothing.
   *
   * @param name a dotted lower-case name
   * @param tagKey the extra tag's key
   * @param tagValue the extra tag's value
   * @param amount what to add, &ge; 0
   */
  default void add(String name, String tagKey, String tagValue, long amount) {}

  /** Whether anything is recorded ({@code false} for {@link #NONE}), to skip work that only feeds the counters. */
  boolean isRecording();

  /**
   * A dataset whose counts are made outside the Reactor context of its subscription. A dataset is
   * given the counters of the stage that reads it, before the pass reads anything, when the pass is
   * measured; it reports to them for as long as that pass runs (so a dataset shared by concurrent
   * passes gives each pass a view of its own, as a cache does).
   */
  interface Source {
    /** Reports this pass's counts to {@code counters} too, from now on. */
    void countInto(StageCounters counters);
  }
}
