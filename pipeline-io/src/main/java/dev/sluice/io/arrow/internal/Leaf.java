package dev.sluice.io.arrow.internal;

import dev.sluice.core.DType;

/**
 * How the innermost Arrow array of a field becomes Sluice values.
 *
 * @param kind the conversion
 * @param dtype the Sluice dtype of the values
 * @param width bytes of one Arrow value (0 for bit-packed booleans and variable-length binaries)
 * @param scale the decimal scale of {@link Kind#DECIMAL}, the byte offset of a {@link Kind#PART}
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
    /** One fixed-width part of a value of {@code width} bytes, at byte {@code scale} (intervals). */
    PART,
    /** The int8 type ids of a union (its first buffer). */
    TYPE_ID,
    /** A null array: every item null. */
    NULL,
    /** Binary or UTF-8 views (16 bytes each, inline or pointing into a variadic buffer). */
    VIEW,
    /** Decimal of {@code width} bytes and scale {@code scale} into float64. */
    DECIMAL,
    /** Integer indices of {@code width} bytes into dictionary {@code dictionaryId}. */
    DICTIONARY
  }

  /** True when a value has a fixed number of bytes in Sluice, so the field may have fixed dimensions above it. */
  boolean fixedWidth() {
    return !dtype.isVariableLength();
  }

  static Leaf part(DType dtype, int width, int offset, String arrowType) {
    return new Leaf(Kind.PART, dtype, width, offset, false, -1, null, arrowType);
  }

  static Leaf of(Kind kind, DType dtype, int width, String arrowType) {
    return new Leaf(kind, dtype, width, 0, false, -1, null, arrowType);
  }
}
