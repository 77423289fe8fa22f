package dev.sluice.spark.internal;

import dev.sluice.core.Example;
import dev.sluice.core.Split;
import dev.sluice.core.Tensor;
import dev.sluice.io.shards.ShardInfo;
import dev.sluice.io.shards.ShardSet;
import dev.sluice.io.shards.Shards;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Iterator;
import java.util.List;
import java.util.stream.Stream;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.util.GenericArrayData;
import org.apache.spark.sql.connector.read.Batch;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.connector.read.SupportsPushDownRequiredColumns;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * A read of a shard set: one input partition per shard, only the required columns decoded; with
 * no column required (a count) no shard is opened on the executors.
 */
final class ShardScan implements ScanBuilder, SupportsPushDownRequiredColumns, Scan, Batch {
  /** Read option: {@code false} delivers rows one at a time instead of columnar batches. */
  static final String COLUMNAR = "columnar";

  private final URI uri;
  private final boolean columnar;
  private StructType schema;

  ShardScan(URI uri, StructType schema, boolean columnar) {
    this.uri = uri;
    this.schema = schema;
    this.columnar = columnar;
  }

  @Override
  public void pruneColumns(StructType required) {
    this.schema = required;
  }

  @Override
  public Scan build() {
    return this;
  }

  @Override
  public StructType readSchema() {
    return schema;
  }

  @Override
  public Batch toBatch() {
    return this;
  }

  @Override
  public InputPartition[] planInputPartitions() {
    try (ShardSet set = Shards.open(uri)) {
      List<ShardInfo> shards = set.shards();
      InputPartition[] out = new InputPartition[shards.size()];
      for (int i = 0; i < out.length; i++) {
        out[i] = new ShardPartition(uri.toString(), i, shards.get(i).rows());
      }
      return out;
    }
  }

  @Override
  public PartitionReaderFactory createReaderFactory() {
    return new Factory(schema, columnar && schema.fields().length > 0,
        SQLConf.get().parquetVectorizedReaderBatchSize());
  }

  /** Shard {@code index} of the set at {@code uri}. */
  record ShardPartition(String uri, int index, long rows) implements InputPartition {}

  /**
   * Readers of one shard: columnar batches of {@code batchSize} rows when {@code columnar} (every
   * column type the schema mapping produces can be filled), else rows; no column at all is a count.
   */
  record Factory(StructType schema, boolean columnar, int batchSize) implements PartitionReaderFactory {
    @Override
    public PartitionReader<InternalRow> createReader(InputPartition partition) {
      ShardPartition p = (ShardPartition) partition;
      return schema.fields().length == 0 ? new CountOnly(p.rows()) : new Rows(p, schema);
    }

    @Override
    public boolean supportColumnarReads(InputPartition partition) {
      return columnar;
    }

    @Override
    public PartitionReader<ColumnarBatch> createColumnarReader(InputPartition partition) {
      return new ShardColumnarReader((ShardPartition) partition, schema, batchSize);
    }
  }

  /** Empty rows, as many as the shard holds, read from metadata.json alone. */
  static final class CountOnly implements PartitionReader<InternalRow> {
    private long left;
    private final InternalRow empty = new GenericInternalRow(0);

    CountOnly(long rows) {
      this.left = rows;
    }

    @Override
    public boolean next() {
      return left-- > 0;
    }

    @Override
    public InternalRow get() {
      return empty;
    }

    @Override
    public void close() {}
  }

  static final class Rows implements PartitionReader<InternalRow> {
    private final ShardSet set;
    private final Stream<Example> stream;
    private final Iterator<Example> it;
    private final StructField[] fields;
    private InternalRow current;

    Rows(ShardPartition p, StructType schema) {
      this.set = Shards.open(URI.create(p.uri()));
      try {
        Split split = set.splits().get(p.index());
        this.stream = set.read(split, 0, p.rows()).toStream(256);
        this.it = stream.iterator();
      } catch (RuntimeException e) {
        set.close();
        throw e;
      }
      this.fields = schema.fields();
    }

    @Override
    public boolean next() {
      if (!it.hasNext()) {
        return false;
      }
      Example e = it.next();
      Object[] values = new Object[fields.length];
      for (int i = 0; i < fields.length; i++) {
        String name = fields[i].name();
        values[i] = e.isNull(name) ? null : value(fields[i].dataType(), e.tensor(name));
      }
      current = new GenericInternalRow(values);
      return true;
    }

    private static Object value(DataType t, Tensor v) {
      ByteBuffer b = v.data().order(ByteOrder.LITTLE_ENDIAN);
      if (t instanceof ArrayType a) {
        int n = (int) v.numElements();
        Object[] out = new Object[n];
        int w = v.dtype().byteSize();
        for (int j = 0; j < n; j++) {
          out[j] = v.hasNulls() && v.isNull(j) ? null : scalar(a.elementType(), b, b.position() + j * w);
        }
        return new GenericArrayData(out);
      }
      if (t.equals(DataTypes.StringType)) {
        byte[] bytes = new byte[b.remaining()];
        b.duplicate().get(bytes);
        return UTF8String.fromBytes(bytes);
      }
      if (t.equals(DataTypes.BinaryType)) {
        byte[] bytes = new byte[b.remaining()];
        b.duplicate().get(bytes);
        return bytes;
      }
      return scalar(t, b, b.position());
    }

    private static Object scalar(DataType t, ByteBuffer b, int at) {
      if (t.equals(DataTypes.BooleanType)) {
        return b.get(at) != 0;
      } else if (t.equals(DataTypes.ByteType)) {
        return b.get(at);
      } else if (t.equals(DataTypes.ShortType)) {
        return b.getShort(at);
      } else if (t.equals(DataTypes.IntegerType)) {
        return b.getInt(at);
      } else if (t.equals(DataTypes.LongType)) {
        return b.getLong(at);
      } else if (t.equals(DataTypes.FloatType)) {
        return b.getFloat(at);
      }
      return b.getDouble(at);
    }

    @Override
    public InternalRow get() {
      return current;
    }

    @Override
    public void close() {
      stream.close();
      set.close();
    }
  }
}
