package dev.sluice.io.parquet.internal;

import dev.sluice.core.Batch;
import dev.sluice.core.DatasetException;
import dev.sluice.core.DatasetFormatException;
import dev.sluice.core.DatasetIOException;
import dev.sluice.core.Options.NullPolicy;
import dev.sluice.core.Schema;
import dev.sluice.core.spi.BatchBuilder;
import dev.sluice.core.spi.BufferPool;
import dev.sluice.core.spi.ColumnBuilder;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.parquet.column.ColumnDescriptor;
import org.apache.parquet.column.page.PageReadStore;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.hadoop.metadata.BlockMetaData;
import org.apache.parquet.hadoop.metadata.ColumnChunkMetaData;
import org.apache.parquet.io.SeekableInputStream;

/**
 * Reads one row group of one file and decodes it, batch by batch, into pooled memory. Not
 * thread-safe: one subscription owns one reader and closes it.
 *
 * <p>A batch column holds at most 2 GiB of values, so {@link #next} ends a batch early, at a row
 * boundary, once a variable-length column (strings, bytes, lists) holds {@link #DEFAULT_BATCH_BYTES}
 * of values: rows of up to that size are read whatever the batch size asked for. Those columns are
 * decoded first in growing runs of rows, the fixed-width columns then in one run of as many rows.
 */
public final class RowGroupReader implements AutoCloseable {
  /** The value bytes of one variable-length column after which {@link #next} ends a batch: 1 GiB. */
  public static final long DEFAULT_BATCH_BYTES = 1L << 30;

  private final ParquetFileInfo file;
  private final int rowGroup;
  private final List<ColumnPlan> plans;
  private final Schema schema;
  private final BufferPool pool;
  private final long firstRow;
  private final long rowCount;
  private final NullPolicy nullPolicy;
  private static final PageCodecs CODECS = PageCodecs.recycling();

  private final ParquetFileReader reader; // whole row-group reads
  private final PageReadStore store;
  private final SeekableInputStream input; // reads of part of a row group
  private final ColumnChunkDecoder[] decoders;
  private long position; // rows of the row group consumed
  private final int[] columnRows; // per field: rows decoded past position by decodeColumn
  private final long batchBytes;

  /**
   * Opens the file and reads the row group's column chunks (pages are decompressed lazily).
   *
   * @param firstRow the global index of the row group's first row
   */
  public RowGroupReader(ParquetFileInfo file, int rowGroup, List<ColumnPlan> plans, Schema schema, BufferPool pool,
      long firstRow, NullPolicy nullPolicy, boolean verifyChecksums) {
    this(file, rowGroup, plans, schema, pool, firstRow, nullPolicy, verifyChecksums, DEFAULT_BATCH_BYTES);
  }

  /**
   * As the other constructor, with the value bytes of a variable-length column after which a batch
   * ends early.
   *
   * @param batchBytes &gt; 0, at most {@link #DEFAULT_BATCH_BYTES}
   */
  public RowGroupReader(ParquetFileInfo file, int rowGroup, List<ColumnPlan> plans, Schema schema, BufferPool pool,
      long firstRow, NullPolicy nullPolicy, boolean verifyChecksums, long batchBytes) {
    this(file, rowGroup, plans, schema, pool, firstRow, nullPolicy, verifyChecksums, batchBytes, 0, Long.MAX_VALUE);
  }

  /**
   * A reader of rows {@code [from, to)} of the row group, positioned at row {@code from}. The whole
   * row group ({@code from} 0, {@code to} at or past its end) is read as the other constructors read
   * it; a part of it reads only the pages that hold those rows: each column chunk's offset index
   * finds the page holding row {@code from}, or, without one, the page headers are walked and the
   * pages before it skipped unread (see {@link RangePages}), and the rows of that page before
   * {@code from} are decoded and dropped.
   *
   * @param from first row within the row group, ≥ 0
   * @param to end row (exclusive); rows past the row group's end are not read
   */
  public RowGroupReader(ParquetFileInfo file, int rowGroup, List<ColumnPlan> plans, Schema schema, BufferPool pool,
      long firstRow, NullPolicy nullPolicy, boolean verifyChecksums, long from, long to) {
    this(file, rowGroup, plans, schema, pool, firstRow, nullPolicy, verifyChecksums, DEFAULT_BATCH_BYTES, from, to);
  }

