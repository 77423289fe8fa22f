package dev.sluice.core;

import java.util.Locale;

/**
 * The element type of a {@link Tensor}. Fixed-size types carry their width in bytes; {@link #STRING}
 * and {@link #BYTES} are variable-length (their values are laid out as Arrow does: contiguous bytes
 * plus offsets).
 *
 * <p>Values are always little-endian in memory. Names follow NumPy ({@code float32}, {@code uint8},
 * {@code complex64}); {@link #numpyDescr()} gives the little-endian descr string NumPy writes
 * ({@code <f4}).
 */
public enum DType {
  /** Boolean, one byte per value (0 or 1). */
  BOOL(1, "bool", "|b1"),
  /** Signed 8-bit integer. */
  INT8(1, "int8", "|i1"),
  /** Signed 16-bit integer. */
  INT16(2, "int16", "<i2"),
  /** Signed 32-bit integer. */
  INT32(4, "int32", "<i4"),
  /** Signed 64-bit integer. */
  INT64(8, "int64", "<i8"),
  /** Unsigned 8-bit integer. */
  UINT8(1, "uint8", "|u1"),
  /** Unsigned 16-bit integer. */
  UINT16(2, "uint16", "<u2"),
  /** Unsigned 32-bit integer. */
  UINT32(4, "uint32", "<u4"),
  /** Unsigned 64-bit integer (read as a Java {@code long}, which wraps above {@code Long.MAX_VALUE}). */
  UINT64(8, "uint64", "<u8"),
  /** IEEE 754 half precision. */
  FLOAT16(2, "float16", "<f2"),
  /** bfloat16: the upper 16 bits of a float32. NumPy has no native descr; ml_dtypes writes {@code <V2}. */
  BFLOAT16(2, "bfloat16", "<V2"),
  /** IEEE 754 single precision. */
  FLOAT32(4, "float32", "<f4"),
  /** IEEE 754 double precision. */
  FLOAT64(8, "float64", "<f8"),
  /** Two float32 values (real, imaginary). */
  COMPLEX64(8, "complex64", "<c8"),
  /** Two float64 values (real, imaginary). */
  COMPLEX128(16, "complex128", "<c16"),
  /** UTF-8 text, variable length. */
  STRING(-1, "string", null),
  /** Opaque bytes, variable length. */
  BYTES(-1, "bytes", null);

  private final int byteSize;
  private final String numpyName;
  private final String numpyDescr;

  DType(int byteSize, String numpyName, String numpyDescr) {
    this.byteSize = byteSize;
    this.numpyName = numpyName;
    this.numpyDescr = numpyDescr;
  }

  /** Width of one value in bytes; -1 for variable-length types. */
  public int byteSize() {
    return byteSize;
  }

  /** True for {@link #STRING} and {@link #BYTES}. */
  public boolean isVariableLength() {
    return byteSize < 0;
  }

  /** True for the real floating-point types (float16, bfloat16, float32, float64). */
  public boolean isFloatingPoint() {
    return this == FLOAT16 || this == BFLOAT16 || this == FLOAT32 || this == FLOAT64;
  }

  /** True for complex64 and complex128. */
  public boolean isComplex() {
    return this == COMPLEX64 || this == COMPLEX128;
  }

  /** True for the signed and unsigned integer types (not bool). */
  public boolean isInteger() {
    return switch (this) {
      case INT8, INT16, INT32, INT64, UINT8, UINT16, UINT32, UINT64 -> true;
      default -> false;
    };
  }

  /** True for uint8, uint16, uint32 and uint64. */
  public boolean isUnsigned() {
    return this == UINT8 || this == UINT16 || this == UINT32 || this == UINT64;
  }

  /** NumPy's name ({@code "float32"}), also used in JSON output and {@code metadata.json}. */
  public String numpyName() {
    return numpyName;
  }

  /** The little-endian NumPy descr ({@code "<f4"}), or null for variable-length types. */
  public String numpyDescr() {
    return numpyDescr;
  }

  @Override
  public String toString() {
    return numpyName;
  }

  /**
   * Parses a NumPy dtype name ({@code "float32"}, {@code "int64"}, {@code "bool"}) or one of our own
   * names ({@code "bfloat16"}, {@code "string"}, {@code "bytes"}).
   *
   * @throws IllegalArgumentException naming the value and the accepted names
   */
  public static DType fromName(String name) {
    String n = name.trim().toLowerCase(Locale.ROOT);
    switch (n) {
      case "bool_", "?" -> n = "bool";
      case "half" -> n = "float16";
      case "single", "float" -> n = "float32";
      case "double" -> n = "float64";
      case "str", "utf8", "unicode" -> n = "string";
      default -> { }
    }
    for (DType t : values()) {
      if (t.numpyName.equals(n)) {
        return t;
      }
    }
    throw new IllegalArgumentException(
        "unknown dtype '" + name + "'; expected one of " + java.util.Arrays.toString(values()));
  }
}
