package dev.sluice.operators.internal;

import dev.sluice.core.Dataset;
import dev.sluice.core.Example;
import dev.sluice.core.HasSchema;
import dev.sluice.core.RandomAccessDataset;
import dev.sluice.core.Schema;
import dev.sluice.core.Tensor;
import dev.sluice.core.TensorSpec;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** Schemas of datasets and examples. */
public final class Schemas {
  private Schemas() {}

  /**
   * The fields of {@code example}: each tensor's dtype and shape (a list of strings, a ragged value
   * or a value holding nulls becomes a variable-length field, see {@link TensorSpec#of}).
   */
  public static Schema infer(Example example) {
    List<TensorSpec> specs = new ArrayList<>();
    for (Map.Entry<String, Tensor> f : example.fields().entrySet()) {
      if (f.getValue() == null) {
        throw new IllegalArgumentException("cannot batch: field '" + f.getKey() + "' of example " + example.index()
            + " is null and the dataset declares no schema (give the source a schema: HasSchema)");
      }
      specs.add(TensorSpec.of(f.getKey(), f.getValue(), false));
    }
    return Schema.of(specs);
  }

  /**
   * The schema of a random-access dataset of examples: its own when it has one, else that of its
   * first element; null when it is empty and has none.
   */
  public static Schema of(RandomAccessDataset<?> source) {
    if (source instanceof HasSchema h) {
      return h.schema();
    }
    if (source.size() == 0) {
      return null;
    }
    return infer(asExample(source.get(0), source, 0));
  }

  /** The declared schema of {@code source}, or null. */
  public static Schema declared(Dataset<?> source) {
    return source instanceof HasSchema h ? h.schema() : null;
  }

  public static Example asExample(Object element, Object source, long index) {
    if (element instanceof Example e) {
      return e;
    }
    throw new IllegalArgumentException("batch needs a dataset of Example but " + (index < 0 ? "an element" : "element " + index) + " of " + source
        + " is " + (element == null ? "null" : element.getClass().getName()));
  }
}
