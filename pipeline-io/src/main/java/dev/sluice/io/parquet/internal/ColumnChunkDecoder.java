package dev.sluice.io.parquet.internal;

import dev.sluice.core.DatasetFormatException;
import dev.sluice.core.Options.NullPolicy;
import dev.sluice.core.UnsupportedFormatException;
import java.io.IOException;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.apache.parquet.bytes.ByteBufferInputStream;
import org.apache.parquet.bytes.BytesUtils;
import org.apache.parquet.column.ColumnDescriptor;
import org.apache.parquet.column.Dictionary;
import org.apache.parquet.column.Encoding;
import org.apache.parquet.column.ValuesType;
import org.apache.parquet.column.page.DataPage;
import org.apache.parquet.column.page.DataPageV1;
import org.apache.parquet.column.page.DataPageV2;
import org.apache.parquet.column.page.DictionaryPage;
import org.apache.parquet.column.page.PageReader;
import org.apache.parquet.column.values.ValuesReader;
import org.apache.parquet.io.api.Binary;
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName;

/**
 * Decodes the pages of one column chunk straight into batch memory: definition / repetition
 * levels (RLE / bit-packed hybrid), PLAIN and dictionary values with bulk copies for the
 * fixed-width types; the rarer encodings (DELTA_*, BYTE_STREAM_SPLIT, boolean RLE) go through
 * parquet-java's own {@link ValuesReader}s, one value at a time.
 */
final class ColumnChunkDecoder {
  private static final long JULIAN_EPOCH_DAY = 2_440_588L;
  private static final long NANOS_PER_DAY = 86_400_000_000_000L;

  private final ColumnPlan plan;
  private final ColumnDescriptor desc;
  private final PrimitiveTypeName physical;
  private final PageReader pages;
  private final String file;
  private final int rowGroup;
  private final long firstRow; // global index of the row group's first row
  private final NullPolicy nullPolicy;
  private final int maxDef;
  private final int maxRep;
  private final int elemBytes;
  private final boolean copyable; // output bytes == physical little-endian bytes

  private Dictionary dictionary;
  private int[] dictInts; // INT32 / FLOAT bits
  private long[] dictLongs; // INT64 / DOUBLE bits

  // current page
  private int[] defs = new int[0];
  private int[] reps = new int[0];
  private int levelCount;
  private int levelPos;
  private boolean pageHasNulls;
  private boolean defsAllMax; // every definition level of the page is the maximum (not expanded)
  private boolean repsPlain; // the page is whole fixed-length lists (repetition levels not expanded)
  private Values values;
  private int[] scratch = new int[1024];

  private long rowsDone; // rows of this chunk already decoded (for messages)

  ColumnChunkDecoder(ColumnPlan plan, PageReader pages, String file, int rowGroup, long firstRow, NullPolicy nullPolicy) {
    this.plan = plan;
    this.desc = plan.descriptor();
    this.physical = desc.getPrimitiveType().getPrimitiveTypeName();
    this.pages = pages;
    this.file = file;
    this.rowGroup = rowGroup;
    this.firstRow = firstRow;
    this.nullPolicy = nullPolicy;
    this.maxDef = desc.getMaxDefinitionLevel();
    this.maxRep = desc.getMaxRepetitionLevel();
    this.elemBytes = plan.dtype().isVariableLength() ? 1 : plan.dtype().byteSize();
    this.copyable = plan.conversion() == ColumnPlan.Conversion.COPY;
    DictionaryPage dp = pages.readDictionaryPage();
    if (dp != null) {
      try {
        dictionary = dp.getEncoding().initDictionary(desc, dp);
      } catch (IOException | RuntimeException e) {
        throw error("cannot decode the dictionary page: " + e, e);
      }
      int n = dictionary.getMaxId() + 1;
      switch (physical) {
        case INT32 -> {
          dictInts = new int[n];
          for (int i = 0; i < n; i++) {
            dictInts[i] = dictionary.decodeToInt(i);
          }
        }
        case FLOAT -> {
          dictInts = new int[n];
          for (int i = 0; i < n; i++) {
            dictInts[i] = Float.floatToRawIntBits(dictionary.decodeToFloat(i));
          }
        }
        case INT64 -> {
          dictLongs = new long[n];
          for (int i = 0; i < n; i++) {
            dictLongs[i] = dictionary.decodeToLong(i);
          }
        }
        case DOUBLE -> {
          dictLongs = new long[n];
          for (int i = 0; i < n; i++) {
            dictLongs[i] = Double.doubleToRawLongBits(dictionary.decodeToDouble(i));
          }
        }
        default -> { }
      }
    }
  }

