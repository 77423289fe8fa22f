package dev.sluice.io.parquet.internal;

import dev.sluice.core.DatasetException;
import dev.sluice.core.DatasetFormatException;
import dev.sluice.core.DatasetIOException;
import java.io.ByteArrayInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.util.zip.CRC32;
import org.apache.parquet.bytes.BytesInput;
import org.apache.parquet.column.ColumnDescriptor;
import org.apache.parquet.column.Encoding;
import org.apache.parquet.column.page.DataPage;
import org.apache.parquet.column.page.DataPageV1;
import org.apache.parquet.column.page.DataPageV2;
import org.apache.parquet.column.page.DictionaryPage;
import org.apache.parquet.column.page.PageReader;
import org.apache.parquet.compression.CompressionCodecFactory.BytesInputDecompressor;
import org.apache.parquet.format.DataPageHeader;
import org.apache.parquet.format.DataPageHeaderV2;
import org.apache.parquet.format.OffsetIndex;
import org.apache.parquet.format.PageHeader;
import org.apache.parquet.format.PageType;
import org.apache.parquet.format.Util;
import org.apache.parquet.hadoop.metadata.ColumnChunkMetaData;
import org.apache.parquet.internal.hadoop.metadata.IndexReference;
import org.apache.parquet.io.SeekableInputStream;

/**
 * The data pages of one column chunk that hold rows {@code [from, to)} of its row group, read and
 * decompressed one at a time as the decoder asks for them. With an offset index the reader seeks
 * straight to the page holding row {@code from} and reads none before it; without one it walks the
 * page headers, skips unread every page whose rows its header gives and that ends before {@code from}
 * (every page of a column that is not repeated; a v2 page of any column), and starts at the first
 * page whose rows it cannot tell (a v1 page of a repeated column). {@link #startRow()} is the row of the row group the
 * first page handed out starts at; the decoder drops the rows from there to {@code from}. Pages that
 * start at or after {@code to} are not handed out. Page checksums are verified when asked.
 *
 * <p>Not thread-safe; reads through a stream the caller owns and closes.
 */
final class RangePages implements PageReader {
  /** Bytes read at first to find a page header; eight times more while a header is longer. */
  private static final int HEADER_BYTES = 512;

  private final String file;
  private final String where;
  private final SeekableInputStream in;
  private final ColumnChunkMetaData meta;
  private final BytesInputDecompressor decompressor;
  private final boolean verify;
  private final boolean repeated;
  private final long end; // the chunk's end in the file
  private final long to;
  private final DictionaryPage dictionary;
  private final long[] indexRows; // first row of each page from the offset index, or null
  private final int[] indexSizes; // bytes of each page, header included, from the offset index
  private final long[] indexOffsets; // file position of each page, from the offset index
  private final long rowGroupRows;
  private final int rowGroupIndex;
  private long pos; // file position of the next page header
  private long row; // row of the next page, or -1 once unknown
  private int page; // index of the next page in the offset index
  private final long startRow;
  private byte[] scratch = new byte[HEADER_BYTES]; // the bytes of the page being read
  private final long from;
  private final PageCache cache; // null: pages are not kept
  private final Object owner; // the file, in the cache's keys
  private final String column;
  private PageCache.Entry current; // the kept page last handed out, or null
  private PageCache.Entry dictionaryEntry; // the kept dictionary page, or null

  /**
   * Positions a reader on the page holding row {@code from} of column chunk {@code meta}.
   *
   * @param index the chunk's offset index, or null to walk the page headers
   */
  RangePages(String file, int rowGroup, long rowGroupRows, ColumnDescriptor desc, ColumnChunkMetaData meta,
      PageIndex index, SeekableInputStream in, PageCodecs codecs, boolean verify, long from, long to) {
    this(file, rowGroup, rowGroupRows, desc, meta, index, in, codecs, verify, from, to, null, null);
  }

