package dev.sluice.io.parquet.internal;

import java.io.IOException;
import org.apache.parquet.column.ColumnDescriptor;
import org.apache.parquet.column.Dictionary;
import org.apache.parquet.column.page.DictionaryPage;

/**
 * The dictionary page of a column chunk, decoded once: fixed-width entries also as primitive
 * arrays (INT32 / FLOAT bits, INT64 / DOUBLE bits), so dictionary pages are gathered in bulk.
 */
final class PageDictionary {
  final Dictionary dictionary;
  final int[] ints; // INT32 / FLOAT bits, else null
  final long[] longs; // INT64 / DOUBLE bits, else null

  private PageDictionary(Dictionary dictionary, int[] ints, long[] longs) {
    this.dictionary = dictionary;
    this.ints = ints;
    this.longs = longs;
  }

  /** Decodes {@code page}, or returns null when the chunk has none. */
  static PageDictionary read(DictionaryPage page, ColumnDescriptor desc, ChunkContext ctx) {
    if (page == null) {
      return null;
    }
    Dictionary d;
    try {
      // a copy: binary dictionaries point into the page, whose array the decompressor reuses
      d = page.getEncoding().initDictionary(desc, page.copy());
    } catch (IOException | RuntimeException e) {
      throw ctx.error("cannot decode the dictionary page: " + e, e);
    }
    int n = d.getMaxId() + 1;
    int[] ints = null;
    long[] longs = null;
    switch (desc.getPrimitiveType().getPrimitiveTypeName()) {
      case INT32 -> {
        ints = new int[n];
        for (int i = 0; i < n; i++) {
          ints[i] = d.decodeToInt(i);
        }
      }
      case FLOAT -> {
        ints = new int[n];
        for (int i = 0; i < n; i++) {
          ints[i] = Float.floatToRawIntBits(d.decodeToFloat(i));
        }
      }
      case INT64 -> {
        longs = new long[n];
        for (int i = 0; i < n; i++) {
          longs[i] = d.decodeToLong(i);
        }
      }
      case DOUBLE -> {
        longs = new long[n];
        for (int i = 0; i < n; i++) {
          longs[i] = Double.doubleToRawLongBits(d.decodeToDouble(i));
        }
      }
      default -> { }
    }
    return new PageDictionary(d, ints, longs);
  }
}
