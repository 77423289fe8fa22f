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
 * buffers. A field may be null (absent value of a nullable column): {@link #isNull(String)}.
 */
public final class Example {
  private final long index;
  private final Map<String, Tensor> fields; // insertion order; null values are nulls

  private Example(long index, Map<String, Tensor> fields) {
    this.index = index;
    this.fields = fields;
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

  public static Builder builder(long index) {
    return new Builder(index);
  }

  /** Position of this element in its source. */
  public long index() {
    return index;
  }

  /** The field names, in the source's order. */
  public Set<String> names() {
    return fields.keySet();
  }

  public boolean has(String name) {
    return fields.containsKey(name);
  }

  /** True when the field exists and holds no value. */
  public boolean isNull(String name) {
    return fields.containsKey(name) && fields.get(name) == null;
  }

  /**
   * The value of field {@code name}.
   *
   * @throws IllegalArgumentException if there is no such field or it is null
   */
  public Tensor tensor(String name) {
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
    return fields;
  }

  /** This example with another index (same tensors). */
  public Example withIndex(long newIndex) {
    return new Example(newIndex, fields);
  }

  /** This example with one field added or replaced. */
  public Example with(String name, Tensor value) {
    Map<String, Tensor> m = new LinkedHashMap<>(fields);
    m.put(Objects.requireNonNull(name, "name"), value);
    return new Example(index, Collections.unmodifiableMap(m));
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Example e && index == e.index && fields.equals(e.fields);
  }

  @Override
  public int hashCode() {
    return Long.hashCode(index) * 31 + fields.hashCode();
  }

  @Override
  public String toString() {
    return "Example{index=" + index + ", " + fields + "}";
  }

  /** Builds an {@link Example} field by field. */
  public static final class Builder {
    private final long index;
    private Map<String, Tensor> fields = new LinkedHashMap<>();

    private Builder(long index) {
      this.index = index;
    }

    public Builder put(String name, Tensor value) {
      checkNotBuilt();
      fields.put(Objects.requireNonNull(name, "name"), Objects.requireNonNull(value, "value"));
      return this;
    }

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
