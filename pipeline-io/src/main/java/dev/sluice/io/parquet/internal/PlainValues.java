package dev.sluice.io.parquet.internal;

import dev.sluice.core.spi.ColumnBuilder;
import java.nio.ByteBuffer;
import org.apache.parquet.column.ColumnDescriptor;
import org.apache.parquet.io.api.Binary;
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName;

/** PLAIN values read in place from the page buffer; fixed-width runs are one bulk copy. */
final class PlainValues extends ValueSource {
  private final ByteBuffer data;
  private final PrimitiveTypeName physical;
  private final int fixedLength;
  private int pos;

  PlainValues(ByteBuffer data, int pos, ColumnDescriptor desc) {
    this.data = data;
    this.pos = pos;
    this.physical = desc.getPrimitiveType().getPrimitiveTypeName();
    this.fixedLength = desc.getPrimitiveType().getTypeLength();
  }

  @Override
  void copy(int n, ByteBuffer dst, int off, int width) {
    int bytes = n * width;
    if (pos + bytes > data.limit()) {
      throw new IndexOutOfBoundsException("page holds fewer values than its levels say");
    }
    dst.put(off, data, pos, bytes);
    pos += bytes;
  }

  @Override
  void skip(int n) {
    int width = switch (physical) {
      case INT32, FLOAT -> 4;
      case INT64, DOUBLE -> 8;
      case INT96 -> 12;
      case FIXED_LEN_BYTE_ARRAY -> fixedLength;
      default -> -1;
    };
    if (width < 0) {
      for (int i = 0; i < n; i++) {
        int len = nextLength(); // moves past the length first
        pos += len;
      }
      return;
    }
    long next = pos + (long) n * width;
    if (next > data.limit()) {
      throw new IndexOutOfBoundsException("page holds fewer values than its levels say");
    }
    pos = (int) next;
  }

  @Override
  int nextInt() {
    int v = data.getInt(pos);
    pos += 4;
    return v;
  }

  @Override
  long nextLong() {
    long v = data.getLong(pos);
    pos += 8;
    return v;
  }

  @Override
  float nextFloat() {
    float v = data.getFloat(pos);
    pos += 4;
    return v;
  }

  @Override
  double nextDouble() {
    double v = data.getDouble(pos);
    pos += 8;
    return v;
  }

  @Override
  boolean nextBoolean() {
    throw new IllegalStateException("PLAIN booleans are bit-packed");
  }

  private int nextLength() {
    if (physical == PrimitiveTypeName.FIXED_LEN_BYTE_ARRAY) {
      return fixedLength;
    }
    if (physical == PrimitiveTypeName.INT96) {
      return 12;
    }
    int len = data.getInt(pos);
    pos += 4;
    if (len < 0 || pos + len > data.limit()) {
      throw new IndexOutOfBoundsException("a byte array of " + len + " bytes runs past the end of the page");
    }
    return len;
  }

  @Override
  Binary nextBinary() {
    int len = nextLength();
    ByteBuffer s = data.slice(pos, len);
    pos += len;
    return Binary.fromConstantByteBuffer(s);
  }

  @Override
  void addBytes(ColumnBuilder out) {
    int len = nextLength();
    out.addBytes(data, pos, len);
    pos += len;
  }
}
