package dev.sluice.io.parquet.internal;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName;

/**
 * Type conversion: writes a column's physical values as its output dtype (a bulk copy where the
 * bytes are the same, else value by value: narrowing, time units to nanoseconds, INT96, decimals,
 * booleans, FLOAT16).
 */
final class ValueWriter {
  private static final long JULIAN_EPOCH_DAY = 2_440_588L;
  private static final long NANOS_PER_DAY = 86_400_000_000_000L;

  private final ColumnPlan.Conversion conversion;
  private final PrimitiveTypeName physical;
  private final long scale;
  private final int width; // bytes of one output value

  ValueWriter(ColumnPlan plan) {
    this.conversion = plan.conversion();
    this.physical = plan.descriptor().getPrimitiveType().getPrimitiveTypeName();
    this.scale = plan.scale();
    this.width = plan.dtype().isVariableLength() ? 1 : plan.dtype().byteSize();
  }

  /** Bytes of one output value. */
  int width() {
    return width;
  }

  /** Writes the next {@code n} values of {@code values} at byte {@code off} of {@code dst}. */
  void write(ValueSource values, ByteBuffer dst, int off, int n) {
    if (conversion == ColumnPlan.Conversion.COPY) {
      values.copy(n, dst, off, width);
      return;
    }
    for (int i = 0; i < n; i++) {
      writeOne(values, dst, off + i * width);
    }
  }

  private void writeOne(ValueSource values, ByteBuffer dst, int off) {
    switch (conversion) {
      case COPY -> {
        switch (physical) {
          case INT32 -> dst.putInt(off, values.nextInt());
          case INT64 -> dst.putLong(off, values.nextLong());
          case FLOAT -> dst.putFloat(off, values.nextFloat());
          case DOUBLE -> dst.putDouble(off, values.nextDouble());
          default -> throw new IllegalStateException("COPY of " + physical);
        }
      }
      case INT32_TO_1 -> dst.put(off, (byte) values.nextInt());
      case INT32_TO_2 -> dst.putShort(off, (short) values.nextInt());
      case INT32_TO_INT64_SCALED -> dst.putLong(off, values.nextInt() * scale);
      case INT64_SCALED -> dst.putLong(off, values.nextLong() * scale);
      case INT96_TO_NANOS -> {
        ByteBuffer b = values.nextBinary().toByteBuffer().order(ByteOrder.LITTLE_ENDIAN);
        long nanosOfDay = b.getLong(b.position());
        long julianDay = b.getInt(b.position() + 8); // signed, as Spark and parquet-java read it
        dst.putLong(off, (julianDay - JULIAN_EPOCH_DAY) * NANOS_PER_DAY + nanosOfDay);
      }
      case DECIMAL_INT32 -> dst.putDouble(off, BigDecimal.valueOf(values.nextInt(), (int) scale).doubleValue());
      case DECIMAL_INT64 -> dst.putDouble(off, BigDecimal.valueOf(values.nextLong(), (int) scale).doubleValue());
      case DECIMAL_BINARY -> dst.putDouble(off,
          new BigDecimal(new BigInteger(values.nextBinary().getBytes()), (int) scale).doubleValue());
      case BOOLEAN -> dst.put(off, values.nextBoolean() ? (byte) 1 : (byte) 0);
      case FIXED_BYTES -> {
        ByteBuffer b = values.nextBinary().toByteBuffer();
        dst.put(off, b, b.position(), width);
      }
      case BINARY -> throw new IllegalStateException("BINARY is variable-length");
    }
  }
}
