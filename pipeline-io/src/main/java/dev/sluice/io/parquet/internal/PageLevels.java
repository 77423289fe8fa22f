package dev.sluice.io.parquet.internal;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.apache.parquet.bytes.BytesUtils;
import org.apache.parquet.column.ColumnDescriptor;
import org.apache.parquet.column.Encoding;
import org.apache.parquet.column.page.DataPage;
import org.apache.parquet.column.page.DataPageV1;
import org.apache.parquet.column.page.DataPageV2;
import org.apache.parquet.column.page.PageReader;

/**
 * The data pages of one column chunk, one at a time, with their repetition and definition levels
 * decoded (RLE / bit-packed hybrid, v1 and v2 pages) and their value bytes located. Levels that are
 * one run of the maximum definition level (no nulls), and repetition levels of whole lists of a
 * fixed length, are recognized on the encoded runs and not expanded.
 */
final class PageLevels {
  private final ColumnDescriptor desc;
  private final PageReader pages;
  private final ChunkContext ctx;
  private final int maxDef;
  private final int maxRep;
  private final int fixedListLength; // > 0: recognize whole lists of this length

  private int[] defs = new int[0];
  private int[] reps = new int[0];
  private boolean shared; // defs and reps are a kept page's: decode the next page into new arrays
  /** Levels (values, nulls included) of the current page, and the next one to read. */
  int count;
  int pos;
  /** Every definition level of the page is the maximum (the page holds no null). */
  boolean defsAllMax;
  /** The page is whole lists of {@code fixedListLength} elements (repetition levels not expanded). */
  boolean repsPlain;
  /** Non-null values of the page. */
  int nonNull;
  /** The page's value bytes start at {@link #dataPos} of {@link #data}, encoded with {@link #encoding}. */
  ByteBuffer data;
  int dataPos;
  Encoding encoding;

  PageLevels(ColumnDescriptor desc, PageReader pages, ChunkContext ctx, int fixedListLength) {
    this.desc = desc;
    this.pages = pages;
    this.ctx = ctx;
    this.maxDef = desc.getMaxDefinitionLevel();
    this.maxRep = desc.getMaxRepetitionLevel();
    this.fixedListLength = fixedListLength;
  }

  /** True when a level is left on the current page. */
  boolean hasLevel() {
    return pos < count;
  }

  int rep(int i) {
    return repsPlain ? (i % fixedListLength == 0 ? 0 : 1) : reps[i];
  }

  int def(int i) {
    return defsAllMax ? maxDef : defs[i];
  }

  /** The expanded repetition levels (valid when not {@link #repsPlain}). */
  int[] reps() {
    return reps;
  }

  /** The expanded definition levels (valid when not {@link #defsAllMax}). */
  int[] defs() {
    return defs;
  }

  /**
   * Reads the next data page and decodes its levels.
   *
   * @return false at the end of the column chunk
   * @throws java.io.IOException from the page reader (decompression)
   */
  boolean next() throws IOException {
    DataPage page = pages.readPage();
    if (page == null) {
      return false;
    }
    PageCache.Entry kept = pages instanceof RangePages r ? r.cached() : null;
    PageCache.Levels known = kept == null ? null : kept.levels();
    if (known != null) {
      use(known);
      return true;
    }
    int n = page.getValueCount();
    if (maxDef > 0 && (defs.length < n || shared)) { // a required column has no definition levels
      defs = new int[n];
    }
    if (maxRep > 0 && (reps.length < n || shared)) { // a flat column has no repetition levels
      reps = new int[n];
    }
    shared = false;
    defsAllMax = maxDef == 0;
    repsPlain = false;
    if (page instanceof DataPageV1 v1) {
      data = v1.getBytes().toByteBuffer().slice().order(ByteOrder.LITTLE_ENDIAN);
      int at = 0;
      if (maxRep > 0) {
        at = v1Levels(at, v1.getRlEncoding(), n, false);
      }
      if (maxDef > 0) {
        at = v1Levels(at, v1.getDlEncoding(), n, true);
      }
      dataPos = at;
      encoding = v1.getValueEncoding();
    } else {
      DataPageV2 v2 = (DataPageV2) page;
      if (maxRep > 0) {
        ByteBuffer rl = v2.getRepetitionLevels().toByteBuffer().slice();
        levels(rl, 0, rl.limit(), n, false);
      }
      if (maxDef > 0) {
        ByteBuffer dl = v2.getDefinitionLevels().toByteBuffer().slice();
        levels(dl, 0, dl.limit(), n, true);
      }
      data = v2.getData().toByteBuffer().slice().order(ByteOrder.LITTLE_ENDIAN);
      dataPos = 0;
      encoding = v2.getDataEncoding();
    }
    count = n;
    pos = 0;
    int present = n;
    if (!defsAllMax) {
      present = 0;
      for (int i = 0; i < n; i++) {
        if (defs[i] == maxDef) {
          present++;
        }
      }
      defsAllMax = present == n;
    }
    nonNull = present;
    if (kept != null) {
      kept.levels(new PageCache.Levels(count, defsAllMax ? null : defs, repsPlain || maxRep == 0 ? null : reps,
          defsAllMax, repsPlain, nonNull, data, dataPos, encoding));
      shared = true;
    }
    return true;
  }

  /** Takes the levels a reader decoded before from a kept page (read only; its value bytes through a duplicate). */
  private void use(PageCache.Levels known) {
    if (known.defs() != null) {
      defs = known.defs();
      shared = true;
    }
    if (known.reps() != null) {
      reps = known.reps();
      shared = true;
    }
    count = known.count();
    pos = 0;
    defsAllMax = known.defsAllMax();
    repsPlain = known.repsPlain();
    nonNull = known.nonNull();
    data = known.data().duplicate().order(ByteOrder.LITTLE_ENDIAN);
    dataPos = known.dataPos();
    encoding = known.encoding();
  }

  private int v1Levels(int at, Encoding enc, int n, boolean isDef) {
    String what = isDef ? "definition" : "repetition";
    if (enc != Encoding.RLE) {
      throw ctx.unsupported(what + " levels use the " + enc + " encoding; Sluice reads RLE levels (written by every "
          + "current writer)", null);
    }
    if (n == 0 && at + 4 > data.limit()) {
      return at; // an empty page may carry no level bytes at all
    }
    int len = data.getInt(at);
    if (len < 0 || at + 4 + len > data.limit()) {
      throw ctx.error(what + " levels claim " + len + " bytes but the page has " + (data.limit() - at - 4), null);
    }
    levels(data, at + 4, at + 4 + len, n, isDef);
    return at + 4 + len;
  }

  private void levels(ByteBuffer buf, int from, int to, int n, boolean isDef) {
    int width = BytesUtils.getWidthFromMaxInt(isDef ? maxDef : maxRep);
    if (isDef) {
      if (new RleDecoder(buf, from, to, width).startsWithRunOf(n, maxDef)) {
        defsAllMax = true;
        return;
      }
      defsAllMax = false;
      new RleDecoder(buf, from, to, width).read(defs, 0, n);
    } else {
      if (fixedListLength > 0 && new RleDecoder(buf, from, to, width).isPlainRows(n, fixedListLength)) {
        repsPlain = true;
        return;
      }
      repsPlain = false;
      new RleDecoder(buf, from, to, width).read(reps, 0, n);
    }
  }

  ColumnDescriptor descriptor() {
    return desc;
  }
}
