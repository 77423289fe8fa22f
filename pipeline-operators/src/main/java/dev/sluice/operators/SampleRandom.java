package dev.sluice.operators;

import dev.sluice.core.PipelineContext;
import dev.sluice.core.internal.Mix;
import java.util.SplittableRandom;

/**
 * Per-sample random generators for augmentation: the generator of a sample depends only on
 * (seed, epoch, index), never on the thread, the worker or the order in which samples are mapped,
 * so a parallel {@code map} augments exactly as a sequential one and a resumed run augments as the
 * original did. The next epoch gives every sample a fresh generator.
 *
 * <pre>{@code
 * flux.transform(ParallelMap.mapWithContext((example, ctx) -> {
 *   SplittableRandom rnd = SampleRandom.of(ctx, example.index());
 *   return flip(example, rnd.nextBoolean());
 * }, 4, true));
 * }</pre>
 */
public final class SampleRandom {
  /** Salt that separates per-sample streams from the shuffles' streams. */
  private static final long SALT = 0x0A06_3E47_A710_5EEDL;

  private SampleRandom() {}

  /** The generator of sample {@code index} in the pass described by {@code context}. */
  public static SplittableRandom of(PipelineContext context, long index) {
    return of(context.seed(), context.epoch(), index);
  }

  /** The generator of sample {@code index} for {@code seed} and {@code epoch}. */
  public static SplittableRandom of(long seed, long epoch, long index) {
    return new SplittableRandom(Mix.seed(seed ^ SALT, epoch, index));
  }
}
