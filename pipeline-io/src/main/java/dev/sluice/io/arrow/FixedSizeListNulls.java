package dev.sluice.io.arrow;

/**
 * How a fixed-size list whose items the schema declares nullable is read. Arrow writers (pyarrow,
 * Arrow Java) declare list items nullable by default, most often without ever storing a null.
 */
public enum FixedSizeListNulls {
  /**
   * A fixed dimension, as for items declared not nullable: the values keep their fixed shape (and
   * are shared with the file); a record batch that holds a null item is refused with an
   * {@link dev.sluice.core.UnsupportedFormatException}. The default.
   */
  FIXED_DIMENSION,
  /**
   * A ragged level of nullable elements (each list holds its {@code n} items, offsets
   * {@code i × n}): every item is read, nulls included.
   */
  NULLABLE_ELEMENTS
}
