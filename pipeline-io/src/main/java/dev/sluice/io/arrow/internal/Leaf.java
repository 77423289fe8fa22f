package dev.sluice.io.arrow.internal;

import dev.sluice.core.DType;

/**
 * How the innermost Arrow array of a field becomes Sluice values.
 *
 * @param kind the conversion
 * @param dtype the Sluice dtype of the values
 * @param width bytes of one Arrow value (0 for bit-packed booleans and variable-length binaries)
 * @param scale the factor of {@link Kind#SCALED} values (to nanoseconds), the decimal scale of
 *     {@link Kind#DECIMAL}
 * @param signed whether dictionary indices are signed ({@link Kind#DICTIONARY})
 * @param dictionaryId the dictionary of {@link Kind#DICTIONARY}
 * @param values how the dictionary's own values are read ({@link Kind#DICTIONARY}), else null
 * @param arrowType the Arrow type, for messages
 */
record Leaf(Kind kind, DType dtype, int width, long scale, boolean signed, long dictionaryId, Leaf values,
    String arrowType) {

  /** The conversions. */
  enum Kind {
    /** Little-endian fixed-width values that are Sluice values as they are (shared when possible). */
    FIXED,
    /** Bit-packed booleans, one byte each in Sluice. */
    BOOL,
    /** Binary or UTF-8 with int32 offsets (widened to int64). */
    BINARY32,
    /** Binary or UTF-8 with int64 offsets (shared when possible). */
    BINARY64,
    /** Fixed-size binary of {@code width} bytes: bytes values with offsets made up. */
    FIXED_BINARY,
    /** int32 or int64 counts of a time unit, multiplied by {@code scale} into int64 nanoseconds. */
    SCALED,
    /** int64 milliseconds since the epoch (date64) into int32 days. */
    DATE64,
    /** Decimal of {@code width} bytes and scale {@code scale} into float64. */
    DECIMAL,
    /** Integer indices of {@code width} bytes into dictionary {@code dictionaryId}. */
    DICTIONARY
  }

  /** True when a value has a fixed number of bytes in Sluice, so the field may have fixed dimensions above it. */
  boolean fixedWidth() {
    return !dtype.isVariableLength();
  }

  static Leaf of(Kind kind, DType dtype, int width, String arrowType) {
    return new Leaf(kind, dtype, width, 0, false, -1, null, arrowType);
  }
}
