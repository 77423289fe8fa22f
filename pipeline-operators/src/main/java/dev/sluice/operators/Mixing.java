package dev.sluice.operators;

import dev.sluice.core.Example;
import dev.sluice.core.PipelineContext;
import dev.sluice.operators.internal.ChooseSource;
import dev.sluice.operators.internal.PlannedDataset;
import dev.sluice.operators.internal.SampleSource;
import dev.sluice.operators.internal.ZipSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;

/**
 * tf.data's {@code sample_from_datasets}, {@code choose_from_datasets} and {@code zip} over plain
 * publishers, for code that builds its own {@code Flux}es (as {@link Interleave} does for
 * {@code interleave}); {@link Pipeline#sample}, {@link Pipeline#choose} and {@link Pipeline#zip} are
 * the same operators over pipelines, with exact resume. Each subscription subscribes to the
 * sources again; {@code concatenate} is Reactor's {@code Flux.concat}.
 *
 * <p><b>Reactive Streams semantics.</b> {@code sample} and {@code choose} subscribe to a source when
 * it is first picked and keep up to 2 of its elements queued; emit on demand; a source's error ends
 * the flux where that source's next element would have come, and cancels the others; cancel cancels every open source.
 *
 * <p><b>Discard support.</b> Elements queued from the sources go to the discard hook on cancel,
 * error or an early end.
 */
public final class Mixing {
  private Mixing() {}

  /**
   * {@link #sample(List, double[], long, boolean)} with {@code stopOnEmptyDataset = false}: an
   * exhausted source's weight is removed and the others renormalized.
   */
  public static <T> Flux<T> sample(List<? extends Publisher<? extends T>> sources, double[] weights, long seed) {
    return sample(sources, weights, seed, false);
  }

  /**
   * Each element from source {@code i} with probability {@code weights[i] / sum(weights)}, drawn
   * from a {@code SplittableRandom} of {@code seed} (the same sequence for the same seed and
   * sources); see {@link Pipeline#sample(List, double[], MixOptions)} for what an exhausted source
   * does.
   *
   * @param sources the publishers to draw from, at least one
   * @param weights one per source, finite and &ge; 0, not all 0
   * @param seed the draws' seed
   * @param stopOnEmptyDataset end when the drawn source is exhausted (tf.data default false)
   */
  public static <T> Flux<T> sample(List<? extends Publisher<? extends T>> sources, double[] weights, long seed,
      boolean stopOnEmptyDataset) {
    Objects.requireNonNull(weights, "weights");
    SampleSource<T> mix = new SampleSource<>(wrap(sources), weights, seed, stopOnEmptyDataset,
        new boolean[sources.size()]);
    return mix.flux(PipelineContext.defaults());
  }

  /**
   * Element {@code k} is the next element of source {@code selector[k]}; ends when the selector ends
   * or a chosen source is exhausted; a value outside {@code [0, sources.size())} fails the flux with
   * a {@link dev.sluice.core.DatasetException} naming it and its position.
   */
  public static <T> Flux<T> choose(Publisher<? extends Number> selector, List<? extends Publisher<? extends T>> sources) {
    Objects.requireNonNull(selector, "selector");
    return new ChooseSource<>(new Wrapped<>(selector), wrap(sources)).flux(PipelineContext.defaults());
  }

  /**
   * Examples zipped by position, their fields merged under the prefixes ({@link Pipeline#zip(Pipeline,
   * Pipeline, String, String)}); ends with the shorter; a repeated field name fails the flux naming it.
   */
  public static Flux<Example> zip(Publisher<Example> a, Publisher<Example> b, String prefixA, String prefixB) {
    return new ZipSource(new Wrapped<>(a), new Wrapped<>(b), Objects.requireNonNull(prefixA, "prefixA"),
        Objects.requireNonNull(prefixB, "prefixB")).flux(PipelineContext.defaults());
  }

  private static <T> List<PlannedDataset<T>> wrap(List<? extends Publisher<? extends T>> sources) {
    Objects.requireNonNull(sources, "sources");
    List<PlannedDataset<T>> out = new ArrayList<>(sources.size());
    for (Publisher<? extends T> p : sources) {
      out.add(new Wrapped<>(Objects.requireNonNull(p, "sources contains null")));
    }
    return out;
  }

  /** A publisher as a dataset whose every pass subscribes to it. */
  private record Wrapped<T>(Publisher<? extends T> publisher) implements PlannedDataset<T> {
    @Override
    public Flux<T> flux(PipelineContext context) {
      return Flux.from(publisher);
    }

    @Override
    public Flux<T> flux(PipelineContext context, long offset) {
      return Flux.<T>from(publisher).skip(offset);
    }

    @Override
    public long cardinality(PipelineContext context) {
      return -1;
    }
  }
}