  private RowGroupReader(ParquetFileInfo file, int rowGroup, List<ColumnPlan> plans, Schema schema, BufferPool pool,
      long firstRow, NullPolicy nullPolicy, boolean verifyChecksums, long batchBytes, long from, long to) {
    if (batchBytes <= 0 || batchBytes > DEFAULT_BATCH_BYTES) {
      throw new IllegalArgumentException("batchBytes in [1, " + DEFAULT_BATCH_BYTES + "] required but it was "
          + batchBytes);
    }
    this.batchBytes = batchBytes;
    this.file = file;
    this.rowGroup = rowGroup;
    this.plans = plans;
    this.schema = schema;
    this.pool = pool;
    this.firstRow = firstRow;
    this.rowCount = file.rowGroups().get(rowGroup).getRowCount();
    this.nullPolicy = nullPolicy;
    long end = Math.min(to, rowCount);
    long start = Math.min(Math.max(0, from), end);
    if (start > 0 || end < rowCount) {
      this.reader = null;
      this.store = null;
      this.input = openInput();
      try {
        this.decoders = rangeDecoders(start, end, verifyChecksums);
      } catch (RuntimeException e) {
        closeQuietly(input);
        throw translate(e, file.name(), "row group " + rowGroup);
      } catch (Error e) {
        closeQuietly(input);
        throw e;
      }
      this.position = start;
      this.columnRows = new int[plans.size()];
      return;
    }
    this.input = null;
    ParquetFileReader r = null;
    PageReadStore s = null;
    try {
      r = file.newReader(verifyChecksums);
      List<ColumnDescriptor> cols = new ArrayList<>(plans.size());
      plans.forEach(p -> cols.add(p.descriptor()));
      r.setRequestedSchema(cols);
      try {
        s = r.readRowGroup(rowGroup);
      } catch (LinkageError e) {
        throw PageCounts.mismatch(file, rowGroup, plans, e);
      }
      if (s == null) {
        throw new DatasetFormatException(file.name(), "row group " + rowGroup, "the row group is missing");
      }
      ColumnChunkDecoder[] d = new ColumnChunkDecoder[plans.size()];
      for (int i = 0; i < d.length; i++) {
        d[i] = new ColumnChunkDecoder(plans.get(i), s.getPageReader(plans.get(i).descriptor()), file.name(),
            rowGroup, firstRow, nullPolicy);
      }
      this.decoders = d;
    } catch (RuntimeException | IOException e) {
      closeQuietly(s, r);
      throw translate(e, file.name(), "row group " + rowGroup);
    } catch (Error e) {
      closeQuietly(s, r);
      throw e;
    }
    this.reader = r;
    this.store = s;
    this.columnRows = new int[plans.size()];
  }

  private SeekableInputStream openInput() {
    try {
      return file.input().newStream();
    } catch (IOException e) {
      throw translate(e, file.name(), "row group " + rowGroup);
    }
  }

  /** Decoders of rows {@code [from, to)}, each over the pages of its chunk that hold them, at row {@code from}. */
  private ColumnChunkDecoder[] rangeDecoders(long from, long to, boolean verifyChecksums) {
    BlockMetaData block = file.rowGroups().get(rowGroup);
    ColumnChunkDecoder[] d = new ColumnChunkDecoder[plans.size()];
    for (int i = 0; i < d.length; i++) {
      ColumnPlan plan = plans.get(i);
      ColumnChunkMetaData meta = chunk(block, plan);
      RangePages.PageIndex index = from < to ? file.pageIndex(rowGroup, meta, input) : null;
      RangePages pages = new RangePages(file.name(), rowGroup, rowCount, plan.descriptor(), meta, index, input,
          CODECS, verifyChecksums, from, to, PageCache.shared(), file);
      d[i] = new ColumnChunkDecoder(plan, pages, file.name(), rowGroup, firstRow, nullPolicy, pages.startRow());
      d[i].skip(from - pages.startRow());
    }
    return d;
  }

  private ColumnChunkMetaData chunk(BlockMetaData block, ColumnPlan plan) {
    String path = String.join(".", plan.descriptor().getPath());
    for (ColumnChunkMetaData c : block.getColumns()) {
      if (c.getPath().toDotString().equals(path)) {
        return c;
      }
    }
    throw new DatasetFormatException(file.name(), "row group " + rowGroup, "the row group has no column chunk for '"
        + path + "'");
  }

  /** Maps parquet-java's failures to typed errors naming the file and position. */
  public static DatasetException translate(Throwable e, String file, String position) {
    if (e instanceof DatasetException de) {
      return de;
    }
    String msg = String.valueOf(e.getMessage());
    if (msg.contains("CRC") || msg.contains("checksum")) {
      return new DatasetFormatException(file, position, "page checksum mismatch: " + msg, e);
    }
    if (msg.startsWith("Expected ") && msg.contains(" values in column chunk")) { // pages disagree with the metadata
      return new DatasetFormatException(file, position, msg, e);
    }
    if (e instanceof java.io.EOFException) {
      return new DatasetFormatException(file, position, "the file ends early (truncated?): " + msg, e);
    }
    if (e instanceof IOException) {
      return new DatasetIOException(file, position + ": " + msg, e);
    }
    return new DatasetFormatException(file, position, "cannot decode: " + e, e);
  }

