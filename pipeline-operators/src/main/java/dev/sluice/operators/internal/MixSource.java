package dev.sluice.operators.internal;

import dev.sluice.core.Access;
import dev.sluice.core.Dataset;
import dev.sluice.core.HasSchema;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.Schema;
import dev.sluice.core.TensorSpec;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import reactor.core.publisher.Flux;

/**
 * A source made of other pipelines ({@code sample}, {@code choose}, {@code zip},
 * {@code concatenate}): the planner's mix head. Each source pipeline keeps its own plan (index,
 * columnar or element path); the mix takes their passes for the same context and combines them.
 * A pass from a position on is computed as each mix allows (the sources resumed from their own
 * offsets), and the mix's shape, its sources' shapes included, is part of a checkpoint.
 *
 * @param <T> the element type
 */
public sealed interface MixSource<T> extends Dataset<T>, HasSchema
    permits SampleSource, ChooseSource, ZipSource, ConcatenateSource {

  /** Elements queued per open source. */
  int PREFETCH = 2;

  /** The pass for {@code context} without its first {@code skip} elements: exactly the whole pass's elements from there. */
  Flux<T> flux(PipelineContext context, long skip);

  @Override
  default Flux<T> flux(PipelineContext context) {
    return flux(context, 0);
  }

  /** The number of elements of the pass when it is known without reading the sources' elements, else -1. */
  long cardinality(PipelineContext context);

  /** The operator, the name of the mix head's meters ({@code "sample"}). */
  String operator();

  /** The arguments that decide which elements come in which order, and each source's shape, for checkpoints. */
  String shapeKey();

  /** The sources, in order. */
  List<? extends PlannedDataset<?>> sources();

  /** The schema of the examples, or null when unknown (or not examples). */
  @Override
  Schema schema();

  @Override
  default Access access() {
    return Access.STREAM;
  }

  /** The shard a checkpoint records: the first source's that has one, else null. */
  default ShardStage shard() {
    for (PlannedDataset<?> s : sources()) {
      if (s.shard() != null) {
        return s.shard();
      }
    }
    return null;
  }

  /** Why a position of the mix cannot be resumed exactly (a source that cannot be), or null. */
  default String unresumable() {
    List<? extends PlannedDataset<?>> list = sources();
    for (int i = 0; i < list.size(); i++) {
      String why = list.get(i).unresumable();
      if (why != null) {
        return "source " + i + " of " + this + ": " + why;
      }
    }
    return null;
  }

  /** How each source runs, one block per source, each line indented by {@code indent}. */
  default String explainSources(String indent) {
    StringBuilder out = new StringBuilder();
    List<? extends PlannedDataset<?>> list = sources();
    for (int i = 0; i < list.size(); i++) {
      String[] lines = list.get(i).explain().split("\\R");
      for (int j = 0; j < lines.length; j++) {
        out.append(System.lineSeparator()).append(indent).append(j == 0 ? "source " + i + ": " : "  ").append(lines[j]);
      }
    }
    return out.toString();
  }

  /**
   * The shape keys of {@code sources} as short digests, one per source, so that a state taken on
   * another mix names the source that differs: {@code "2 sources (sha256 1a2b3c4d, 5e6f7a8b)"}.
   */
  static String sourcesKey(List<? extends PlannedDataset<?>> sources) {
    StringBuilder out = new StringBuilder().append(sources.size()).append(" sources (sha256 ");
    try {
      for (int i = 0; i < sources.size(); i++) {
        byte[] d = MessageDigest.getInstance("SHA-256").digest(sources.get(i).shapeKey().getBytes(StandardCharsets.UTF_8));
        out.append(i > 0 ? ", " : "").append(HexFormat.of().formatHex(d, 0, 4));
      }
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
    return out.append(')').toString();
  }

  /**
   * The schema shared by {@code sources} where they declare one, for an operator that emits their
   * elements as they are.
   *
   * @throws IllegalArgumentException naming the first field that differs, with both types
   */
  static Schema commonSchema(String operator, List<? extends PlannedDataset<?>> sources) {
    Schema common = null;
    int from = -1;
    for (int i = 0; i < sources.size(); i++) {
      Schema s = sources.get(i).schema();
      if (s == null) {
        continue;
      }
      if (common == null) {
        common = s;
        from = i;
        continue;
      }
      String diff = difference(common, s);
      if (diff != null) {
        throw new IllegalArgumentException(operator + ": sources " + from + " and " + i + " differ: " + diff);
      }
    }
    return common;
  }

  /** The first difference between two schemas, or null when they are equal. */
  private static String difference(Schema a, Schema b) {
    for (TensorSpec f : a.fields()) {
      if (!b.contains(f.name())) {
        return "field '" + f.name() + "' (" + type(f) + ") is missing from the second";
      }
      TensorSpec g = b.field(f.name());
      if (!f.equals(g)) {
        return "field '" + f.name() + "' is " + type(f) + " in the first and " + type(g) + " in the second";
      }
    }
    for (TensorSpec g : b.fields()) {
      if (!a.contains(g.name())) {
        return "field '" + g.name() + "' (" + type(g) + ") is missing from the first";
      }
    }
    return a.equals(b) ? null : "the fields are " + a + " in the first and " + b + " in the second";
  }

  /** A field's type as a schema prints it ({@code float32[3]}). */
  private static String type(TensorSpec f) {
    return f.toString().substring(f.name().length() + 2);
  }
}
