package dev.sluice.benchmarks.parquet;

import dev.sluice.core.Batch;
import dev.sluice.core.Split;
import dev.sluice.io.parquet.Parquet;
import dev.sluice.io.parquet.ParquetDataset;
import dev.sluice.io.parquet.ParquetOptions;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.Map;
import org.apache.parquet.ParquetReadOptions;
import org.apache.parquet.column.ColumnDescriptor;
import org.apache.parquet.column.page.DataPage;
import org.apache.parquet.column.page.DataPageV1;
import org.apache.parquet.column.page.DataPageV2;
import org.apache.parquet.column.page.DictionaryPage;
import org.apache.parquet.column.page.PageReadStore;
import org.apache.parquet.column.page.PageReader;
import org.apache.parquet.conf.PlainParquetConfiguration;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.hadoop.ParquetReader;
import org.apache.parquet.hadoop.api.InitContext;
import org.apache.parquet.hadoop.api.ReadSupport;
import org.apache.parquet.io.InputFile;
import org.apache.parquet.io.LocalInputFile;
import org.apache.parquet.io.api.Converter;
import org.apache.parquet.io.api.GroupConverter;
import org.apache.parquet.io.api.PrimitiveConverter;
import org.apache.parquet.io.api.RecordMaterializer;
import org.apache.parquet.schema.MessageType;

/** The three contenders of the decode benchmark, each returning a checksum so nothing is optimized away. */
public final class Readers {
  private Readers() {}

  /** Sluice's columnar path: every row group, one after the other, on the calling thread. */
  public static long sluiceColumnar(ParquetDataset ds, int batchSize) {
    long sum = 0;
    for (Split s : ds.splits()) {
      for (Batch b : ds.readBatches(s, 0, Long.MAX_VALUE, batchSize).toIterable(2)) {
        try (b) {
          sum += b.size() + (b.column(0).values().getFloat(0) != 0 ? 1 : 0);
        }
      }
    }
    return sum;
  }

  /** Options of the benchmarks: defaults, with {@code -Dsluice.parquet.localFiles=MAPPED|STREAM} honoured. */
  public static ParquetOptions options() {
    String io = System.getProperty("sluice.parquet.localFiles");
    return io == null ? ParquetOptions.defaults()
        : ParquetOptions.builder().localFiles(ParquetOptions.LocalFiles.valueOf(io)).build();
  }

  public static ParquetDataset open(Path file) {
    return Parquet.open(file, options());
  }

  /** parquet-java's ceiling: read and decompress every page through {@link PageReader}, decode nothing. */
  public static long pagesOnly(Path file) throws IOException {
    long sum = 0;
    ParquetReadOptions opts = ParquetReadOptions.builder(new PlainParquetConfiguration()).build();
    try (ParquetFileReader r = ParquetFileReader.open(new LocalInputFile(file), opts)) {
      var columns = r.getFooter().getFileMetaData().getSchema().getColumns();
      PageReadStore rg;
      while ((rg = r.readNextRowGroup()) != null) {
        try (PageReadStore store = rg) {
          for (ColumnDescriptor c : columns) {
            PageReader pr = store.getPageReader(c);
            DictionaryPage dp = pr.readDictionaryPage();
            if (dp != null) {
              sum += dp.getBytes().toByteBuffer().remaining();
            }
            DataPage p;
            while ((p = pr.readPage()) != null) {
              ByteBuffer b = p instanceof DataPageV1 v1 ? v1.getBytes().toByteBuffer()
                  : ((DataPageV2) p).getData().toByteBuffer();
              sum += b.remaining() + b.get(b.position());
            }
          }
        }
      }
    }
    return sum;
  }

  /** parquet-java's record API with a custom {@link ReadSupport} filling a reused primitive row. */
  public static long recordApi(Path file, int dim) throws IOException {
    long sum = 0;
    try (ParquetReader<Row> r = new RowReaderBuilder(new LocalInputFile(file), dim).build()) {
      Row row;
      while ((row = r.read()) != null) {
        sum += row.label + (row.x[dim - 1] != 0 ? 1 : 0);
      }
    }
    return sum;
  }

  /** The reused record. */
  static final class Row {
    final float[] x;
    int n;
    long label;

    Row(int dim) {
      x = new float[dim];
    }
  }

  private static final class RowReaderBuilder extends ParquetReader.Builder<Row> {
    private final int dim;

    RowReaderBuilder(InputFile file, int dim) {
      super(file, new PlainParquetConfiguration());
      this.dim = dim;
    }

    @Override
    protected ReadSupport<Row> getReadSupport() {
      return new RowReadSupport(dim);
    }
  }

  private static final class RowReadSupport extends ReadSupport<Row> {
    private final int dim;

    RowReadSupport(int dim) {
      this.dim = dim;
    }

    @Override
    public ReadContext init(InitContext context) {
      return new ReadContext(context.getFileSchema());
    }

    @Override
    public RecordMaterializer<Row> prepareForRead(org.apache.hadoop.conf.Configuration conf,
        Map<String, String> meta, MessageType schema, ReadContext ctx) {
      return materializer(schema);
    }

    @Override
    public RecordMaterializer<Row> prepareForRead(org.apache.parquet.conf.ParquetConfiguration conf,
        Map<String, String> meta, MessageType schema, ReadContext ctx) {
      return materializer(schema);
    }

    private RecordMaterializer<Row> materializer(MessageType schema) {
      Row row = new Row(dim);
      boolean list = schema.getFieldCount() == 4; // x, label, score, name
      PrimitiveConverter ignored = new PrimitiveConverter() {
        @Override
        public void addFloat(float value) {}

        @Override
        public void addBinary(org.apache.parquet.io.api.Binary value) {}
      };
      PrimitiveConverter label = new PrimitiveConverter() {
        @Override
        public void addLong(long value) {
          row.label = value;
        }
      };
      GroupConverter root;
      if (list) {
        PrimitiveConverter element = new PrimitiveConverter() {
          @Override
          public void addFloat(float value) {
            row.x[row.n++] = value;
          }
        };
        GroupConverter listGroup = new Groups(new Converter[] {element});
        GroupConverter x = new Groups(new Converter[] {listGroup});
        root = new Groups(new Converter[] {x, label, ignored, ignored}) {
          @Override
          public void start() {
            row.n = 0;
          }
        };
      } else {
        Converter[] cs = new Converter[dim + 3];
        for (int i = 0; i < dim; i++) {
          int k = i;
          cs[i] = new PrimitiveConverter() {
            @Override
            public void addFloat(float value) {
              row.x[k] = value;
            }
          };
        }
        cs[dim] = label;
        cs[dim + 1] = ignored;
        cs[dim + 2] = ignored;
        root = new Groups(cs);
      }
      GroupConverter r = root;
      return new RecordMaterializer<>() {
        @Override
        public Row getCurrentRecord() {
          return row;
        }

        @Override
        public GroupConverter getRootConverter() {
          return r;
        }
      };
    }
  }

  private static class Groups extends GroupConverter {
    private final Converter[] children;

    Groups(Converter[] children) {
      this.children = children;
    }

    @Override
    public Converter getConverter(int fieldIndex) {
      return children[fieldIndex];
    }

    @Override
    public void start() {}

    @Override
    public void end() {}
  }
}
