package dev.sluice.spark.internal;

import dev.sluice.core.Batch;
import dev.sluice.core.DType;
import dev.sluice.core.MemoryManager;
import dev.sluice.core.Schema;
import dev.sluice.core.TensorSpec;
import dev.sluice.core.spi.BatchBuilder;
import dev.sluice.core.spi.ColumnBuilder;
import dev.sluice.io.shards.ShardInfo;
import dev.sluice.io.shards.ShardWriter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.util.ArrayData;
import org.apache.spark.sql.connector.write.DataWriter;
import org.apache.spark.sql.connector.write.WriterCommitMessage;
import org.apache.spark.sql.types.StructType;

/**
 * One task attempt's writer: rows are collected into a batch of at most {@code shardRows} rows;
 * each full batch becomes one shard file {@code part-<partition>-<job>-<task>-<k>.shard} (the job's
 * query id makes the name unique, so it never replaces a file of the dataset it overwrites), written
 * locally and moved into the job's staging directory. {@link #commit()} returns the shards' entries;
 * {@link #abort()} deletes them.
 */
final class ShardDataWriter implements DataWriter<InternalRow> {
  private static final String STAGE = "spark-write";

  private final URI target;
  private final String job;
  private final Path stage;
  private final Schema schema;
  private final int shardRows;
  private final int partition;
  private final long taskId;
  private final FileSystem fs;
  private final List<ShardInfo> written = new ArrayList<>();
  private final java.nio.file.Path local;
  private BatchBuilder builder;
  private long rowsSeen;

  ShardDataWriter(URI target, String job, StructType spark, Schema schema, int shardRows, int partition,
      long taskId) {
    this.target = target;
    this.job = job;
    String staging = ShardBatchWrite.STAGING_PREFIX + job;
    this.stage = new Path(new Path(target), staging);
    this.schema = schema;
    this.shardRows = shardRows;
    this.partition = partition;
    this.taskId = taskId;
    this.fs = ShardBatchWrite.fs(target);
    try {
      this.local = Files.createTempDirectory("sluice-spark-");
    } catch (IOException e) {
      throw new UncheckedIOException("sluice: cannot create a local temporary directory: " + e.getMessage(), e);
    }
  }

  @Override
  public void write(InternalRow row) {
    if (builder == null) {
      builder = BatchBuilder.create(schema, shardRows, MemoryManager.shared().pool(STAGE));
    }
    int r = builder.size();
    for (int f = 0; f < schema.size(); f++) {
      put(f, schema.field(f), row, r);
    }
    builder.commitRange(r, 1);
    rowsSeen++;
    if (builder.isFull()) {
      flush();
    }
  }

  private void put(int f, TensorSpec spec, InternalRow row, int r) {
    if (row.isNullAt(f)) {
      builder.setNull(f, r);
      return;
    }
    if (spec.isFixedLength()) {
      ByteBuffer buf = builder.fixedColumn(f).order(ByteOrder.LITTLE_ENDIAN);
      int at = r * builder.rowBytes(f);
      if (spec.shape().rank() == 0) {
        putScalar(buf, at, spec.dtype(), row, f);
      } else {
        ArrayData a = row.getArray(f);
        long n = spec.shape().numElements();
        if (a.numElements() != n) {
          throw new IllegalArgumentException("sluice: column '" + spec.name() + "' row " + rowsSeen + " of partition "
              + partition + " holds " + a.numElements() + " elements but its declared shape " + spec.shape()
              + " holds " + n);
        }
        int w = spec.dtype().byteSize();
        for (int j = 0; j < n; j++) {
          if (a.isNullAt(j)) {
            throw new IllegalArgumentException("sluice: column '" + spec.name() + "' row " + rowsSeen + " of partition "
                + partition + " has a null element at " + j + "; a fixed-shape field holds no null elements");
          }
          putElement(buf, at + j * w, spec.dtype(), a, j);
        }
      }
      return;
    }
    ColumnBuilder c = builder.column(f);
    if (spec.dtype() == DType.STRING) {
      c.addBytes(row.getUTF8String(f).getBytes());
    } else if (spec.dtype() == DType.BYTES) {
      c.addBytes(row.getBinary(f));
    } else {
      ArrayData a = row.getArray(f);
      c.startList(0);
      int w = spec.dtype().byteSize();
      for (int j = 0; j < a.numElements(); j++) {
        if (a.isNullAt(j)) {
          c.addNull(1);
        } else {
          int at = c.reserveValues(1);
          putElement(c.valueBuffer().order(ByteOrder.LITTLE_ENDIAN), at, spec.dtype(), a, j);
        }
      }
      if (w <= 0) {
        throw new IllegalStateException("sluice: field " + spec + " has no fixed-width elements");
      }
    }
  }

