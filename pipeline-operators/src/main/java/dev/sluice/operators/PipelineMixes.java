package dev.sluice.operators;

import dev.sluice.core.Example;
import dev.sluice.core.Options;
import dev.sluice.operators.internal.ChooseSource;
import dev.sluice.operators.internal.ConcatenateSource;
import dev.sluice.operators.internal.MixSource;
import dev.sluice.operators.internal.SampleSource;
import dev.sluice.operators.internal.ZipSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * The pipelines behind {@link Pipeline#sample}, {@link Pipeline#choose}, {@link Pipeline#zip} and
 * {@link Pipeline#concatenate}: their argument checks and the mix source each one runs over. A mixed
 * pipeline has no operators yet and takes the first source's {@link Options}.
 */
final class PipelineMixes {
  private PipelineMixes() {}

  /** {@link Pipeline#sample(List, double[], MixOptions)}. */
  static <T> Pipeline<T> sample(List<Pipeline<T>> sources, double[] weights, MixOptions options) {
    Objects.requireNonNull(sources, "sources");
    Objects.requireNonNull(weights, "weights");
    Objects.requireNonNull(options, "options");
    if (options.cycledLength() > sources.size()) {
      throw new IllegalArgumentException("cycled source " + (options.cycledLength() - 1) + " must be in [0, "
          + sources.size() + ")");
    }
    boolean[] cycled = new boolean[sources.size()];
    for (int i = 0; i < cycled.length; i++) {
      cycled[i] = options.isCycled(i);
    }
    return mixed(new SampleSource<>(planned(sources), weights, options.seedOrNull(), options.stopOnEmptyDataset(),
        cycled), sources);
  }

  /** {@link Pipeline#choose(Pipeline, List)}. */
  static <T> Pipeline<T> choose(Pipeline<? extends Number> selector, List<Pipeline<T>> sources) {
    Objects.requireNonNull(selector, "selector");
    Objects.requireNonNull(sources, "sources");
    return mixed(new ChooseSource<>(new PlannedPipeline<>(selector), planned(sources)), sources);
  }

  /** {@link Pipeline#zip(Pipeline, Pipeline, String, String)}. */
  static Pipeline<Example> zip(Pipeline<Example> a, Pipeline<Example> b, String prefixA, String prefixB) {
    Objects.requireNonNull(a, "a");
    Objects.requireNonNull(b, "b");
    Objects.requireNonNull(prefixA, "prefixA");
    Objects.requireNonNull(prefixB, "prefixB");
    return mixed(new ZipSource(new PlannedPipeline<>(a), new PlannedPipeline<>(b), prefixA, prefixB), List.of(a, b));
  }

  /** {@link Pipeline#concatenate(Pipeline, Pipeline)}. */
  static <T> Pipeline<T> concatenate(Pipeline<T> a, Pipeline<T> b) {
    Objects.requireNonNull(a, "a");
    Objects.requireNonNull(b, "b");
    return mixed(new ConcatenateSource<>(List.of(new PlannedPipeline<>(a), new PlannedPipeline<>(b))), List.of(a, b));
  }

  private static <T> List<PlannedPipeline<T>> planned(List<Pipeline<T>> sources) {
    List<PlannedPipeline<T>> out = new ArrayList<>(sources.size());
    for (Pipeline<T> p : sources) {
      out.add(new PlannedPipeline<>(Objects.requireNonNull(p, "sources contains null")));
    }
    return out;
  }

  private static <T> Pipeline<T> mixed(MixSource<T> mix, List<? extends Pipeline<?>> sources) {
    Options first = sources.isEmpty() ? Options.defaults() : sources.get(0).options();
    return Pipeline.over(mix, first);
  }
}
