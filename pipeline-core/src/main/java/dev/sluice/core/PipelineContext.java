package dev.sluice.core;

import java.util.Map;
import reactor.util.context.Context;
import reactor.util.context.ContextView;

/**
 * What one pass of a pipeline depends on: the seed, the epoch, this process's rank and the world
 * size. Two subscriptions with the same context yield the same elements.
 *
 * <p>The default seed is the constant 0 shared by every rank (as PyTorch's DistributedSampler), so a
 * global shuffle followed by {@code shard} partitions the same permutation on every rank.
 *
 * <p>Plain Reactor transformers read the context from the Reactor {@link Context} under the key
 * {@code PipelineContext.class} ({@link #from(ContextView)}); it defaults to {@link #defaults()}.
 *
 * @param seed the pipeline seed
 * @param epoch the epoch, from 0
 * @param rank this process's rank in {@code [0, worldSize)}
 * @param worldSize the number of processes, &gt; 0
 * @param localRank this process's rank on its node, ≥ 0
 */
public record PipelineContext(long seed, long epoch, int rank, int worldSize, int localRank) {
  /** Key of the context in a Reactor {@link Context}. */
  public static final Class<PipelineContext> KEY = PipelineContext.class;

  private static final PipelineContext DEFAULTS = new PipelineContext(0, 0, 0, 1, 0);

  /**
   * A context with the given values; throws {@link IllegalArgumentException} naming the first one
   * out of range.
   */
  public PipelineContext {
    if (epoch < 0) {
      throw new IllegalArgumentException("epoch >= 0 required but it was " + epoch);
    }
    if (worldSize <= 0) {
      throw new IllegalArgumentException("worldSize > 0 required but it was " + worldSize);
    }
    if (rank < 0 || rank >= worldSize) {
      throw new IllegalArgumentException("rank in [0, " + worldSize + ") required but it was " + rank);
    }
    if (localRank < 0) {
      throw new IllegalArgumentException("localRank >= 0 required but it was " + localRank);
    }
  }

  /** Seed 0, epoch 0, rank 0 of 1. */
  public static PipelineContext defaults() {
    return DEFAULTS;
  }

  /** The context of this process from its environment variables (see {@link #fromEnvironment(Map)}). */
  public static PipelineContext fromEnvironment() {
    return fromEnvironment(System.getenv());
  }

  /**
   * The context described by {@code env}: torchrun's {@code RANK}, {@code WORLD_SIZE} and
   * {@code LOCAL_RANK}, else Slurm's {@code SLURM_PROCID}, {@code SLURM_NTASKS} and
   * {@code SLURM_LOCALID}, else rank 0 of 1. torchrun's variables win when both are set. Seed 0,
   * epoch 0.
   *
   * @throws IllegalArgumentException naming the variables and their values when they are not
   *     integers, when one of a pair is missing, or when the rank is not below the world size
   */
  public static PipelineContext fromEnvironment(Map<String, String> env) {
    if (env.containsKey("RANK") || env.containsKey("WORLD_SIZE")) {
      return fromVariables(env, "RANK", "WORLD_SIZE", "LOCAL_RANK");
    }
    if (env.containsKey("SLURM_PROCID") || env.containsKey("SLURM_NTASKS")) {
      return fromVariables(env, "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID");
    }
    return DEFAULTS;
  }

  private static PipelineContext fromVariables(Map<String, String> env, String rankVar, String worldVar, String localVar) {
    for (String v : new String[] {rankVar, worldVar}) {
      if (!env.containsKey(v)) {
        String other = v.equals(rankVar) ? worldVar : rankVar;
        throw new IllegalArgumentException(other + "=" + env.get(other) + " is set but " + v + " is not; set both");
      }
    }
    int rank = parse(env, rankVar);
    int world = parse(env, worldVar);
    int local = env.containsKey(localVar) ? parse(env, localVar) : 0;
    if (world <= 0) {
      throw new IllegalArgumentException(worldVar + "=" + world + ": expected a world size > 0");
    }
    if (rank < 0 || rank >= world) {
      throw new IllegalArgumentException(rankVar + "=" + rank + " is out of range for " + worldVar + "=" + world
          + ": expected 0 <= " + rankVar + " < " + worldVar);
    }
    if (local < 0) {
      throw new IllegalArgumentException(localVar + "=" + local + ": expected a local rank >= 0");
    }
    return new PipelineContext(0, 0, rank, world, local);
  }

  private static int parse(Map<String, String> env, String var) {
    String value = env.get(var);
    try {
      return Integer.parseInt(value.trim());
    } catch (NumberFormatException | NullPointerException e) {
      throw new IllegalArgumentException(var + "='" + value + "': expected an integer", e);
    }
  }

  /** The context stored in a Reactor context, or {@link #defaults()} when there is none. */
  public static PipelineContext from(ContextView reactorContext) {
    return reactorContext.getOrDefault(KEY, DEFAULTS);
  }

  /** A Reactor context holding this one, for {@code flux.contextWrite(ctx.asReactorContext())}. */
  public Context asReactorContext() {
    return Context.of(KEY, this);
  }

  /** This context with seed {@code newSeed}. */
  public PipelineContext withSeed(long newSeed) {
    return new PipelineContext(newSeed, epoch, rank, worldSize, localRank);
  }

  /** This context at epoch {@code newEpoch} (≥ 0). */
  public PipelineContext withEpoch(long newEpoch) {
    return new PipelineContext(seed, newEpoch, rank, worldSize, localRank);
  }

  /** This context for {@code rank} of {@code worldSize} processes. */
  public PipelineContext withRank(int newRank, int newWorldSize) {
    return new PipelineContext(seed, epoch, newRank, newWorldSize, localRank);
  }

  /** The same context one epoch later. */
  public PipelineContext nextEpoch() {
    return withEpoch(epoch + 1);
  }
}
