package dev.sluice.io.parquet.internal;

import dev.sluice.core.DatasetFormatException;
import java.io.IOException;
import java.io.InputStream;
import java.util.List;
import org.apache.parquet.format.PageHeader;
import org.apache.parquet.format.PageType;
import org.apache.parquet.format.Util;
import org.apache.parquet.hadoop.metadata.BlockMetaData;
import org.apache.parquet.hadoop.metadata.ColumnChunkMetaData;
import org.apache.parquet.io.SeekableInputStream;

/**
 * The error parquet-java meant to raise when a column chunk's pages hold another number of values
 * than its metadata says. parquet-java builds that message with the file's Hadoop {@code Path}, so
 * without Hadoop on the class path it throws a {@link NoClassDefFoundError} instead; this class
 * finds the column chunk whose pages disagree by reading the page headers itself and names it.
 */
final class PageCounts {
  private PageCounts() {}

  /**
   * The format error behind {@code error}, a {@link LinkageError} parquet-java threw while reading
   * row group {@code rowGroup}: the first column chunk of {@code plans} whose data pages hold a
   * number of values other than its metadata's, or, when every chunk adds up, {@code error}
   * itself as a missing optional class.
   */
  static RuntimeException mismatch(ParquetFileInfo file, int rowGroup, List<ColumnPlan> plans, LinkageError error) {
    BlockMetaData block = file.rowGroups().get(rowGroup);
    for (ColumnPlan plan : plans) {
      String path = String.join(".", plan.descriptor().getPath());
      for (ColumnChunkMetaData c : block.getColumns()) {
        if (!c.getPath().toDotString().equals(path)) {
          continue;
        }
        long[] found;
        try {
          found = count(file, c);
        } catch (IOException | RuntimeException e) {
          return new DatasetFormatException(file.name(), "row group " + rowGroup + ", column '" + path + "'",
              "cannot read its page headers: " + e.getMessage(), e);
        }
        if (found[0] != c.getValueCount()) {
          return new DatasetFormatException(file.name(), "row group " + rowGroup + ", column '" + path + "'",
              "the column chunk's metadata says " + count(c.getValueCount(), "value") + " but its "
                  + count(found[1], "data page") + (found[1] == 1 ? " holds " : " hold ") + found[0]);
        }
      }
    }
    throw error;
  }

  private static String count(long n, String what) {
    return n + " " + what + (n == 1 ? "" : "s");
  }

  /** The values the data pages of chunk {@code c} hold, and the number of those pages. */
  private static long[] count(ParquetFileInfo file, ColumnChunkMetaData c) throws IOException {
    long start = c.getStartingPos();
    long end = start + c.getTotalSize();
    long values = 0;
    long pages = 0;
    try (SeekableInputStream in = file.input().newStream()) {
      in.seek(start);
      CountingStream counted = new CountingStream(in, start);
      while (counted.position < end) {
        PageHeader h = Util.readPageHeader(counted);
        if (h.getType() == PageType.DATA_PAGE && h.isSetData_page_header()) {
          values += h.getData_page_header().getNum_values();
          pages++;
        } else if (h.getType() == PageType.DATA_PAGE_V2 && h.isSetData_page_header_v2()) {
          values += h.getData_page_header_v2().getNum_values();
          pages++;
        }
        long skip = h.getCompressed_page_size();
        if (skip < 0 || counted.position + skip > end) {
          break;
        }
        in.seek(counted.position + skip);
        counted.position += skip;
      }
    }
    return new long[] {values, pages};
  }

  /** Counts the bytes read through it, from {@code position}. */
  private static final class CountingStream extends InputStream {
    private final InputStream in;
    long position;

    CountingStream(InputStream in, long position) {
      this.in = in;
      this.position = position;
    }

    @Override
    public int read() throws IOException {
      int b = in.read();
      if (b >= 0) {
        position++;
      }
      return b;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
      int n = in.read(b, off, len);
      if (n > 0) {
        position += n;
      }
      return n;
    }
  }
}
