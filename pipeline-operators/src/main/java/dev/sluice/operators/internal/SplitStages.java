package dev.sluice.operators.internal;

import dev.sluice.core.Dataset;
import dev.sluice.core.Options;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.SplitDataset;
import java.util.ArrayList;
import java.util.List;
import reactor.core.publisher.Flux;

/**
 * The leading stages of a pipeline over a {@link SplitDataset} (docs/design.md, the planner): whatever order
 * the user wrote them in, {@code shuffle()} shuffles the split order per epoch (shared by every
 * rank), {@code shard} takes the rank's contiguous range of that split sequence
 * ({@link SplitPlan}), and then the buffer shuffles run within the rank's stream:
 * {@code shuffle()}'s {@value #SPLIT_SHUFFLE_BUFFER}-element buffer, or instead the buffer of an
 * explicit {@code shuffle(bufferSize)} in the same run ({@code shuffle().shuffle(1000)} is a
 * split-order shuffle plus a 1,000-element buffer).
 */
public final class SplitStages {
  /** The buffer of {@code shuffle()} on a split source. */
  public static final int SPLIT_SHUFFLE_BUFFER = 10_000;

  private SplitStages() {}

  /** One planned pass and the index of the first stage left to the element path. */
  public record Planned(Flux<?> flux, int next) {}

  /** True when {@code shuffle()} appended to {@code stages} is a split-order shuffle. */
  public static boolean acceptsShuffle(Dataset<?> source, List<Stage> stages) {
    if (!(source instanceof SplitDataset)) {
      return false;
    }
    for (Stage s : stages) {
      if (!(s instanceof ShuffleStage || s instanceof ShardStage || s instanceof BufferShuffleStage)) {
        return false;
      }
    }
    return true;
  }

  public static Planned plan(SplitDataset<?> source, List<Stage> stages, Options options, PipelineContext context) {
    boolean shuffleSplits = false;
    Long splitSeed = null;
    ShardStage shard = null;
    List<FluxStage> buffers = new ArrayList<>();
    int i = 0;
    for (; i < stages.size(); i++) {
      Stage s = stages.get(i);
      if (s instanceof ShuffleStage sh) {
        shuffleSplits = true;
        splitSeed = sh.seed();
        buffers.add(BufferShuffleStage.splitDefault(SPLIT_SHUFFLE_BUFFER, sh.seed()));
      } else if (s instanceof ShardStage sh && shard == null) {
        shard = sh;
      } else if (s instanceof BufferShuffleStage b) {
        buffers.add(b);
      } else {
        break;
      }
    }
    if (shuffleSplits && buffers.size() > 1) {
      // An explicit buffer shuffle replaces shuffle()'s default 10,000-element buffer.
      buffers.removeIf(b -> b instanceof BufferShuffleStage bs && bs.isSplitDefault());
    }
    Flux<?> flux = SplitPlan.pass(source, shuffleSplits, splitSeed != null ? splitSeed : context.seed(), context, shard);
    for (FluxStage b : buffers) {
      flux = b.apply(flux, context, options);
    }
    return new Planned(flux, i);
  }
}
