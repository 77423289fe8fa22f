package dev.sluice.operators.internal;

import dev.sluice.core.DatasetException;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.Schema;
import java.util.List;
import reactor.core.publisher.Flux;

/**
 * {@code choose(selector, sources)}: element {@code k} of the pass is the next element of source
 * {@code selector[k]}; the pass ends when the selector ends or a chosen source is exhausted
 * (tf.data's {@code stop_on_empty_dataset=True}). A selector value that is not a source index
 * fails the pass, naming the value and its position.
 *
 * <p>A pass from position {@code k} reads the selector's first {@code k} values again (not the
 * sources' elements), counts how many elements each source gave, and resumes every source from
 * its count and the selector from {@code k}.
 *
 * @param <T> the element type
 */
public final class ChooseSource<T> implements MixSource<T> {
  private final PlannedDataset<? extends Number> selector;
  private final List<PlannedDataset<T>> sources;
  private final Schema schema;

  /**
   * @param selector the source index of each element
   * @param sources the sources, at least one
   */
  public ChooseSource(PlannedDataset<? extends Number> selector, List<? extends PlannedDataset<T>> sources) {
    if (sources.isEmpty()) {
      throw new IllegalArgumentException("choose needs at least one source but there are none");
    }
    this.selector = selector;
    this.sources = List.copyOf(sources);
    this.schema = MixSource.commonSchema("choose", this.sources);
  }

  @Override
  public Flux<T> flux(PipelineContext context, long skip) {
    int n = sources.size();
    if (skip == 0) {
      return Flux.defer(() -> mix(context, selector.flux(context), 0, new long[n]));
    }
    return Flux.defer(() -> {
      long[] counts = new long[n];
      Picks picks = new Picks(0);
      return selector.flux(context).take(skip)
          .doOnNext(v -> counts[picks.next(v.longValue())]++)
          .count()
          .flatMapMany(read -> read < skip ? Flux.empty() : mix(context, selector.flux(context, skip), skip, counts));
    });
  }

  private Flux<T> mix(PipelineContext context, Flux<? extends Number> choices, long first, long[] offsets) {
    return MixPasses.ofPasses(sources, context, offsets, choices, () -> new Picks(first));
  }

  /** Checks each selector value; a chosen source that is exhausted ends the pass. */
  private final class Picks implements FluxMix.Chooser {
    private long position;

    Picks(long first) {
      this.position = first;
    }

    @Override
    public int next(long selected) {
      long at = position++;
      if (selected < 0 || selected >= sources.size()) {
        throw new DatasetException("choose selector " + selector, "element " + at, "value " + selected
            + " is not a source index: expected a value in [0, " + sources.size() + ")");
      }
      return (int) selected;
    }

    @Override
    public int exhausted(int source, boolean emptyPass) {
      return END;
    }
  }

  @Override
  public long cardinality(PipelineContext context) {
    return -1;
  }

  @Override
  public String operator() {
    return "choose";
  }

  @Override
  public String shapeKey() {
    return "choose(selector " + selector.shapeKey() + ") of " + MixSource.sourcesKey(sources);
  }

  @Override
  public List<PlannedDataset<T>> sources() {
    return sources;
  }

  @Override
  public Schema schema() {
    return schema;
  }

  @Override
  public String unresumable() {
    String why = selector.unresumable();
    return why != null ? "the selector of " + this + ": " + why : MixSource.super.unresumable();
  }

  @Override
  public String explainSources(String indent) {
    String[] lines = selector.explain().split("\\R");
    StringBuilder out = new StringBuilder();
    for (int j = 0; j < lines.length; j++) {
      out.append(System.lineSeparator()).append(indent).append(j == 0 ? "selector: " : "  ").append(lines[j]);
    }
    return out.append(MixSource.super.explainSources(indent)).toString();
  }

  @Override
  public String toString() {
    return "choose(selector, " + sources.size() + " pipelines)";
  }
}