  DatasetFormatException error(String message, Throwable cause) {
    return new DatasetFormatException(file, "row group " + rowGroup + ", column '" + plan.name() + "'", message, cause);
  }

  private DatasetFormatException rowError(long rowInGroup, String message) {
    return new DatasetFormatException(file, "row group " + rowGroup + ", row " + (firstRow + rowInGroup)
        + ", column '" + plan.name() + "'", message);
  }

  // ---------------------------------------------------------------- pages

  private boolean loadPage() {
    DataPage page = pages.readPage();
    if (page == null) {
      return false;
    }
    try {
      int n = page.getValueCount();
      if (defs.length < n) {
        defs = new int[n];
      }
      if (reps.length < n) {
        reps = new int[n];
      }
      ByteBuffer data;
      int pos;
      Encoding valueEncoding;
      if (page instanceof DataPageV1 v1) {
        data = v1.getBytes().toByteBuffer().slice().order(ByteOrder.LITTLE_ENDIAN);
        pos = 0;
        if (maxRep > 0) {
          pos = readV1Levels(data, pos, v1.getRlEncoding(), n, false);
        }
        if (maxDef > 0) {
          pos = readV1Levels(data, pos, v1.getDlEncoding(), n, true);
        }
        valueEncoding = v1.getValueEncoding();
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
        pos = 0;
        valueEncoding = v2.getDataEncoding();
      }
      if (maxDef == 0) {
        defsAllMax = true;
      }
      if (maxRep == 0) {
        repsPlain = false; // flat columns never read repetition levels
      }
      levelCount = n;
      levelPos = 0;
      boolean nulls = false;
      if (!defsAllMax) {
        for (int i = 0; i < n; i++) {
          if (defs[i] != maxDef) {
            nulls = true;
            break;
          }
        }
      }
      pageHasNulls = nulls;
      int nonNull = 0;
      if (!nulls) {
        nonNull = n;
      } else {
        for (int i = 0; i < n; i++) {
          if (defs[i] == maxDef) {
            nonNull++;
          }
        }
      }
      values = valuesFor(valueEncoding, data, pos, nonNull);
      return true;
    } catch (DatasetFormatException e) {
      throw e;
    } catch (IOException | RuntimeException e) {
      throw error("cannot decode a data page: " + e, e);
    }
  }

  private int readV1Levels(ByteBuffer data, int pos, Encoding enc, int n, boolean isDef) {
    String what = isDef ? "definition" : "repetition";
    if (enc != Encoding.RLE) {
      throw new UnsupportedFormatException(file, "row group " + rowGroup + ", column '" + plan.name() + "'",
          what + " levels use the " + enc + " encoding; Sluice reads RLE levels (written by every current writer)");
    }
    int len = data.getInt(pos);
    if (len < 0 || pos + 4 + len > data.limit()) {
      throw error(what + " levels claim " + len + " bytes but the page has " + (data.limit() - pos - 4), null);
    }
    levels(data, pos + 4, pos + 4 + len, n, isDef);
    return pos + 4 + len;
  }

  /**
   * Decodes the levels of a page. Definition levels that are one run of the maximum (no nulls)
   * and repetition levels of whole fixed-length lists are recognized on the encoded runs and
   * not expanded.
   */
  private void levels(ByteBuffer data, int from, int to, int n, boolean isDef) {
    int max = isDef ? maxDef : maxRep;
    int width = BytesUtils.getWidthFromMaxInt(max);
    if (isDef) {
      if (new RleDecoder(data, from, to, width).startsWithRunOf(n, maxDef)) {
        defsAllMax = true;
        return;
      }
      defsAllMax = false;
      new RleDecoder(data, from, to, width).read(defs, 0, n);
    } else {
      if (plan.layout() == ColumnPlan.Layout.FIXED_LIST && plan.listLength() > 0
          && new RleDecoder(data, from, to, width).isPlainRows(n, plan.listLength())) {
        repsPlain = true;
        return;
      }
      repsPlain = false;
      new RleDecoder(data, from, to, width).read(reps, 0, n);
    }
  }

  private int rep(int i) {
    return repsPlain ? (i % plan.listLength() == 0 ? 0 : 1) : reps[i];
  }