  /**
   * As the other constructor, keeping in {@code cache} the pages that hold rows outside
   * {@code [from, to)} and taking from it the pages it keeps, under the key of file {@code owner}.
   */
  RangePages(String file, int rowGroup, long rowGroupRows, ColumnDescriptor desc, ColumnChunkMetaData meta,
      PageIndex index, SeekableInputStream in, PageCodecs codecs, boolean verify, long from, long to,
      PageCache cache, Object owner) {
    this.file = file;
    this.from = from;
    this.cache = owner == null ? null : cache;
    this.owner = owner;
    this.column = meta.getPath().toDotString();
    this.rowGroupIndex = rowGroup;
    this.where = "row group " + rowGroup + ", column '" + meta.getPath().toDotString() + "'";
    this.in = in;
    this.meta = meta;
    this.decompressor = codecs.getDecompressor(meta.getCodec());
    this.verify = verify;
    this.repeated = desc.getMaxRepetitionLevel() > 0;
    this.rowGroupRows = rowGroupRows;
    this.end = meta.getStartingPos() + meta.getTotalSize();
    this.to = to;
    this.pos = meta.getStartingPos();
    this.row = 0;
    this.dictionary = from >= to ? null : readDictionary();
    if (from >= to) {
      this.indexRows = null;
      this.indexSizes = null;
      this.indexOffsets = null;
      this.pos = end; // nothing to read
      this.startRow = from;
      return;
    }
    if (index != null) {
      long[] rows = index.rows();
      int at = 0;
      for (int i = 0; i < rows.length; i++) {
        if (rows[i] <= from) {
          at = i;
        }
      }
      this.indexRows = rows;
      this.indexSizes = index.sizes();
      this.indexOffsets = index.offsets();
      this.page = at;
      this.pos = indexOffsets[at];
      this.row = rows[at];
    } else {
      this.indexRows = null;
      this.indexSizes = null;
      this.indexOffsets = null;
      walkTo(from);
    }
    this.startRow = row;
  }

  /**
   * A column chunk's offset index: the first row, the size (header included) and the file offset
   * of every page, in file order. Shared, never modified.
   */
  record PageIndex(long[] rows, int[] sizes, long[] offsets) {
    /** The arrays of {@code index}. */
    static PageIndex of(OffsetIndex index) {
      int n = index.getPage_locations().size();
      long[] rows = new long[n];
      int[] sizes = new int[n];
      long[] offsets = new long[n];
      for (int i = 0; i < n; i++) {
        var p = index.getPage_locations().get(i);
        rows[i] = p.getFirst_row_index();
        sizes[i] = p.getCompressed_page_size();
        offsets[i] = p.getOffset();
      }
      return new PageIndex(rows, sizes, offsets);
    }
  }

  /**
   * The offset index of column chunk {@code meta} read through {@code in}, or null when the file has
   * none for it or the one it has cannot be read or does not fit the chunk ({@link #checked}).
   */
  static OffsetIndex offsetIndex(SeekableInputStream in, ColumnChunkMetaData meta, long rowGroupRows) {
    IndexReference ref = meta.getOffsetIndexReference();
    if (ref == null || ref.getLength() <= 0) {
      return null;
    }
    try {
      byte[] b = new byte[ref.getLength()];
      in.seek(ref.getOffset());
      in.readFully(b);
      return checked(Util.readOffsetIndex(new ByteArrayInputStream(b)), meta, rowGroupRows);
    } catch (IOException | RuntimeException e) {
      return null; // the pages are then found by their headers, which are checked as they are read
    }
  }

  /**
   * Checks an offset index against its column chunk: pages in file order inside the chunk, the
   * first at row 0, first rows increasing and inside the row group. Returns null for an index that
   * fails, so the pages are found by their headers instead.
   */
  static OffsetIndex checked(OffsetIndex index, ColumnChunkMetaData meta, long rowGroupRows) {
    if (index == null || !index.isSetPage_locations() || index.getPage_locations().isEmpty()) {
      return null;
    }
    long start = meta.getStartingPos();
    long chunkEnd = start + meta.getTotalSize();
    long lastRow = -1;
    long lastEnd = start;
    for (var p : index.getPage_locations()) {
      long first = p.getFirst_row_index();
      if (lastRow < 0 ? first != 0 : first <= lastRow || first >= rowGroupRows) {
        return null;
      }
      if (p.getOffset() < lastEnd || p.getCompressed_page_size() <= 0
          || p.getOffset() + p.getCompressed_page_size() > chunkEnd) {
        return null;
      }
      lastRow = first;
      lastEnd = p.getOffset() + p.getCompressed_page_size();
    }
    return index;
  }

