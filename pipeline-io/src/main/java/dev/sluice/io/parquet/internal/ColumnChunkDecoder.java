package dev.sluice.io.parquet.internal;

import dev.sluice.core.DatasetFormatException;
import dev.sluice.core.Options.NullPolicy;
import dev.sluice.core.spi.ColumnBuilder;
import java.io.IOException;
import org.apache.parquet.column.page.PageReader;

/**
 * Decodes the pages of one column chunk straight into batch columns: pages and levels come from
 * {@link PageLevels}, values from a {@link ValueSource} per page, type conversion is
 * {@link ValueWriter}'s, and rows are laid out here (scalars), by {@link FixedListAssembler}
 * (declared-shape lists) or by {@link ListAssembler} (lists at any depth).
 */
final class ColumnChunkDecoder {
  final ColumnPlan plan;
  final ChunkContext ctx;
  final PageLevels levels;
  final ValueWriter writer;
  private final PageDictionary dictionary;
  private final FixedListAssembler fixedLists;
  private final ListAssembler lists;
  /** The values of the current page. */
  ValueSource values;
  /** Rows of the row group before the next row to decode (for messages). */
  long rowsDone;

  ColumnChunkDecoder(ColumnPlan plan, PageReader pages, String file, int rowGroup, long firstRow, NullPolicy nullPolicy) {
    this(plan, pages, file, rowGroup, firstRow, nullPolicy, 0);
  }

  /**
   * A decoder whose first page starts at row {@code startRow} of the row group.
   *
   * @param firstRow the global index of the row group's first row
   */
  ColumnChunkDecoder(ColumnPlan plan, PageReader pages, String file, int rowGroup, long firstRow, NullPolicy nullPolicy,
      long startRow) {
    this.rowsDone = startRow;
    this.plan = plan;
    this.ctx = new ChunkContext(file, rowGroup, firstRow, plan.name(), nullPolicy);
    this.levels = new PageLevels(plan.descriptor(), pages,
        ctx, plan.layout() == ColumnPlan.Layout.FIXED_LIST ? plan.listLength() : 0);
    this.writer = new ValueWriter(plan);
    this.dictionary = dictionary(pages, plan, ctx);
    this.fixedLists = plan.layout() == ColumnPlan.Layout.FIXED_LIST ? new FixedListAssembler(this) : null;
    this.lists = plan.layout() == ColumnPlan.Layout.LISTS ? new ListAssembler(this) : null;
  }

  /** The chunk's dictionary decoded, or null: decoded once while its page is kept ({@link PageCache}). */
  private static PageDictionary dictionary(PageReader pages, ColumnPlan plan, ChunkContext ctx) {
    PageCache.Entry kept = pages instanceof RangePages r ? r.cachedDictionary() : null;
    PageDictionary known = kept == null ? null : kept.decoded();
    if (known != null) {
      return known;
    }
    PageDictionary d = PageDictionary.read(pages.readDictionaryPage(), plan.descriptor(), ctx);
    if (kept != null) {
      kept.decoded(d);
    }
    return d;
  }

  /**
   * Moves to the next data page and its values.
   *
   * @return false at the end of the column chunk
   */
  boolean nextPage() {
    try {
      if (!levels.next()) {
        return false;
      }
      values = ValueSource.of(levels.encoding, levels.data, levels.dataPos, levels.nonNull, plan.descriptor(),
          dictionary, ctx);
      return true;
    } catch (DatasetFormatException e) {
      throw e;
    } catch (IOException | RuntimeException e) {
      throw ctx.error("cannot decode a data page: " + e, e);
    }
  }

  /** The error for a chunk that ends after {@code decoded} rows of the row group. */
  DatasetFormatException endsEarly(long decoded) {
    return ctx.error("the column chunk ends after " + decoded + " rows but the row group has more", null);
  }

