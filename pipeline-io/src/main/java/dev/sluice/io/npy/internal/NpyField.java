package dev.sluice.io.npy.internal;

import dev.sluice.core.DType;
import dev.sluice.core.Shape;

/**
 * One field of an {@code .npy} dtype: a plain array has one (named after the array), a structured
 * dtype one per named field.
 *
 * @param name field name
 * @param dtype element type
 * @param subShape shape of the field inside one item (a structured subarray field), else scalar
 * @param offset byte offset of the field inside one item
 * @param bigEndian true when the file stores the values big-endian (delivered little-endian)
 */
public record NpyField(String name, DType dtype, Shape subShape, int offset, boolean bigEndian) {
  /** Bytes of this field inside one item. */
  public int byteSize() {
    return Math.toIntExact(Math.multiplyExact(subShape.numElements(), (long) dtype.byteSize()));
  }

  /** Width of the units to byte-swap (a complex value swaps its two halves), 1 when none. */
  public int swapWidth() {
    if (!bigEndian) {
      return 1;
    }
    return dtype.isComplex() ? dtype.byteSize() / 2 : dtype.byteSize();
  }

  NpyField withName(String newName) {
    return new NpyField(newName, dtype, subShape, offset, bigEndian);
  }
}