  /** The row of the row group at which the first page handed out starts. */
  long startRow() {
    return startRow;
  }

  @Override
  public DictionaryPage readDictionaryPage() {
    return dictionary;
  }

  @Override
  public long getTotalValueCount() {
    return meta.getValueCount();
  }

  /** The kept dictionary page ({@link PageCache}) {@link #readDictionaryPage} hands out, or null when it is not kept. */
  PageCache.Entry cachedDictionary() {
    return dictionaryEntry;
  }

  /** The kept page ({@link PageCache}) that {@link #readPage} handed out last, or null when it is not kept. */
  PageCache.Entry cached() {
    return current;
  }

  @Override
  public DataPage readPage() {
    current = null;
    while (pos < end && (row < 0 || row < to)) {
      if (indexRows != null && page >= indexRows.length) {
        return null;
      }
      long at = indexRows != null ? indexOffsets[page] : pos;
      PageCache.Key key = cache == null ? null : new PageCache.Key(owner, rowGroupIndex, column, at, verify);
      PageCache.Entry kept = key == null ? null : cache.get(key);
      if (kept != null && kept.page != null) {
        pos = kept.next;
        if (indexRows != null) {
          page++;
        }
        row = kept.rows < 0 || row < 0 ? -1 : row + kept.rows;
        current = kept;
        return kept.page;
      }
      Header h = header(at, indexRows != null ? indexSizes[page] : HEADER_BYTES);
      pos = h.bodyAt + h.header.getCompressed_page_size();
      PageType type = h.header.getType();
      if (type != PageType.DATA_PAGE && type != PageType.DATA_PAGE_V2) {
        if (indexRows != null) {
          throw error("the offset index names a " + type + " page at byte " + at + " as data page " + page, null);
        }
        continue; // index pages, or a dictionary page out of place: nothing to decode
      }
      long rows = rows(h.header);
      if (indexRows != null) {
        long expected = (page + 1 < indexRows.length ? indexRows[page + 1] : rowGroupRows) - indexRows[page];
        if (rows >= 0 && rows != expected) {
          throw error("the page at byte " + at + " holds " + rows + " rows but the offset index says " + expected,
              null);
        }
        rows = expected;
        page++;
      }
      Body body = body(h, at);
      long first = row;
      row = rows < 0 || row < 0 ? -1 : row + rows;
      boolean keep = key != null && (first < 0 || rows < 0 || first < from || first + rows > to);
      DataPage data = dataPage(h.header, body, at, keep);
      if (keep) {
        current = new PageCache.Entry(data, pos, rows, weight(h.header, data));
        cache.put(key, current);
      }
      return data;
    }
    return null;
  }

  /** What a kept page weighs: its bytes and, at most, its decoded definition and repetition levels. */
  private long weight(PageHeader h, DataPage data) {
    long levels = (long) data.getValueCount() * 4 * ((repeated ? 1 : 0) + 1);
    return h.getUncompressed_page_size() + levels + 256;
  }

  /** The rows a data page header gives, or -1 when only the levels tell (a v1 page of a repeated column). */
  private long rows(PageHeader h) {
    if (h.getType() == PageType.DATA_PAGE_V2) {
      return h.getData_page_header_v2().getNum_rows();
    }
    return repeated ? -1 : h.getData_page_header().getNum_values();
  }

