package dev.sluice.core;

import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/** The ordered fields of a dataset of {@link Example}s. Field names are unique. */
public final class Schema {
  private final List<TensorSpec> fields;
  private final Map<String, Integer> positions;

  private Schema(List<TensorSpec> fields) {
    this.fields = List.copyOf(fields);
    Map<String, Integer> pos = new LinkedHashMap<>();
    for (int i = 0; i < this.fields.size(); i++) {
      TensorSpec f = this.fields.get(i);
      if (pos.put(f.name(), i) != null) {
        throw new IllegalArgumentException("duplicate field name '" + f.name() + "' in " + fields);
      }
    }
    this.positions = Collections.unmodifiableMap(pos);
  }

  /**
   * A schema of {@code fields} in this order; throws {@link IllegalArgumentException} on a
   * duplicate name.
   */
  public static Schema of(TensorSpec... fields) {
    return new Schema(List.of(fields));
  }

  /**
   * A schema of {@code fields} in list order; throws {@link IllegalArgumentException} on a
   * duplicate name.
   */
  public static Schema of(List<TensorSpec> fields) {
    return new Schema(fields);
  }

  /** The fields in order (an unmodifiable list). */
  public List<TensorSpec> fields() {
    return fields;
  }

  /** Number of fields. */
  public int size() {
    return fields.size();
  }

  /** Field number {@code i}, from 0. */
  public TensorSpec field(int i) {
    return fields.get(i);
  }

  /** The field called {@code name}; throws naming the known fields if there is none. */
  public TensorSpec field(String name) {
    return fields.get(indexOf(name));
  }

  /** True when a field is called {@code name}. */
  public boolean contains(String name) {
    return positions.containsKey(name);
  }

  /**
   * Position of field {@code name}; throws {@link IllegalArgumentException} naming the known fields
   * if there is none.
   */
  public int indexOf(String name) {
    Integer i = positions.get(Objects.requireNonNull(name, "name"));
    if (i == null) {
      throw new IllegalArgumentException("no field '" + name + "'; fields are " + positions.keySet());
    }
    return i;
  }

  /** The fields sorted by name (the canonical order of checksums). */
  public Schema sortedByName() {
    List<TensorSpec> sorted = new ArrayList<>(fields);
    sorted.sort(Comparator.comparing(TensorSpec::name));
    return new Schema(sorted);
  }

  /** Only the named fields, in the given order. */
  public Schema select(List<String> names) {
    List<TensorSpec> out = new ArrayList<>(names.size());
    for (String n : names) {
      out.add(field(n));
    }
    return new Schema(out);
  }

  /** Bytes per row when every field is fixed-length, else -1. */
  public long fixedRowBytes() {
    long n = 0;
    for (TensorSpec f : fields) {
      if (!f.isFixedLength()) {
        return -1;
      }
      n += f.rowBytes();
    }
    return n;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Schema s && fields.equals(s.fields);
  }

  @Override
  public int hashCode() {
    return fields.hashCode();
  }

  @Override
  public String toString() {
    return fields.toString();
  }
}