  private int def(int i) {
    return defsAllMax ? maxDef : defs[i];
  }

  private Values valuesFor(Encoding enc, ByteBuffer data, int pos, int count) throws IOException {
    if (enc.usesDictionary()) {
      if (dictionary == null) {
        throw error("a " + enc + " page but the column chunk has no dictionary page", null);
      }
      int bitWidth = count == 0 && pos >= data.limit() ? 0 : data.get(pos) & 0xFF;
      return new DictValues(new RleDecoder(data, pos + 1, data.limit(), bitWidth));
    }
    if (enc == Encoding.PLAIN && physical != PrimitiveTypeName.BOOLEAN) {
      return new PlainValues(data, pos);
    }
    ValuesReader r;
    try {
      r = enc.getValuesReader(desc, ValuesType.VALUES);
    } catch (UnsupportedOperationException | IllegalArgumentException e) {
      throw new UnsupportedFormatException(file, "row group " + rowGroup + ", column '" + plan.name() + "'",
          "the " + enc + " encoding is not supported for " + physical, e);
    }
    ByteBuffer slice = data.duplicate();
    slice.position(pos);
    r.initFromPage(count, ByteBufferInputStream.wrap(slice.slice()));
    return new ReaderValues(r);
  }

  // ---------------------------------------------------------------- rows

  /** Decodes the next {@code rows} rows into {@code out} at rows {@code out.rows ...}. */
  void decode(ColumnOut out, int rows) {
    baseRow = out.rows;
    try {
      if (maxRep == 0) {
        decodeFlat(out, rows);
      } else {
        decodeList(out, rows);
      }
    } catch (DatasetFormatException e) {
      throw e;
    } catch (RuntimeException e) {
      throw error("cannot decode: " + e, e);
    }
    rowsDone += rows;
    out.rows += rows;
  }

  private void decodeFlat(ColumnOut out, int rows) {
    int row = out.rows;
    int left = rows;
    while (left > 0) {
      if (levelPos == levelCount && !loadPage()) {
        throw error("the column chunk ends after " + (rowsDone + rows - left) + " rows but the row group has more", null);
      }
      int n = Math.min(left, levelCount - levelPos);
      if (!pageHasNulls) {
        writeRun(out, row, n);
      } else {
        int i = 0;
        while (i < n) {
          int j = i;
          while (j < n && defs[levelPos + j] == maxDef) {
            j++;
          }
          if (j > i) {
            writeRun(out, row + i, j - i);
            i = j;
          }
          if (i < n) {
            nullRow(out, row + i);
            i++;
          }
        }
      }
      levelPos += n;
      row += n;
      left -= n;
    }
  }

  private void nullRow(ColumnOut out, int row) {
    if (nullPolicy == NullPolicy.FAIL) {
      throw rowError(rowsDone + row - baseRow, "null value (the null policy is FAIL)");
    }
    out.setNull(row);
    if (out.variable) {
      out.endRow(row);
    }
  }

  private int baseRow; // out.rows at the start of the current decode call (for messages)

  /** Writes {@code n} consecutive non-null scalar rows. */
  private void writeRun(ColumnOut out, int row, int n) {
    if (out.variable) {
      for (int i = 0; i < n; i++) {
        values.appendBinary(out);
        out.endRow(row + i);
      }
      return;
    }
    writeValues(out.buffer(), row * elemBytes, n);
  }

  /** Writes {@code n} values at byte {@code byteOff} of {@code dst}. */
  private void writeValues(ByteBuffer dst, int byteOff, int n) {
    if (copyable) {
      values.copy(n, dst, byteOff, elemBytes);
      return;
    }
    for (int i = 0; i < n; i++) {
      writeOne(dst, byteOff + i * elemBytes);
    }
  }

