package dev.sluice.core;

/** The text of a {@link Tensor} for messages and logs: dtype, shape, nulls and the first values. */
final class TensorText {
  private TensorText() {}

  /** {@link Tensor#toString()}: at most eight values; a tensor of a closed batch says so instead. */
  static String describe(Tensor t) {
    StringBuilder sb = new StringBuilder("Tensor(").append(t.dtype()).append(t.shape());
    if (t.memory() != null && t.memory().isReleased()) {
      return sb.append(" of closed ").append(t.memory().name()).append(')').toString();
    }
    if (t.hasNulls()) {
      sb.append(" with nulls");
    }
    if (t.dtype() == DType.STRING && t.shape().rank() == 0) {
      sb.append(" \"").append(t.getString()).append('"');
    } else if (t.dtype() == DType.STRING) {
      long n = t.numElements();
      sb.append(" [");
      for (long i = 0; i < Math.min(n, 8); i++) {
        sb.append(i > 0 ? ", \"" : "\"").append(t.stringAt(i)).append('"');
      }
      sb.append(n > 8 ? ", ...]" : "]");
    } else if (!t.dtype().isVariableLength() && !t.dtype().isComplex()) {
      long n = t.numElements();
      sb.append(" [");
      for (long i = 0; i < Math.min(n, 8); i++) {
        if (i > 0) {
          sb.append(", ");
        }
        sb.append(t.dtype().isFloatingPoint() ? String.valueOf(t.getAsDouble(i)) : String.valueOf(t.getAsLong(i)));
      }
      sb.append(n > 8 ? ", ...]" : "]");
    }
    return sb.append(')').toString();
  }
}
