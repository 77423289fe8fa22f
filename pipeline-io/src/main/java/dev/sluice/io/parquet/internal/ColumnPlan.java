package dev.sluice.io.parquet.internal;

import dev.sluice.core.DType;
import dev.sluice.core.TensorSpec;
import org.apache.parquet.column.ColumnDescriptor;

/**
 * How one Parquet leaf column becomes one Sluice field.
 *
 * <p>Every repeated node on the leaf's path is one list level of the field (a list, a map's
 * key/value group, a legacy repeated field), outermost first. {@code definedAt[j]} is the
 * definition level from which an item at depth {@code j} is present: depth 0 is the row, depth
 * {@code j > 0} an element of a level-{@code j - 1} list, the last depth the leaf value. Below it the
 * item is null (as far as the value reached it); a list at depth {@code j} whose definition level
 * equals {@code definedAt[j]} exactly is empty.
 *
 * @param descriptor the leaf column
 * @param spec the output field
 * @param layout scalar per row, fixed-length list, or lists at any depth
 * @param conversion how physical values become the field's dtype
 * @param listLength elements per row of a {@link Layout#FIXED_LIST} (the shape's element count)
 * @param definedAt per depth, the definition level from which an item there is present
 * @param scale decimal scale, or the factor that brings a time value to nanoseconds
 */
public record ColumnPlan(
    ColumnDescriptor descriptor,
    TensorSpec spec,
    Layout layout,
    Conversion conversion,
    int listLength,
    int[] definedAt,
    long scale) {

  /** Row layout. */
  public enum Layout {
    /** One value (or null) per row. */
    SCALAR,
    /** A single-level list of numbers with a declared shape: one fixed-shape tensor per row. */
    FIXED_LIST,
    /** Lists of any depth (lists of lists, of strings, maps, lists of structs). */
    LISTS
  }

  /** Physical value → output value. */
  public enum Conversion {
    /** Same little-endian bytes (int32, int64, float, double, unsigned reinterpretations). */
    COPY,
    /** int32 stored, 1-byte output (int8, uint8). */
    INT32_TO_1,
    /** int32 stored, 2-byte output (int16, uint16). */
    INT32_TO_2,
    /** int32 stored, int64 output multiplied by {@code scale} (TIME millis → ns). */
    INT32_TO_INT64_SCALED,
    /** int64 stored, int64 output multiplied by {@code scale} (TIMESTAMP / TIME → ns). */
    INT64_SCALED,
    /** INT96 (Impala timestamp: nanos of day + Julian day) → int64 ns since the epoch. */
    INT96_TO_NANOS,
    /** DECIMAL stored in int32 → float64. */
    DECIMAL_INT32,
    /** DECIMAL stored in int64 → float64. */
    DECIMAL_INT64,
    /** DECIMAL stored as big-endian two's complement bytes → float64. */
    DECIMAL_BINARY,
    /** BOOLEAN → one byte 0/1. */
    BOOLEAN,
    /** BYTE_ARRAY / FIXED_LEN_BYTE_ARRAY → a variable-length string or bytes value. */
    BINARY,
    /** FIXED_LEN_BYTE_ARRAY copied as fixed-width little-endian (FLOAT16). */
    FIXED_BYTES
  }

  public String name() {
    return spec.name();
  }

  public DType dtype() {
    return spec.dtype();
  }

  public int maxDef() {
    return descriptor.getMaxDefinitionLevel();
  }

  public int maxRep() {
    return descriptor.getMaxRepetitionLevel();
  }

  /** Definition level of the (single) repeated node of a {@link Layout#FIXED_LIST}: elements exist at or above it. */
  public int repeatedDef() {
    return definedAt[0] + 1;
  }

  /** Bytes of one output element (a scalar row, or one list element). */
  public int elementBytes() {
    return spec.dtype().byteSize();
  }
}
