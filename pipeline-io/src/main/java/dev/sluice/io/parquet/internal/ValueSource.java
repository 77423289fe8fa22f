package dev.sluice.io.parquet.internal;

import dev.sluice.core.spi.ColumnBuilder;
import java.io.IOException;
import java.nio.ByteBuffer;
import org.apache.parquet.bytes.ByteBufferInputStream;
import org.apache.parquet.column.ColumnDescriptor;
import org.apache.parquet.column.Encoding;
import org.apache.parquet.column.ValuesType;
import org.apache.parquet.column.values.ValuesReader;
import org.apache.parquet.io.api.Binary;

/**
 * The non-null values of one data page, in order, as their physical type: one implementation per
 * encoding family (PLAIN read in place, dictionary indices, parquet-java's readers for the rest).
 */
abstract class ValueSource {
  abstract int nextInt();

  abstract long nextLong();

  abstract float nextFloat();

  abstract double nextDouble();

  abstract boolean nextBoolean();

  abstract Binary nextBinary();

  /**
   * Copies the next {@code n} 4- or 8-byte values (INT32/FLOAT or INT64/DOUBLE) as little-endian
   * bytes to {@code dst} at byte {@code off}.
   */
  abstract void copy(int n, ByteBuffer dst, int off, int width);

  /** Moves past the next {@code n} values without converting them. */
  abstract void skip(int n);

  /** Adds the next byte-array value to a string/bytes column as one string or blob. */
  void addBytes(ColumnBuilder out) {
    ByteBuffer b = nextBinary().toByteBuffer();
    out.addBytes(b, b.position(), b.remaining());
  }

  /**
   * The value source of a page: {@code count} non-null values encoded with {@code enc} from byte
   * {@code pos} of {@code data}.
   */
  static ValueSource of(Encoding enc, ByteBuffer data, int pos, int count, ColumnDescriptor desc,
      PageDictionary dictionary, ChunkContext ctx) throws IOException {
    if (enc.usesDictionary()) {
      if (dictionary == null) {
        throw ctx.error("a " + enc + " page but the column chunk has no dictionary page", null);
      }
      int bitWidth = count == 0 && pos >= data.limit() ? 0 : data.get(pos) & 0xFF;
      return new DictionaryValues(new RleDecoder(data, pos + 1, data.limit(), bitWidth), dictionary);
    }
    if (enc == Encoding.PLAIN && desc.getPrimitiveType().getPrimitiveTypeName()
        != org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName.BOOLEAN) {
      return new PlainValues(data, pos, desc);
    }
    ValuesReader r;
    try {
      r = enc.getValuesReader(desc, ValuesType.VALUES);
    } catch (UnsupportedOperationException | IllegalArgumentException e) {
      throw ctx.unsupported("the " + enc + " encoding is not supported for "
          + desc.getPrimitiveType().getPrimitiveTypeName(), e);
    }
    ByteBuffer slice = data.duplicate();
    slice.position(Math.min(pos, slice.limit()));
    r.initFromPage(count, ByteBufferInputStream.wrap(slice.slice()));
    return new ReaderValues(r, desc.getPrimitiveType().getPrimitiveTypeName());
  }
}
