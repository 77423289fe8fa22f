package dev.sluice.core;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * One element of a dataset: named {@link Tensor} fields plus its {@code index}, the position of the
 * element in its source. The index is provenance: it makes exactly-once checks, checkpoints and
 * per-sample seeds possible.
 *
 * <p>An example never owns memory that must be released: its tensors view a mapping or GC-managed
 * buffers. A field may be null (absent value of a nullable column): {@link #isNull(String)}. A
 * nested value (a list of strings, a list of lists) is one ragged {@link Tensor} whose own null
 * elements are {@link Tensor#isNull(long)}.
 *
 * <p><b>Rows of a random-access source.</b> {@link #lazy} makes the example of row {@code index}
 * of a {@link RandomAccessDataset} without reading it: its fields are read (once) on first access,
 * and until the example is changed it remembers its {@link #origin()}. A batch of such examples
 * is then gathered from the source in one bulk call, as on the index path, instead of being
 * copied example by example: the element path over a memory-mapped file holds a few bytes per
 * buffered element (not the tensors) and reads each row once. A read error (a file truncated
 * under the pipeline) surfaces where the fields are first needed, with the same message.
 */
public final class Example {
  private final long index;
  /** Insertion order; null values are nulls. Null only for a lazy example not read yet. */
  private Map<String, Tensor> fields;
  /** Non-null: this example is row {@code index} of this source, unchanged. */
  private final RandomAccessDataset<Example> origin;

  private Example(long index, Map<String, Tensor> fields) {
    this.index = index;
    this.fields = fields;
    this.origin = null;
  }

  private Example(RandomAccessDataset<Example> origin, long index) {
    this.index = index;
    this.origin = origin;
  }

  /** An example with the given fields (in map iteration order; null values are null fields). */
  public static Example of(long index, Map<String, Tensor> fields) {
    return new Example(index, Collections.unmodifiableMap(new LinkedHashMap<>(fields)));
  }

  /** An example with a single field. */
  public static Example of(long index, String name, Tensor value) {
    Map<String, Tensor> m = new LinkedHashMap<>(2);
    m.put(Objects.requireNonNull(name, "name"), Objects.requireNonNull(value, "value"));
    return new Example(index, Collections.unmodifiableMap(m));
  }

  /**
   * Row {@code index} of {@code source}, read on first access to its fields; {@link #origin()} is
   * {@code source}. The index is not checked here: an index out of range fails on first access.
   */
  public static Example lazy(RandomAccessDataset<Example> source, long index) {
    return new Example(Objects.requireNonNull(source, "source"), index);
  }

  /**
   * The source this example is an unchanged row of (row {@link #index()}), or null. Set by
   * {@link #lazy}; an example made by {@link #with} or {@link #withIndex} has none.
   */
  public RandomAccessDataset<Example> origin() {
    return origin;
  }

  /**
   * The fields, read from the origin on first use. The maps are unmodifiable wrappers (final
   * fields), so a racing second read is harmless and publication is safe.
   */
  private Map<String, Tensor> fieldMap() {
    Map<String, Tensor> f = fields;
    if (f == null) {
      f = origin.get(index).fields();
      fields = f;
    }
    return f;
  }

  /** A builder of the example at source position {@code index}. */
  public static Builder builder(long index) {
    return new Builder(index);
  }

  /** Position of this element in its source. */
  public long index() {
    return index;
  }

  /** The field names, in the source's order. */
  public Set<String> names() {
    return fieldMap().keySet();
  }

  /** True when the example has a field called {@code name} (holding a value or a null). */
  public boolean has(String name) {
    return fieldMap().containsKey(name);
  }

  /** True when the field exists and holds no value. */
  public boolean isNull(String name) {
    Map<String, Tensor> f = fieldMap();
    return f.containsKey(name) && f.get(name) == null;
  }

  /**
   * The value of field {@code name}.
   *
   * @throws IllegalArgumentException if there is no such field or it is null
   */
  public Tensor tensor(String name) {
    Map<String, Tensor> fields = fieldMap();
    Tensor t = fields.get(name);
    if (t == null) {
      if (fields.containsKey(name)) {
        throw new IllegalArgumentException("field '" + name + "' of example " + index + " is null");
      }
      throw new IllegalArgumentException("example " + index + " has no field '" + name + "'; fields are " + fields.keySet());
    }
    return t;
  }

  /** The fields as an unmodifiable map (null values are null fields). */
  public Map<String, Tensor> fields() {
    return fieldMap();
  }

  /** This example with another index (same tensors). */
  public Example withIndex(long newIndex) {
    return new Example(newIndex, fieldMap());
  }

  /** This example with one field added or replaced. */
  public Example with(String name, Tensor value) {
    Map<String, Tensor> m = new LinkedHashMap<>(fieldMap());
    m.put(Objects.requireNonNull(name, "name"), value);
    return new Example(index, Collections.unmodifiableMap(m));
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Example e && index == e.index && fieldMap().equals(e.fieldMap());
  }

  @Override
  public int hashCode() {
    return Long.hashCode(index) * 31 + fieldMap().hashCode();
  }

  @Override
  public String toString() {
    return "Example{index=" + index + ", " + fieldMap() + "}";
  }

  /** Builds an {@link Example} field by field. */
  public static final class Builder {
    private final long index;
    private Map<String, Tensor> fields = new LinkedHashMap<>();

    private Builder(long index) {
      this.index = index;
    }

    /** Adds field {@code name} with {@code value}, after the fields added before it; returns this builder. */
    public Builder put(String name, Tensor value) {
      checkNotBuilt();
      fields.put(Objects.requireNonNull(name, "name"), Objects.requireNonNull(value, "value"));
      return this;
    }

    /** Adds field {@code name} holding a null ({@link Example#isNull(String)}); returns this builder. */
    public Builder putNull(String name) {
      checkNotBuilt();
      fields.put(Objects.requireNonNull(name, "name"), null);
      return this;
    }

    /** The example; the builder's fields move into it without a copy, so a builder builds once. */
    public Example build() {
      checkNotBuilt();
      Example e = new Example(index, Collections.unmodifiableMap(fields));
      fields = null;
      return e;
    }

    private void checkNotBuilt() {
      if (fields == null) {
        throw new IllegalStateException("example builder already built");
      }
    }
  }
}
