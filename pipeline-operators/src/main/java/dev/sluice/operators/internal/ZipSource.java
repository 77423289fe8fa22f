package dev.sluice.operators.internal;

import dev.sluice.core.Example;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.Schema;
import dev.sluice.core.Tensor;
import dev.sluice.core.TensorSpec;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import reactor.core.publisher.Flux;

/**
 * {@code zip(a, b, prefixA, prefixB)}: example {@code k} of the pass has the fields of example
 * {@code k} of {@code a} (each name prefixed with {@code prefixA}) followed by those of example
 * {@code k} of {@code b} (prefixed with {@code prefixB}), and {@code a}'s index; the pass ends with
 * the shorter source. Two fields with the same name after the prefixes are an error naming the
 * field: at assembly when both sources declare a schema, else when the first pair is merged.
 *
 * <p>A pass from position {@code k} resumes both sources from {@code k}.
 */
public final class ZipSource implements MixSource<Example> {
  /** Examples queued per source. */
  private static final int ZIP_PREFETCH = 32;

  private final List<PlannedDataset<Example>> sources;
  private final String prefixA;
  private final String prefixB;
  private final Schema schema;

  /**
   * @param a the first source
   * @param b the second source
   * @param prefixA prepended to each field name of {@code a} ("" keeps the names)
   * @param prefixB prepended to each field name of {@code b}
   * @throws IllegalArgumentException when both declare a schema and a merged name repeats
   */
  public ZipSource(PlannedDataset<Example> a, PlannedDataset<Example> b, String prefixA, String prefixB) {
    this.sources = List.of(a, b);
    this.prefixA = prefixA;
    this.prefixB = prefixB;
    Schema sa = a.schema();
    Schema sb = b.schema();
    if (sa != null && sb != null) {
      List<TensorSpec> fields = new ArrayList<>();
      List<String> names = new ArrayList<>();
      for (TensorSpec f : sa.fields()) {
        fields.add(f.withName(prefixA + f.name()));
        names.add(prefixA + f.name());
      }
      for (TensorSpec f : sb.fields()) {
        String name = prefixB + f.name();
        if (names.contains(name)) {
          throw collision(name);
        }
        fields.add(f.withName(name));
      }
      this.schema = Schema.of(fields);
    } else {
      this.schema = null;
    }
  }

  private IllegalArgumentException collision(String name) {
    return new IllegalArgumentException("zip: both pipelines have a field '" + name + "' (prefixes \"" + prefixA
        + "\" and \"" + prefixB + "\"); give each side a prefix, e.g. zip(a, b, \"a_\", \"b_\"), or rename the field "
        + "with a map before the zip");
  }

  @Override
  public Flux<Example> flux(PipelineContext context, long skip) {
    return Flux.defer(() -> Flux.zip(pair -> merge((Example) pair[0], (Example) pair[1]), ZIP_PREFETCH,
        from(sources.get(0), context, skip), from(sources.get(1), context, skip)));
  }

  private static Flux<Example> from(PlannedDataset<Example> source, PipelineContext context, long skip) {
    return skip == 0 ? source.flux(context) : source.flux(context, skip);
  }

  private Example merge(Example a, Example b) {
    Example.Builder out = Example.builder(a.index());
    List<String> names = new ArrayList<>();
    put(out, names, prefixA, a);
    put(out, names, prefixB, b);
    return out.build();
  }

  private void put(Example.Builder out, List<String> names, String prefix, Example e) {
    for (Map.Entry<String, Tensor> f : e.fields().entrySet()) {
      String name = prefix + f.getKey();
      if (names.contains(name)) {
        throw collision(name);
      }
      names.add(name);
      if (f.getValue() == null) {
        out.putNull(name);
      } else {
        out.put(name, f.getValue());
      }
    }
  }

  @Override
  public long cardinality(PipelineContext context) {
    long a = sources.get(0).cardinality(context);
    long b = sources.get(1).cardinality(context);
    return a < 0 || b < 0 ? -1 : Math.min(a, b);
  }

  @Override
  public String operator() {
    return "zip";
  }

  @Override
  public String shapeKey() {
    return "zip(\"" + prefixA + "\", \"" + prefixB + "\") of " + MixSource.sourcesKey(sources);
  }

  @Override
  public List<PlannedDataset<Example>> sources() {
    return sources;
  }

  @Override
  public Schema schema() {
    return schema;
  }

  @Override
  public String toString() {
    return prefixA.isEmpty() && prefixB.isEmpty() ? "zip(2 pipelines)"
        : "zip(2 pipelines, \"" + prefixA + "\", \"" + prefixB + "\")";
  }
}