  private static void closeQuietly(SeekableInputStream in) {
    try {
      if (in != null) {
        in.close();
      }
    } catch (IOException | RuntimeException ignored) {
      // closing after a failure
    }
  }

  private static void closeQuietly(PageReadStore s, ParquetFileReader r) {
    try {
      if (s != null) {
        s.close();
      }
    } catch (RuntimeException ignored) {
      // closing after a failure
    }
    try {
      if (r != null) {
        r.close();
      }
    } catch (IOException | RuntimeException ignored) {
      // closing after a failure
    }
  }

  /** Rows left in the row group. */
  public long remaining() {
    return rowCount - position;
  }

  /**
   * The next {@code n} rows (at most {@link #remaining()}; fewer when a variable-length column
   * reaches the batch's value bytes first, but at least one) as a batch that the caller closes.
   */
  public Batch next(int n) {
    int rows = (int) Math.min(n, remaining());
    try (BatchBuilder builder = BatchBuilder.create(schema, Math.max(rows, 1), pool)) {
      int done = decodeVariable(builder, rows);
      for (int i = 0; i < decoders.length; i++) {
        if (builder.column(i).isFixedLength()) {
          decoders[i].decode(builder.column(i), 0, done);
        }
      }
      builder.commitRange(firstRow + position, done);
      position += done;
      return builder.build();
    } catch (RuntimeException e) {
      throw translate(e, file.name(), "row group " + rowGroup);
    }
  }

  /**
   * Decodes the variable-length columns of up to {@code rows} rows in runs that grow while their
   * values stay under {@link #batchBytes}; returns the rows decoded ({@code rows} when there are
   * no such columns).
   */
  private int decodeVariable(BatchBuilder builder, int rows) {
    int done = 0;
    int step = 1;
    while (done < rows) {
      int k = Math.min(step, rows - done);
      long bytes = 0;
      boolean any = false;
      for (int i = 0; i < decoders.length; i++) {
        ColumnBuilder c = builder.column(i);
        if (!c.isFixedLength()) {
          any = true;
          decoders[i].decode(c, done, k);
          bytes = Math.max(bytes, c.valueBytes());
        }
      }
      if (!any) {
        return rows;
      }
      done += k;
      if (bytes >= batchBytes) {
        break;
      }
      long perRow = Math.max(1, (bytes + done - 1) / done);
      step = (int) Math.max(1, Math.min(2L * step, (batchBytes - bytes) / perRow));
    }
    return done;
  }

  /** The global index of the next row. */
  public long index() {
    return firstRow + position;
  }

  /**
   * Decodes field {@code field} of the next {@code rows} rows (at most {@link #remaining()}) into
   * {@code into}: rows {@code [at, at + rows)} of a fixed-length field, or appended. Each field once
   * per {@link #advance}.
   */
  public void decodeColumn(int field, ColumnBuilder into, int at, int rows) {
    if (columnRows[field] != 0) {
      throw new IllegalStateException("field '" + schema.field(field).name() + "' of " + this
          + " was already decoded for the rows from " + position);
    }
    if (rows < 0 || rows > remaining()) {
      throw new IllegalArgumentException("cannot decode " + rows + " rows of " + this + ": " + remaining() + " are left");
    }
    int before = into.isFixedLength() ? 0 : into.rows();
    try {
      decoders[field].decode(into, at, rows);
    } catch (RuntimeException e) {
      throw translate(e, file.name(), "row group " + rowGroup);
    }
    if (!into.isFixedLength() && into.rows() - before != rows) {
      throw new DatasetFormatException(file.name(), "row group " + rowGroup + ", rows from " + position,
          "column '" + schema.field(field).name() + "': expected " + rows + " rows but decoded " + (into.rows() - before));
    }
    columnRows[field] = rows;
  }

  /** Moves past the next {@code rows} rows, which {@link #decodeColumn} decoded for every field. */
  public void advance(int rows) {
    for (int f = 0; f < columnRows.length; f++) {
      if (columnRows[f] != rows) {
        throw new IllegalStateException("cannot move " + this + " past " + rows + " rows: field '"
            + schema.field(f).name() + "' decoded " + columnRows[f] + " of them");
      }
    }
    position += rows;
    Arrays.fill(columnRows, 0);
  }

  @Override
  public void close() {
    closeQuietly(store, reader);
    closeQuietly(input);
  }

  @Override
  public String toString() {
    return file.name() + "#rg" + rowGroup;
  }
}
