package dev.sluice.operators.internal;

import dev.sluice.core.PipelineContext;
import java.util.List;
import java.util.function.LongFunction;
import java.util.function.Supplier;
import org.reactivestreams.Publisher;

/**
 * How the mix sources ({@code sample}, {@code choose}, {@code concatenate}) open their sources'
 * passes in a {@link FluxMix}, each resumed at an offset.
 */
final class MixPasses {
  private MixPasses() {}

  /**
   * The mix of the passes of {@code sources}, with no source cycled: source {@code i} is opened
   * (when first picked) for {@code context}, from element {@code offsets[i]} on.
   *
   * @param selector the choices, or null when the chooser picks on its own
   * @param chooser a chooser per subscription
   */
  static <T> FluxMix<T> ofPasses(List<? extends PlannedDataset<T>> sources, PipelineContext context, long[] offsets,
      Publisher<? extends Number> selector, Supplier<? extends FluxMix.Chooser> chooser) {
    return new FluxMix<>(sources.size(), passes(sources, cycle -> context), new long[sources.size()], offsets, selector,
        chooser, MixSource.PREFETCH);
  }

  /**
   * Opens source {@code i}'s pass number {@code cycle} as the pass of {@code sources.get(i)} for
   * {@code contextOfCycle.apply(cycle)}, from element {@code offset} on.
   */
  static <T> FluxMix.Sources<T> passes(List<? extends PlannedDataset<T>> sources,
      LongFunction<PipelineContext> contextOfCycle) {
    return (i, cycle, offset) -> {
      PipelineContext context = contextOfCycle.apply(cycle);
      return offset == 0 ? sources.get(i).flux(context) : sources.get(i).flux(context, offset);
    };
  }
}