  private static void putScalar(ByteBuffer b, int at, DType d, InternalRow row, int f) {
    switch (d) {
      case BOOL -> b.put(at, (byte) (row.getBoolean(f) ? 1 : 0));
      case INT8 -> b.put(at, row.getByte(f));
      case INT16 -> b.putShort(at, row.getShort(f));
      case INT32 -> b.putInt(at, row.getInt(f));
      case INT64 -> b.putLong(at, row.getLong(f));
      case FLOAT32 -> b.putFloat(at, row.getFloat(f));
      case FLOAT64 -> b.putDouble(at, row.getDouble(f));
      default -> throw new IllegalStateException("sluice: no scalar of " + d);
    }
  }

  private static void putElement(ByteBuffer b, int at, DType d, ArrayData a, int j) {
    switch (d) {
      case BOOL -> b.put(at, (byte) (a.getBoolean(j) ? 1 : 0));
      case INT8 -> b.put(at, a.getByte(j));
      case INT16 -> b.putShort(at, a.getShort(j));
      case INT32 -> b.putInt(at, a.getInt(j));
      case INT64 -> b.putLong(at, a.getLong(j));
      case FLOAT32 -> b.putFloat(at, a.getFloat(j));
      case FLOAT64 -> b.putDouble(at, a.getDouble(j));
      default -> throw new IllegalStateException("sluice: no element of " + d);
    }
  }

  /** Writes the rows collected so far as the next shard and moves it into the staging directory. */
  private void flush() {
    if (builder == null || builder.size() == 0) {
      return;
    }
    String name = String.format(Locale.ROOT, "part-%05d-%s-%d-%d.shard", partition, job, taskId, written.size());
    java.nio.file.Path file = local.resolve(name);
    ShardInfo info;
    try (Batch b = builder.build(); ShardWriter w = ShardWriter.create(file, schema, b.size())) {
      w.write(b);
      info = w.finish();
    } finally {
      builder.close();
      builder = null;
    }
    try {
      fs.moveFromLocalFile(new Path(file.toUri()), new Path(stage, name));
    } catch (IOException e) {
      throw new UncheckedIOException("sluice: cannot move " + name + " into " + stage + ": " + e.getMessage(), e);
    }
    written.add(info);
  }

  @Override
  public WriterCommitMessage commit() {
    flush();
    return ShardMessage.of(partition, taskId, written);
  }

  @Override
  public void abort() {
    try {
      for (ShardInfo s : written) {
        fs.delete(new Path(stage, s.file()), false);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("sluice: cannot delete the staged shards of " + target + ": " + e.getMessage(), e);
    }
  }

  @Override
  public void close() {
    try {
      fs.close();
    } catch (IOException e) {
      // nothing is left to write through it
    }
    if (builder != null) {
      builder.close();
      builder = null;
    }
    try (var s = Files.list(local)) {
      for (java.nio.file.Path p : (Iterable<java.nio.file.Path>) s::iterator) {
        Files.deleteIfExists(p);
      }
      Files.deleteIfExists(local);
    } catch (IOException e) {
      // a local temporary directory left behind is harmless
    }
  }
}
