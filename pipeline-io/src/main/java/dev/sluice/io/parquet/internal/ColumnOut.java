package dev.sluice.io.parquet.internal;

import dev.sluice.core.BufferPool;
import dev.sluice.core.Column;
import dev.sluice.core.DType;
import dev.sluice.core.PooledBuffer;
import dev.sluice.core.Shape;
import dev.sluice.core.Tensor;
import dev.sluice.core.TensorSpec;
import java.nio.ByteBuffer;
import java.util.List;

/**
 * The pooled memory of one column of one batch being decoded: values (fixed: {@code capacity ×
 * rowBytes}; variable: grows), int64 offsets for variable-length columns, and a validity vector
 * allocated only when a null shows up.
 */
final class ColumnOut {
  final TensorSpec spec;
  final boolean variable;
  final int capacity;
  final int rowBytes; // fixed-length columns
  final int itemBytes; // variable-length: bytes per item (1 for string/bytes)
  private final BufferPool pool;
  PooledBuffer values;
  PooledBuffer offsets;
  PooledBuffer validity;
  long valueBytes; // variable-length
  int rows;

  ColumnOut(TensorSpec spec, int capacity, BufferPool pool) {
    this.spec = spec;
    this.capacity = capacity;
    this.pool = pool;
    this.variable = !spec.isFixedLength();
    if (!variable) {
      rowBytes = Math.toIntExact(spec.rowBytes());
      itemBytes = 0;
      values = pool.allocate(Math.max(1, (long) rowBytes * capacity));
    } else {
      rowBytes = -1;
      itemBytes = spec.dtype().isVariableLength() ? 1 : spec.dtype().byteSize();
      offsets = pool.allocate(8L * (capacity + 1));
      offsets.buffer().putLong(0, 0L);
      values = pool.allocate(Math.max(4096, (long) capacity * 16));
    }
  }

  ByteBuffer buffer() {
    return values.buffer();
  }

  /** Makes room for {@code more} value bytes past {@link #valueBytes} (variable-length). */
  void ensure(long more) {
    long need = valueBytes + more;
    if (need > values.size()) {
      if (need > Integer.MAX_VALUE - 8) {
        throw new IllegalStateException("column '" + spec.name() + "': a batch of more than 2 GiB; use a smaller batch size");
      }
      PooledBuffer bigger = pool.allocate(Math.min(Integer.MAX_VALUE - 8, Math.max(need, values.size() * 2)));
      bigger.buffer().put(0, values.buffer(), 0, (int) valueBytes);
      values.close();
      values = bigger;
    }
  }

  /** Appends {@code len} bytes of {@code src} from {@code pos}. */
  void append(ByteBuffer src, int pos, int len) {
    ensure(len);
    values.buffer().put((int) valueBytes, src, pos, len);
    valueBytes += len;
  }

  void append(byte[] src) {
    ensure(src.length);
    values.buffer().put((int) valueBytes, src, 0, src.length);
    valueBytes += src.length;
  }

  /** Sets {@code offsets[row + 1]} to the current end of the values (in items). */
  void endRow(int row) {
    offsets.buffer().putLong((row + 1) * 8, itemBytes <= 1 ? valueBytes : valueBytes / itemBytes);
  }

  /** Marks {@code row} null; a fixed-length row is zeroed. */
  void setNull(int row) {
    if (validity == null) {
      validity = pool.allocate(capacity);
      ByteBuffer v = validity.buffer();
      for (int i = 0; i < capacity; i++) {
        v.put(i, (byte) 1);
      }
    }
    validity.buffer().put(row, (byte) 0);
    if (!variable) {
      zero(values.buffer(), row * rowBytes, rowBytes);
    }
  }

  static void zero(ByteBuffer b, int from, int len) {
    int i = from;
    int end = from + len;
    for (; i + 8 <= end; i += 8) {
      b.putLong(i, 0L);
    }
    for (; i < end; i++) {
      b.put(i, (byte) 0);
    }
  }

  Column build(int n) {
    Tensor valid = validity == null ? null
        : Tensor.wrap(DType.BOOL, Shape.of(n), validity.buffer().slice(0, n));
    if (!variable) {
      Tensor v = Tensor.wrap(spec.dtype(), spec.shape().prepend(n), values.buffer().slice(0, n * rowBytes));
      return new Column(spec, n, v, null, valid);
    }
    ByteBuffer off = offsets.buffer().slice(0, (n + 1) * 8);
    Tensor offT = Tensor.wrap(DType.INT64, Shape.of(n + 1L), off);
    ByteBuffer data = values.buffer().slice(0, (int) valueBytes);
    Tensor v;
    if (spec.dtype().isVariableLength()) {
      v = Tensor.wrapVariable(spec.dtype(), data, off);
    } else {
      v = Tensor.wrap(spec.dtype(), spec.shape().dropFirst().prepend(valueBytes / itemBytes), data);
    }
    return new Column(spec, n, v, offT, valid);
  }

  void collect(List<PooledBuffer> out) {
    for (PooledBuffer b : new PooledBuffer[] {values, offsets, validity}) {
      if (b != null) {
        out.add(b);
      }
    }
  }

  void close() {
    for (PooledBuffer b : new PooledBuffer[] {values, offsets, validity}) {
      if (b != null) {
        b.close();
      }
    }
  }
}