  /** Decodes the next {@code rows} rows into rows {@code [firstRow, firstRow + rows)} of {@code out}. */
  void decode(ColumnBuilder out, int firstRow, int rows) {
    try {
      switch (plan.layout()) {
        case SCALAR -> decodeScalars(out, firstRow, rows);
        case FIXED_LIST -> fixedLists.decode(out, firstRow, rows);
        case LISTS -> lists.decode(out, rows);
      }
    } catch (DatasetFormatException e) {
      throw e;
    } catch (RuntimeException e) {
      throw ctx.error("cannot decode: " + e, e);
    }
    rowsDone += rows;
  }

  /**
   * Moves past the next {@code rows} rows: their levels are read and their values skipped without
   * being converted or written (a row is a level of repetition level 0; a null is no value). Pages
   * of whole lists of a declared length move by rows times that length; values of a fixed width
   * and runs of dictionary indices are skipped without being read.
   */
  void skip(long rows) {
    if (rows <= 0) {
      return;
    }
    PageLevels lv = levels;
    int maxDef = plan.maxDef();
    boolean flat = plan.maxRep() == 0;
    long started = 0;
    try {
      while (!(flat && started == rows)) {
        if (!lv.hasLevel()) {
          if (!nextPage()) {
            break;
          }
          continue;
        }
        int from = lv.pos;
        int n;
        int len = plan.layout() == ColumnPlan.Layout.FIXED_LIST ? plan.listLength() : 0;
        if (flat) {
          n = (int) Math.min(rows - started, lv.count - lv.pos);
          started += n;
        } else if (lv.repsPlain && lv.pos % len == 0) { // whole lists of len levels: rows by arithmetic
          long k = Math.min(rows - started, (lv.count - lv.pos) / len);
          n = (int) k * len;
          started += k;
        } else {
          int p = lv.pos;
          while (p < lv.count) {
            if (lv.rep(p) == 0) {
              if (started == rows) {
                break;
              }
              started++;
            }
            p++;
          }
          n = p - lv.pos;
        }
        int present = n;
        if (!lv.defsAllMax) {
          present = 0;
          int[] defs = lv.defs();
          for (int i = from; i < from + n; i++) {
            if (defs[i] == maxDef) {
              present++;
            }
          }
        }
        values.skip(present);
        lv.pos += n;
        if (lv.hasLevel()) {
          break; // stopped at the start of the row after the skipped ones
        }
      }
    } catch (DatasetFormatException e) {
      throw e;
    } catch (RuntimeException e) {
      throw ctx.error("cannot decode: " + e, e);
    }
    if (started < rows) {
      throw endsEarly(rowsDone + started);
    }
    rowsDone += rows;
  }

  private void decodeScalars(ColumnBuilder out, int firstRow, int rows) {
    int row = firstRow;
    int left = rows;
    PageLevels lv = levels;
    while (left > 0) {
      if (!lv.hasLevel() && !nextPage()) {
        throw endsEarly(rowsDone + rows - left);
      }
      int n = Math.min(left, lv.count - lv.pos);
      if (lv.defsAllMax) {
        writeRun(out, row, n);
      } else {
        int[] defs = lv.defs();
        int maxDef = plan.maxDef();
        int i = 0;
        while (i < n) {
          int j = i;
          while (j < n && defs[lv.pos + j] == maxDef) {
            j++;
          }
          if (j > i) {
            writeRun(out, row + i, j - i);
            i = j;
          }
          if (i < n) {
            ctx.checkNull(rowsDone + row + i - firstRow, "null value");
            if (out.isFixedLength()) {
              out.setNull(row + i);
            } else {
              out.addNull(0);
            }
            i++;
          }
        }
      }
      lv.pos += n;
      row += n;
      left -= n;
    }
  }

  /** Writes {@code n} consecutive non-null scalar rows from row {@code row}. */
  private void writeRun(ColumnBuilder out, int row, int n) {
    if (!out.isFixedLength()) {
      for (int i = 0; i < n; i++) {
        values.addBytes(out);
      }
      return;
    }
    writer.write(values, out.fixedBuffer(), row * writer.width(), n);
  }
}