  private void writeOne(ByteBuffer dst, int off) {
    switch (plan.conversion()) {
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
      case INT32_TO_INT64_SCALED -> dst.putLong(off, values.nextInt() * plan.scale());
      case INT64_SCALED -> dst.putLong(off, values.nextLong() * plan.scale());
      case INT96_TO_NANOS -> {
        ByteBuffer b = values.nextBinary().toByteBuffer().order(ByteOrder.LITTLE_ENDIAN);
        long nanosOfDay = b.getLong(b.position());
        long julianDay = Integer.toUnsignedLong(b.getInt(b.position() + 8));
        dst.putLong(off, (julianDay - JULIAN_EPOCH_DAY) * NANOS_PER_DAY + nanosOfDay);
      }
      case DECIMAL_INT32 -> dst.putDouble(off, BigDecimal.valueOf(values.nextInt(), (int) plan.scale()).doubleValue());
      case DECIMAL_INT64 -> dst.putDouble(off, BigDecimal.valueOf(values.nextLong(), (int) plan.scale()).doubleValue());
      case DECIMAL_BINARY -> dst.putDouble(off,
          new BigDecimal(new BigInteger(values.nextBinary().getBytes()), (int) plan.scale()).doubleValue());
      case BOOLEAN -> dst.put(off, values.nextBoolean() ? (byte) 1 : (byte) 0);
      case FIXED_BYTES -> {
        ByteBuffer b = values.nextBinary().toByteBuffer();
        dst.put(off, b, b.position(), elemBytes);
      }
      case BINARY -> throw new IllegalStateException("BINARY is variable-length");
    }
  }

  // ---------------------------------------------------------------- lists

  private void decodeList(ColumnOut out, int rows) {
    final boolean fixed = plan.layout() == ColumnPlan.Layout.FIXED_LIST;
    final int len = plan.listLength();
    final int repDef = plan.repeatedDef();
    int started = 0;
    int row = -1; // current row in out
    int elems = 0;
    long items = out.variable ? out.valueBytes / elemBytes : 0; // variable: items written so far
    int pendingDst = 0; // element index where the pending run of values starts
    int pendingN = 0;
    while (true) {
      if (levelPos == levelCount) {
        if (pendingN > 0) {
          flush(out, pendingDst, pendingN);
          pendingN = 0;
        }
        if (!loadPage()) {
          break;
        }
        continue;
      }
      int r = rep(levelPos);
      int d = def(levelPos);
      if (r == 0) {
        if (started == rows) {
          break;
        }
        if (row >= 0) {
          if (out.variable && pendingN > 0) {
            flush(out, pendingDst, pendingN);
            pendingN = 0;
          }
          endListRow(out, row, elems, fixed, len);
        }
        row = -1;
        if (fixed && !pageHasNulls && len > 0) {
          int k = wholeRows(Math.min(rows - started, (levelCount - levelPos) / len), len);
          if (k > 0) {
            if (pendingN > 0) {
              flush(out, pendingDst, pendingN);
              pendingN = 0;
            }
            flush(out, (out.rows + started) * len, k * len);
            started += k;
            levelPos += k * len;
            continue;
          }
        }
        row = out.rows + started;
        started++;
        elems = 0;
        if (d < repDef) {
          if (d < repDef - 1) {
            elems = -1; // null row
          }
          levelPos++;
          continue;
        }
      } else if (row < 0) {
        throw error("list data starts in the middle of a row (repetition level " + r + ")", null);
      }
      // an element at d >= repDef
      if (fixed && elems >= len) {
        throw rowError(rowsDone + row - baseRow, "a list of more than " + len
            + " elements but its declared shape " + plan.spec().shape() + " holds " + len);
      }
      int dst = fixed ? row * len + elems : (int) items;
      if (d == maxDef) {
        if (pendingN > 0 && pendingDst + pendingN != dst) {
          flush(out, pendingDst, pendingN);
          pendingN = 0;
        }
        if (pendingN == 0) {
          pendingDst = dst;
        }
        pendingN++;
      } else {
        if (pendingN > 0) {
          flush(out, pendingDst, pendingN);
          pendingN = 0;
        }
        if (nullPolicy == NullPolicy.FAIL) {
          throw rowError(rowsDone + row - baseRow, "null list element (the null policy is FAIL)");
        }
        if (out.variable) {
          out.ensure(elemBytes);
        }
        ColumnOut.zero(out.buffer(), dst * elemBytes, elemBytes);
        if (out.variable) {
          out.valueBytes += elemBytes;
        }
      }
      elems++;
      items++;
      levelPos++;
    }
    if (pendingN > 0) {
      flush(out, pendingDst, pendingN);
    }
    if (row >= 0) {
      endListRow(out, row, elems, fixed, len);
    }
    if (started < rows) {
      throw error("the column chunk ends after " + (rowsDone + started) + " rows but the row group has more", null);
    }
  }

