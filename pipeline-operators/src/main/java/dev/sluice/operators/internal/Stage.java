package dev.sluice.operators.internal;

/**
 * One step of a {@link dev.sluice.operators.Pipeline}, in the order the user wrote it.
 *
 * <p>The index stages ({@link ShuffleStage}, {@link ShardStage}, {@link TakeStage},
 * {@link SkipStage}, {@link BatchStage}) compile into an index plan when they follow a
 * {@link dev.sluice.core.RandomAccessDataset} directly; everything else, and every index stage after
 * the first stage that cannot be planned, runs on the element path as a Flux transformer. Element
 * operators (map, filter, buffer shuffle, …) implement {@link FluxStage}.
 */
public interface Stage {
  /** A short description for messages ({@code "shard(4, 1, PAD)"}). */
  String describe();
}
