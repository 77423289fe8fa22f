package dev.sluice.io.parquet.internal;

import java.nio.ByteBuffer;
import org.apache.parquet.column.values.ValuesReader;
import org.apache.parquet.io.api.Binary;
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName;

/** Any other encoding (DELTA_*, BYTE_STREAM_SPLIT, boolean RLE), through parquet-java's reader, value by value. */
final class ReaderValues extends ValueSource {
  private final ValuesReader r;
  private final PrimitiveTypeName physical;

  ReaderValues(ValuesReader r, PrimitiveTypeName physical) {
    this.r = r;
    this.physical = physical;
  }

  @Override
  void skip(int n) {
    r.skip(n);
  }

  @Override
  int nextInt() {
    return r.readInteger();
  }

  @Override
  long nextLong() {
    return r.readLong();
  }

  @Override
  float nextFloat() {
    return r.readFloat();
  }

  @Override
  double nextDouble() {
    return r.readDouble();
  }

  @Override
  boolean nextBoolean() {
    return r.readBoolean();
  }

  @Override
  Binary nextBinary() {
    return r.readBytes();
  }

  @Override
  void copy(int n, ByteBuffer dst, int off, int width) {
    // each reader implements only its own type's read: dispatch on the physical type
    for (int i = 0; i < n; i++) {
      int o = off + width * i;
      switch (physical) {
        case INT32 -> dst.putInt(o, r.readInteger());
        case INT64 -> dst.putLong(o, r.readLong());
        case FLOAT -> dst.putFloat(o, r.readFloat());
        case DOUBLE -> dst.putDouble(o, r.readDouble());
        default -> throw new IllegalStateException("bulk copy of " + physical);
      }
    }
  }
}
