package dev.sluice.operators.internal;

import dev.sluice.core.PipelineContext;
import dev.sluice.core.Schema;
import java.util.List;
import reactor.core.publisher.Flux;

/**
 * {@code concatenate(a, b)}: the elements of each source's pass, one source after the other; a
 * source is opened when the one before it is exhausted. Where two sources declare a schema they
 * must declare the same.
 *
 * <p>A pass from position {@code k} starts in the source that holds it, from its offset there,
 * when the lengths of the sources before it are known; otherwise it is replayed from its start.
 *
 * @param <T> the element type
 */
public final class ConcatenateSource<T> implements MixSource<T> {
  private final List<PlannedDataset<T>> sources;
  private final Schema schema;

  /**
   * @param sources the sources, at least one
   * @throws IllegalArgumentException when two sources declare different schemas, naming the field
   */
  public ConcatenateSource(List<? extends PlannedDataset<T>> sources) {
    if (sources.isEmpty()) {
      throw new IllegalArgumentException("concatenate needs at least one source but there are none");
    }
    this.sources = List.copyOf(sources);
    this.schema = MixSource.commonSchema("concatenate", this.sources);
  }

  @Override
  public Flux<T> flux(PipelineContext context, long skip) {
    return Flux.defer(() -> {
      int n = sources.size();
      long k = skip;
      int first = 0;
      while (k > 0 && first < n) {
        long length = sources.get(first).cardinality(context);
        if (length < 0) {
          return mix(context, 0, new long[n]).skip(skip);
        }
        if (k < length) {
          break;
        }
        k -= length;
        first++;
      }
      if (first == n) {
        return Flux.empty();
      }
      long[] offsets = new long[n];
      offsets[first] = k;
      return mix(context, first, offsets);
    });
  }

  private Flux<T> mix(PipelineContext context, int first, long[] offsets) {
    return MixPasses.ofPasses(sources, context, offsets, null, () -> new InTurn(first));
  }

  /** One source after the other. */
  private final class InTurn implements FluxMix.Chooser {
    private int current;

    InTurn(int first) {
      this.current = first;
    }

    @Override
    public int next(long selected) {
      return current < sources.size() ? current : END;
    }

    @Override
    public int exhausted(int source, boolean emptyPass) {
      current++;
      return current < sources.size() ? REDRAW : END;
    }
  }

  @Override
  public long cardinality(PipelineContext context) {
    long total = 0;
    for (PlannedDataset<T> s : sources) {
      long length = s.cardinality(context);
      if (length < 0) {
        return -1;
      }
      total = Saturated.add(total, length);
    }
    return total;
  }

  @Override
  public String operator() {
    return "concatenate";
  }

  @Override
  public String shapeKey() {
    return "concatenate of " + MixSource.sourcesKey(sources);
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
  public String toString() {
    return "concatenate(" + sources.size() + " pipelines)";
  }
}
