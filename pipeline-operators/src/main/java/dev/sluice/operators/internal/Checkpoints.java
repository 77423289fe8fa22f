package dev.sluice.operators.internal;

import dev.sluice.core.CheckpointException;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.PipelineState;
import dev.sluice.core.Schema;
import dev.sluice.core.Split;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;

/**
 * The states of a pipeline's runs ({@link PipelineState}): the state a run starts from, and the
 * checks that bind a state to a pipeline before it resumes: the same dataset, the same shape, the
 * same seed and the same shard, or another number of shards on the index path (a resume with
 * another world size, whose offset this class computes).
 */
public final class Checkpoints {
  private Checkpoints() {}

  /** What a state records of the plan's source: its declared access, rows, schema and splits. */
  public static PipelineState.Source identify(Plan plan) {
    String kind = switch (plan.access()) {
      case RANDOM -> "random-access";
      case BLOCKS -> "split";
      case STREAM -> "stream";
    };
    long rows = -1;
    String splits = "";
    if (plan.splits() != null) {
      List<Split> list = plan.splits().splits();
      StringBuilder all = new StringBuilder();
      long total = 0;
      for (Split split : list) {
        all.append(split.id()).append('\t').append(split.rowCount()).append('\n');
        total = total < 0 || !split.hasKnownRowCount() ? -1 : total + split.rowCount();
      }
      rows = total;
      splits = list.size() + " splits, sha256 " + sha256(all.toString());
    }
    if (plan.random() != null) {
      rows = plan.random().size();
    }
    Schema declared = Schemas.declared(plan.source());
    String schema = declared != null ? declared.toString() : "";
    return new PipelineState.Source(kind, rows, schema, splits);
  }

  private static String sha256(String s) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  /**
   * The state before the first element of a run of {@code epochs} epochs from
   * {@code context.epoch()}.
   */
  public static PipelineState start(Plan plan, PipelineContext context, long epochs) {
    ShardStage shard = plan.shard();
    long end = context.epoch() + epochs < context.epoch() ? Long.MAX_VALUE : context.epoch() + epochs;
    return PipelineState.builder()
        .context(context)
        .endEpoch(end)
        .shard(shard == null ? 1 : shard.numShards(), shard == null ? 0 : shard.index())
        .source(identify(plan))
        .stages(plan.shapeKeys())
        .build();
  }

  /**
   * The state a resumed run starts from, in this pipeline's terms: {@code state} checked against
   * the pipeline, with the context's rank and world. Same shard count: the same position. Another
   * shard count (another world size): the rest of the epoch's shared order, re-partitioned among
   * the new shards from position 0, after the positions every old rank consumed
   * ({@link #consumedOrder}).
   *
   * @throws CheckpointException naming what differs between the state and this pipeline
   * @throws UnsupportedOperationException if the pipeline cannot be resumed exactly
   */
  public static PipelineState resume(PipelineState state, Plan plan, PipelineContext context) {
    Objects.requireNonNull(state, "state");
    String why = plan.unresumable();
    if (why != null) {
      throw new UnsupportedOperationException(why);
    }
    String origin = state.origin();
    PipelineState.Source now = identify(plan);
    String differs = differences(state.source(), now);
    if (differs != null) {
      throw new CheckpointException(origin, "field dataset", "taken on another dataset: " + differs);
    }
    List<String> shape = plan.shapeKeys();
    if (!shape.equals(state.stages())) {
      throw new CheckpointException(origin, "field pipeline", "taken on another pipeline: " + stageDifference(
          state.stages(), shape));
    }
    if (context.seed() != state.seed()) {
      throw new CheckpointException(origin, "field seed", "taken with seed " + state.seed() + " but this run's seed is "
          + context.seed());
    }
    ShardStage shard = plan.shard();
    int shards = shard == null ? 1 : shard.numShards();
    int index = shard == null ? 0 : shard.index();
    PipelineState.Builder b = state.toBuilder().context(context.withEpoch(state.epoch())).shard(shards, index);
    if (shards == state.shards()) {
      if (index != state.shard()) {
        throw new CheckpointException(origin, "field shard", "taken on shard " + state.shard() + " of " + shards
            + " but this pipeline is shard " + index + ": each rank resumes from its own state (or, with another "
            + "number of ranks, from any rank's state of the same step)");
      }
      return b.build();
    }
    if (state.isFinished()) {
      return b.build();
    }
    long offset = consumedOrder(state, plan);
    return b.position(0).offset(offset).build();
  }

  /**
   * The positions of the state's epoch's shared order (before the shard) consumed once every rank
   * of the state's world handed out {@code state.position()} elements: the rest is re-partitioned.
   * With {@code PAD} or {@code DROP}, a rank that handed out its whole part means the epoch is
   * done (its padding or dropped tail is not handed on); with {@code UNEVEN} the same holds for the
   * rank whose state is given.
   *
   * @throws CheckpointException if the pipeline is not one whose rest of epoch can be re-partitioned
   */
  static long consumedOrder(PipelineState state, Plan plan) {
    String why = plan.notRepartitionable();
    if (why != null) {
      throw new CheckpointException(state.origin(), "field shards", "taken on " + state.shards() + " shards and "
          + "resumed on another number: " + why);
    }
    List<Stage> ordered = plan.ordered();
    long before = IndexPlan.sequence(plan.random(), ordered.subList(0, plan.shardAt()), state.context(), 0).seq()
        .length();
    long rest = Math.max(0, before - state.offset());
    ShardStage shard = plan.shard();
    long count = shard.policy().count(rest, state.shards(), state.shard());
    long handed = plan.elementsPerOutput();
    long elements = handed == 0 ? 0 : Saturated.multiply(state.position(), handed);
    long consumed = elements >= count ? rest : Math.min(rest, Saturated.multiply(elements, state.shards()));
    return state.offset() + consumed;
  }

  /** What differs between two sources, or null. */
  private static String differences(PipelineState.Source then, PipelineState.Source now) {
    List<String> out = new ArrayList<>();
    if (!then.kind().equals(now.kind())) {
      out.add("a " + then.kind() + " source then, a " + now.kind() + " source now");
    }
    if (then.rows() != now.rows()) {
      out.add(rows(then.rows()) + " then, " + rows(now.rows()) + " now");
    }
    if (!then.schema().equals(now.schema())) {
      out.add("fields " + then.schema() + " then, " + now.schema() + " now");
    }
    if (!then.splits().equals(now.splits())) {
      out.add("splits (" + then.splits() + ") then, (" + now.splits() + ") now");
    }
    return out.isEmpty() ? null : String.join("; ", out);
  }

  private static String rows(long rows) {
    return rows < 0 ? "an unknown number of rows" : rows + " rows";
  }

  /** The first stage that differs between two shapes, as a message. */
  private static String stageDifference(List<String> then, List<String> now) {
    int i = 0;
    while (i < then.size() && i < now.size() && then.get(i).equals(now.get(i))) {
      i++;
    }
    String a = i < then.size() ? then.get(i) : "nothing";
    String b = i < now.size() ? now.get(i) : "nothing";
    return "stage " + (i + 1) + " was " + a + " and is now " + b + " (then " + then + ", now " + now + ")";
  }
}
