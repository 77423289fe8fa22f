package dev.sluice.spark.internal;

import dev.sluice.core.Batch;
import dev.sluice.core.Column;
import dev.sluice.core.DType;
import dev.sluice.core.Split;
import dev.sluice.core.Tensor;
import dev.sluice.io.shards.ShardSet;
import dev.sluice.io.shards.Shards;
import java.net.URI;
import java.nio.ByteBuffer;
import java.util.Iterator;
import java.util.stream.Stream;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.execution.vectorized.OnHeapColumnVector;
import org.apache.spark.sql.execution.vectorized.WritableColumnVector;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/**
 * The columnar reader of one shard: the shard's rows are copied in bulk into Sluice batches of
 * {@code batchSize} rows, and each batch's required columns into Spark's on-heap column vectors
 * (arrays through their child vectors, strings and binary values as byte arrays, nulls as nulls).
 * The vectors are reused from one batch to the next, as Spark's own columnar readers do; each Sluice
 * batch is closed as soon as it has been copied, and {@link #close()} releases any batch still
 * queued.
 */
final class ShardColumnarReader implements PartitionReader<ColumnarBatch> {
  private final ShardSet set;
  private final Stream<Batch> stream;
  private final Iterator<Batch> it;
  private final StructField[] fields;
  private final OnHeapColumnVector[] vectors;
  private final ColumnarBatch current;
  private byte[] scratch = new byte[0];

  ShardColumnarReader(ShardScan.ShardPartition p, StructType schema, int batchSize) {
    this.fields = schema.fields();
    this.set = Shards.open(URI.create(p.uri()));
    try {
      Split split = set.splits().get(p.index());
      this.stream = set.readBatches(split, 0, p.rows(), batchSize)
          .doOnDiscard(Batch.class, Batch::close)
          .toStream(1);
      this.it = stream.iterator();
    } catch (RuntimeException e) {
      set.close();
      throw e;
    }
    this.vectors = OnHeapColumnVector.allocateColumns(batchSize, schema);
    this.current = new ColumnarBatch(vectors.clone(), 0);
  }

  @Override
  public boolean next() {
    if (!it.hasNext()) {
      return false;
    }
    try (Batch b = it.next()) {
      int n = b.size();
      for (int i = 0; i < fields.length; i++) {
        vectors[i].reset();
        fill(b.column(fields[i].name()), n, vectors[i]);
      }
      current.setNumRows(n);
    }
    return true;
  }

  @Override
  public ColumnarBatch get() {
    return current;
  }

  private void fill(Column c, int n, WritableColumnVector v) {
    DType d = c.spec().dtype();
    if (c.offsetLevels() == 0) {
      long items = c.spec().shape().numElements();
      if (c.spec().shape().rank() == 0) {
        putValues(v, 0, c.values().data(), 0, n, d);
      } else {
        int m = Math.toIntExact(items);
        WritableColumnVector child = v.arrayData();
        child.reserve(n * m);
        for (int i = 0; i < n; i++) {
          v.putArray(i, i * m, m);
        }
        putValues(child, 0, c.values().data(), 0, n * m, d);
      }
    } else if (d.isVariableLength()) {
      ByteBuffer off = c.offsets().data();
      ByteBuffer values = c.values().data();
      long first = off.getLong(0);
      int total = Math.toIntExact(off.getLong(8 * n) - first);
      byte[] bytes = scratch(total);
      values.get(Math.toIntExact(first), bytes, 0, total);
      for (int i = 0; i < n; i++) {
        long from = off.getLong(8 * i);
        v.putByteArray(i, bytes, (int) (from - first), (int) (off.getLong(8 * (i + 1)) - from));
      }
    } else {
      ByteBuffer off = c.offsets().data();
      long first = off.getLong(0);
      int total = Math.toIntExact(off.getLong(8 * n) - first);
      WritableColumnVector child = v.arrayData();
      child.reserve(total);
      for (int i = 0; i < n; i++) {
        long from = off.getLong(8 * i);
        v.putArray(i, (int) (from - first), (int) (off.getLong(8 * (i + 1)) - from));
      }
      putValues(child, 0, c.values().data(), Math.toIntExact(first), total, d);
      if (c.hasValidity(1)) {
        Tensor valid = c.validity(1);
        for (int j = 0; j < total; j++) {
          if (!valid.getBoolean(first + j)) {
            child.putNull(j);
          }
        }
      }
    }
    if (c.hasValidity()) {
      Tensor valid = c.validity();
      for (int i = 0; i < n; i++) {
        if (!valid.getBoolean(i)) {
          v.putNull(i);
        }
      }
    }
  }

  /** Values {@code [from, from + count)} of {@code src} (little-endian) into {@code v} from row {@code at}. */
  private void putValues(WritableColumnVector v, int at, ByteBuffer src, int from, int count, DType d) {
    int w = d.byteSize();
    switch (d) {
      case BOOL -> {
        for (int j = 0; j < count; j++) {
          v.putBoolean(at + j, src.get((from + j) * w) != 0);
        }
      }
      case INT16 -> {
        for (int j = 0; j < count; j++) {
          v.putShort(at + j, src.getShort((from + j) * w));
        }
      }
      case INT8, INT32, INT64, FLOAT32, FLOAT64 -> {
        int bytes = Math.multiplyExact(count, w);
        byte[] b = scratch(bytes);
        src.get(from * w, b, 0, bytes);
        switch (d) {
          case INT8 -> v.putBytes(at, count, b, 0);
          case INT32 -> v.putIntsLittleEndian(at, count, b, 0);
          case INT64 -> v.putLongsLittleEndian(at, count, b, 0);
          case FLOAT32 -> v.putFloatsLittleEndian(at, count, b, 0);
          default -> v.putDoublesLittleEndian(at, count, b, 0);
        }
      }
      default -> throw new IllegalStateException("sluice: no Spark column of " + d);
    }
  }

  private byte[] scratch(int bytes) {
    if (scratch.length < bytes) {
      scratch = new byte[Math.max(bytes, scratch.length * 2)];
    }
    return scratch;
  }

  @Override
  public void close() {
    try {
      stream.close();
    } finally {
      for (ColumnVector v : vectors) {
        v.close();
      }
      set.close();
    }
  }
}