  /** Skips, by their headers, the data pages that end at or before row {@code from}. */
  private void walkTo(long from) {
    while (pos < end) {
      Header h = header(pos, HEADER_BYTES);
      PageType type = h.header.getType();
      long next = h.bodyAt + h.header.getCompressed_page_size();
      if (type == PageType.DATA_PAGE || type == PageType.DATA_PAGE_V2) {
        long rows = rows(h.header);
        if (rows < 0 || row + rows > from) {
          return;
        }
        row += rows;
      }
      pos = next;
    }
  }

  /** The chunk's dictionary page, when its first page is one (whatever the metadata's dictionary offset says). */
  private DictionaryPage readDictionary() {
    if (pos >= end) {
      return null;
    }
    long at = pos;
    PageCache.Key key = cache == null ? null : new PageCache.Key(owner, rowGroupIndex, column, at, verify);
    PageCache.Entry kept = key == null ? null : cache.get(key);
    if (kept != null && kept.dictionary != null) {
      pos = kept.next;
      dictionaryEntry = kept;
      return kept.dictionary;
    }
    Header h = header(pos, HEADER_BYTES);
    if (h.header.getType() != PageType.DICTIONARY_PAGE) {
      return null;
    }
    Body body = body(h, at);
    pos = h.bodyAt + h.header.getCompressed_page_size();
    var d = h.header.getDictionary_page_header();
    try {
      BytesInput bytes = decompressor.decompress(body.input(), h.header.getUncompressed_page_size());
      if (key != null) { // kept: it owns its bytes (a recycling decompressor reuses the array it returned)
        bytes = BytesInput.from(bytes.toByteArray());
      }
      DictionaryPage page = new DictionaryPage(bytes, h.header.getUncompressed_page_size(), d.getNum_values(),
          encoding(d.getEncoding()));
      if (key != null) { // what the decoded dictionary weighs, at most
        dictionaryEntry = new PageCache.Entry(page, pos, 3L * h.header.getUncompressed_page_size() + 16L
            * d.getNum_values() + 256);
        cache.put(key, dictionaryEntry);
      }
      return page;
    } catch (IOException e) {
      throw error("cannot decompress the dictionary page at byte " + at + ": " + e.getMessage(), e);
    }
  }

  /**
   * The data page at {@code at}. A page that is {@code kept} in the {@link PageCache} owns its
   * bytes: a recycling decompressor ({@link PageCodecs#recycling()}) overwrites the array it
   * returned with the next page it decompresses.
   */
  private DataPage dataPage(PageHeader h, Body body, long at, boolean kept) {
    int uncompressed = h.getUncompressed_page_size();
    try {
      if (h.getType() == PageType.DATA_PAGE) {
        DataPageHeader d = h.getData_page_header();
        BytesInput bytes = decompressor.decompress(body.input(), uncompressed);
        if (kept) {
          bytes = BytesInput.from(bytes.toByteArray());
        }
        return new DataPageV1(bytes, d.getNum_values(), uncompressed, null, encoding(d.getRepetition_level_encoding()),
            encoding(d.getDefinition_level_encoding()), encoding(d.getEncoding()));
      }
      DataPageHeaderV2 d = h.getData_page_header_v2();
      int rl = d.getRepetition_levels_byte_length();
      int dl = d.getDefinition_levels_byte_length();
      if (rl < 0 || dl < 0 || rl + dl > body.length() || rl + dl > uncompressed) {
        throw error("the v2 page at byte " + at + " has " + rl + " + " + dl + " level bytes in a page of "
            + body.length(), null);
      }
      BytesInput data = body.slice(rl + dl, body.length() - rl - dl);
      data = d.isIs_compressed() ? decompressor.decompress(data, uncompressed - rl - dl) : body.copy(rl + dl,
          body.length() - rl - dl);
      if (kept && d.isIs_compressed()) {
        data = BytesInput.from(data.toByteArray());
      }
      return DataPageV2.uncompressed(d.getNum_rows(), d.getNum_nulls(), d.getNum_values(),
          body.copy(0, rl), body.copy(rl, dl), encoding(d.getEncoding()), data, null);
    } catch (IOException e) {
      throw error("cannot decompress the page at byte " + at + ": " + e.getMessage(), e);
    }
  }