  /**
   * How many of the next {@code max} rows at {@link #levelPos} are plain rows of exactly
   * {@code len} elements (repetition levels 0, 1, 1, …), every element present.
   */
  private int wholeRows(int max, int len) {
    if (repsPlain) {
      return max;
    }
    int p = levelPos;
    int[] rl = reps;
    for (int k = 0; k < max; k++) {
      if (rl[p] != 0) {
        return k;
      }
      for (int j = 1; j < len; j++) {
        if (rl[p + j] != 1) {
          return k;
        }
      }
      p += len;
    }
    // the row after the last one must start a new row (or the page must end there)
    if (max > 0 && p < levelCount && rl[p] != 0) {
      return max - 1;
    }
    return max;
  }

  private void flush(ColumnOut out, int dstElem, int n) {
    if (out.variable) {
      out.ensure((long) n * elemBytes);
      writeValues(out.buffer(), dstElem * elemBytes, n);
      out.valueBytes += (long) n * elemBytes;
    } else {
      writeValues(out.buffer(), dstElem * elemBytes, n);
    }
  }

  private void endListRow(ColumnOut out, int row, int elems, boolean fixed, int len) {
    if (elems < 0) {
      if (nullPolicy == NullPolicy.FAIL) {
        throw rowError(rowsDone + row - baseRow, "null list (the null policy is FAIL)");
      }
      out.setNull(row);
      if (out.variable) {
        out.endRow(row);
      }
      return;
    }
    if (fixed) {
      if (elems != len) {
        throw rowError(rowsDone + row - baseRow, "a list of " + elems + " elements but its declared shape "
            + plan.spec().shape() + " holds " + len);
      }
    } else {
      out.endRow(row);
    }
  }

  // ---------------------------------------------------------------- value sources

  /** The values of one page, in order. */
  private abstract static class Values {
    abstract int nextInt();

    abstract long nextLong();

    abstract float nextFloat();

    abstract double nextDouble();

    abstract boolean nextBoolean();

    abstract Binary nextBinary();

    /** Copies {@code n} 4- or 8-byte values as little-endian bytes to {@code dst} at {@code off}. */
    void copy(int n, ByteBuffer dst, int off, int width) {
      for (int i = 0; i < n; i++) {
        if (width == 4) {
          dst.putInt(off + 4 * i, nextInt());
        } else {
          dst.putLong(off + 8 * i, nextLong());
        }
      }
    }

    /** Appends the next byte-array value to a variable-length column. */
    void appendBinary(ColumnOut out) {
      Binary b = nextBinary();
      ByteBuffer bb = b.toByteBuffer();
      out.append(bb, bb.position(), bb.remaining());
    }
  }

  /** PLAIN values read in place from the page buffer; fixed-width runs are one bulk copy. */
  private final class PlainValues extends Values {
    private final ByteBuffer data;
    private int pos;

    PlainValues(ByteBuffer data, int pos) {
      this.data = data;
      this.pos = pos;
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
        return desc.getPrimitiveType().getTypeLength();
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
    void appendBinary(ColumnOut out) {
      int len = nextLength();
      out.append(data, pos, len);
      pos += len;
    }
  }

  /** Dictionary-encoded values: indices decoded in bulk, then gathered from primitive arrays. */
  private final class DictValues extends Values {
    private final RleDecoder ids;

    DictValues(RleDecoder ids) {
      this.ids = ids;
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
          int[] d = dictInts;
          for (int i = 0; i < k; i++) {
            dst.putInt(o + 4 * i, d[scratch[i]]);
          }
        } else {
          long[] d = dictLongs;
          for (int i = 0; i < k; i++) {
            dst.putLong(o + 8 * i, d[scratch[i]]);
          }
        }
        done += k;
      }
    }

    @Override
    int nextInt() {
      return dictionary.decodeToInt(ids.next());
    }

    @Override
    long nextLong() {
      return dictionary.decodeToLong(ids.next());
    }

    @Override
    float nextFloat() {
      return dictionary.decodeToFloat(ids.next());
    }

    @Override
    double nextDouble() {
      return dictionary.decodeToDouble(ids.next());
    }

    @Override
    boolean nextBoolean() {
      return dictionary.decodeToBoolean(ids.next());
    }

    @Override
    Binary nextBinary() {
      return dictionary.decodeToBinary(ids.next());
    }
  }

  /** Any other encoding, through parquet-java's reader. */
  private final class ReaderValues extends Values {
    private final ValuesReader r;

    ReaderValues(ValuesReader r) {
      this.r = r;
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
}
