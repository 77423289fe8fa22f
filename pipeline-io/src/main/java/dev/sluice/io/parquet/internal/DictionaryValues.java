package dev.sluice.io.parquet.internal;

import java.nio.ByteBuffer;
import org.apache.parquet.io.api.Binary;

/** Dictionary-encoded values: indices decoded in bulk, then gathered from the dictionary's primitive arrays. */
final class DictionaryValues extends ValueSource {
  private final RleDecoder ids;
  private final PageDictionary dict;
  private int[] scratch = new int[1024];

  DictionaryValues(RleDecoder ids, PageDictionary dict) {
    this.ids = ids;
    this.dict = dict;
  }

  @Override
  void copy(int n, ByteBuffer dst, int off, int width) {
    if (scratch.length < Math.min(n, 4096)) {
      scratch = new int[4096];
    }
    int done = 0;
    while (done < n) {
      int k = Math.min(n - done, scratch.length);
      ids.read(scratch, 0, k);
      int o = off + done * width;
      if (width == 4) {
        int[] d = dict.ints;
        for (int i = 0; i < k; i++) {
          dst.putInt(o + 4 * i, d[scratch[i]]);
        }
      } else {
        long[] d = dict.longs;
        for (int i = 0; i < k; i++) {
          dst.putLong(o + 8 * i, d[scratch[i]]);
        }
      }
      done += k;
    }
  }

  @Override
  void skip(int n) {
    ids.skip(n);
  }

  @Override
  int nextInt() {
    return dict.dictionary.decodeToInt(ids.next());
  }

  @Override
  long nextLong() {
    return dict.dictionary.decodeToLong(ids.next());
  }

  @Override
  float nextFloat() {
    return dict.dictionary.decodeToFloat(ids.next());
  }

  @Override
  double nextDouble() {
    return dict.dictionary.decodeToDouble(ids.next());
  }

  @Override
  boolean nextBoolean() {
    return dict.dictionary.decodeToBoolean(ids.next());
  }

  @Override
  Binary nextBinary() {
    return dict.dictionary.decodeToBinary(ids.next());
  }
}
