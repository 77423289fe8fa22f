package dev.sluice.io.arrow.internal;

import dev.sluice.core.TensorSpec;
import java.util.List;

/**
 * How one Sluice field is read from a record batch: the Arrow arrays on the way from a top-level
 * column down to its innermost values, in the order they are nested.
 *
 * <p>Struct arrays add no level (their validity joins that of the level they sit at); list arrays
 * add a ragged level; a fixed-size list is a fixed dimension when everything below it is fixed-width
 * (else a ragged level whose offsets are made up); the leaf holds the values. Arrays below the first
 * fixed dimension of a level are <em>inside an item</em>: they may not hold nulls.
 *
 * @param spec the Sluice field
 * @param steps the arrays, outermost first; the last is the leaf
 * @param leaf how the values are read
 * @param arrowType the Arrow type of the top-level column, for messages
 */
record FieldPlan(TensorSpec spec, List<Step> steps, Leaf leaf, String arrowType) {

  /** What an array on the path is. */
  enum Kind {
    /** A struct: validity only. */
    STRUCT,
    /** A list with int32 offsets (also a map). */
    LIST32,
    /** A list with int64 offsets. */
    LIST64,
    /** A fixed-size list read as a ragged level (offsets {@code i × size}). */
    FIXED_RAGGED,
    /** A fixed-size list read as a fixed dimension of {@code size}. */
    FIXED,
    /** A list view with int32 offsets and sizes. */
    VIEW32,
    /** A list view with int64 offsets and sizes. */
    VIEW64,
    /** A sparse union, seen from its member of type id {@code size}: the other rows are null. */
    SPARSE_MEMBER,
    /** A dense union, seen from its member of type id {@code size}: the other rows are null. */
    DENSE_MEMBER,
    /** A run-end encoded array whose run ends are {@code size} bytes wide: rows map to runs. */
    RUN_ENDS,
    /** The innermost values. */
    LEAF
  }

  /**
   * One array on the path.
   *
   * @param node the array's position among the record batch's field nodes
   * @param kind what it is
   * @param size the list size of a fixed-size list, the type id of a union member, the byte width of
   *     run ends
   * @param depth the Sluice depth of its items: 0 the rows, {@code j} the elements of level {@code j - 1}
   * @param insideItem true below the first fixed dimension of its depth: its slots are parts of
   *     one item, and may not be null
   * @param name the Arrow name of the array, for messages
   * @param hasValidity whether the array has a validity bitmap (unions, run-end encoded and null
   *     arrays have none)
   */
  record Step(int node, Kind kind, int size, int depth, boolean insideItem, String name, boolean hasValidity) {
    boolean isList() {
      return kind == Kind.LIST32 || kind == Kind.LIST64 || kind == Kind.FIXED_RAGGED || kind == Kind.VIEW32
          || kind == Kind.VIEW64;
    }
  }

  /** The name of the Sluice field. */
  String name() {
    return spec.name();
  }
}