  private static Encoding encoding(org.apache.parquet.format.Encoding e) {
    return Encoding.valueOf(e.name());
  }

  /** A page header and where the page's body starts. */
  private record Header(PageHeader header, long bodyAt, byte[] bytes, int bytesFrom, int bytesTo) {}

  /**
   * Reads the page header at {@code at}, with the bytes read after it (the page's body starts
   * there): {@code guess} bytes at first (the whole page when its size is known).
   */
  private Header header(long at, int guess) {
    int want = Math.max(guess, HEADER_BYTES);
    while (true) {
      int n = (int) Math.min(want, end - at);
      byte[] buf = read(at, n);
      Counting stream = new Counting(buf, n);
      try {
        PageHeader h = Util.readPageHeader(stream);
        int len = stream.consumed();
        if (h.getCompressed_page_size() < 0 || at + len + h.getCompressed_page_size() > end) {
          throw error("the page at byte " + at + " claims " + h.getCompressed_page_size()
              + " bytes but the column chunk ends at byte " + end, null);
        }
        return new Header(h, at + len, buf, len, n);
      } catch (IOException | RuntimeException e) {
        if (e instanceof DatasetException de) {
          throw de;
        }
        if (n < want || want >= (1 << 26)) {
          throw error("cannot read the page header at byte " + at + ": " + e.getMessage(), e);
        }
        want *= 8;
      }
    }
  }

  /** The page's body (a view of the bytes read with its header when they hold it), its checksum verified when asked. */
  private Body body(Header h, long at) {
    int size = h.header.getCompressed_page_size();
    Body body = h.bytesTo - h.bytesFrom >= size ? new Body(h.bytes, h.bytesFrom, size)
        : new Body(read(h.bodyAt, size), 0, size);
    if (verify && h.header.isSetCrc()) {
      CRC32 crc = new CRC32();
      crc.update(body.bytes, body.from, body.length);
      int found = (int) crc.getValue();
      if (found != h.header.getCrc()) {
        throw error("page checksum mismatch: the page at byte " + at + " has CRC " + Integer.toUnsignedString(found)
            + " but its header says " + Integer.toUnsignedString(h.header.getCrc()), null);
      }
    }
    return body;
  }

  /** Bytes {@code [from, from + length)} of {@code bytes}: a page's body, in the scratch buffer. */
  private record Body(byte[] bytes, int from, int length) {
    BytesInput input() {
      return BytesInput.from(bytes, from, length);
    }

    BytesInput slice(int offset, int n) {
      return BytesInput.from(bytes, from + offset, n);
    }

    /** A copy of bytes {@code [offset, offset + n)}: the body itself lives in the reused scratch buffer. */
    BytesInput copy(int offset, int n) {
      return BytesInput.from(java.util.Arrays.copyOfRange(bytes, from + offset, from + offset + n));
    }
  }

  /**
   * Bytes {@code [at, at + n)} of the file in the reader's scratch buffer (valid until the next
   * read): a page's compressed bytes are dead once it is decompressed, so one buffer serves them all.
   */
  private byte[] read(long at, int n) {
    if (scratch.length < n) {
      scratch = new byte[Math.max(n, (int) Math.min(Integer.MAX_VALUE - 8, 2L * scratch.length))];
    }
    byte[] b = scratch;
    try {
      in.seek(at);
      in.readFully(b, 0, n);
    } catch (EOFException e) {
      throw error("the file ends early (truncated?): " + e.getMessage(), e);
    } catch (IOException e) {
      throw new DatasetIOException(file, where + ": " + e.getMessage(), e);
    }
    return b;
  }

  private DatasetFormatException error(String message, Throwable cause) {
    return new DatasetFormatException(file, where, message, cause);
  }

  /** Reads a byte array, counting what was consumed. */
  private static final class Counting extends ByteArrayInputStream {
    Counting(byte[] b, int length) {
      super(b, 0, length);
    }

    int consumed() {
      return pos;
    }
  }
}
