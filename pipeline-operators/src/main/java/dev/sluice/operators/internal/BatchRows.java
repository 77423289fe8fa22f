package dev.sluice.operators.internal;

import dev.sluice.core.Batch;
import dev.sluice.core.BatchSplitDataset;
import dev.sluice.core.Column;
import dev.sluice.core.Example;
import dev.sluice.core.HasSchema;
import dev.sluice.core.RandomAccessDataset;
import dev.sluice.core.Schema;
import dev.sluice.core.Split;
import dev.sluice.core.Tensor;
import dev.sluice.core.spi.BatchBuilder;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import reactor.core.publisher.Flux;

/**
 * The rows of one decoded batch of a split source, as the element path over that source sees them
 * (docs/architecture.md, the element path): the batch's columns are moved to the heap in one copy
 * per column, the pooled batch is closed at once, and each row is handed on as a lazy
 * {@link Example} whose {@link Example#origin()} is this object. Reading a field gives views of the
 * heap columns (no copy per row); a {@code batch} that receives runs of unchanged rows of one such
 * origin re-cuts them as column ranges ({@link #gather}) instead of collating row by row. The rows
 * own no off-heap memory, so they follow the element model: the heap columns are released by the
 * GC once no row refers to them.
 *
 * <p>Only an origin: its {@link #get} answers the global indices of the batch's rows, and
 * {@link #size} is the batch's row count.
 */
final class BatchRows implements RandomAccessDataset<Example>, HasSchema {
  /** Rows of each batch the element path decodes. */
  static final int ROWS = 1024;

  private final Schema schema;
  private final List<Column> columns;
  private final long[] indices;
  /** {@code indices[0]} when the indices are consecutive, else -1 (rows are then looked up). */
  private final long first;
  /** Row by index when the indices are not consecutive, else null. */
  private final Map<Long, Integer> rowOf;

  private BatchRows(Schema schema, List<Column> columns, long[] indices) {
    this.schema = schema;
    this.columns = columns;
    this.indices = indices;
    this.first = consecutive(indices) ? indices[0] : -1;
    if (first < 0) {
      rowOf = new HashMap<>(indices.length * 2);
      for (int i = 0; i < indices.length; i++) {
        rowOf.put(indices[i], i);
      }
    } else {
      rowOf = null;
    }
  }

  /**
   * Rows {@code [fromRow, toRow)} of {@code split} decoded in batches of {@value #ROWS} rows, each
   * row an example that views its batch's heap copy. Each decoded batch is closed as soon as it is
   * copied; the batches the source decoded but did not hand out are closed by the source.
   */
  static Flux<Example> read(BatchSplitDataset<?> source, Split split, long fromRow, long toRow) {
    return source.readBatches(split, fromRow, toRow, ROWS).concatMapIterable(BatchRows::rows);
  }

  /** The rows of {@code batch} as examples over its heap copy; closes {@code batch}. */
  static List<Example> rows(Batch batch) {
    try (batch) {
      int n = batch.size();
      List<Column> heap = new ArrayList<>(batch.schema().size());
      for (int f = 0; f < batch.schema().size(); f++) {
        heap.add(heapCopy(batch.column(f)));
      }
      long[] indices = new long[n];
      for (int i = 0; i < n; i++) {
        indices[i] = batch.index(i);
      }
      BatchRows origin = new BatchRows(batch.schema(), heap, indices);
      List<Example> out = new ArrayList<>(n);
      for (int i = 0; i < n; i++) {
        out.add(Example.lazy(origin, indices[i]));
      }
      return out;
    }
  }

  /** Column {@code c} with every buffer (values, offsets per level, validity per depth, lengths) copied to the heap. */
  private static Column heapCopy(Column c) {
    List<Tensor> offsets = new ArrayList<>(c.offsetLevels());
    for (int j = 0; j < c.offsetLevels(); j++) {
      offsets.add(c.offsets(j).copy());
    }
    int depths = c.spec().raggedRank() + 1;
    List<Tensor> validity = new ArrayList<>(depths);
    boolean any = false;
    for (int d = 0; d < depths; d++) {
      boolean has = c.hasValidity(d);
      any |= has;
      validity.add(has ? c.validity(d).copy() : null);
    }
    if (c.hasLengths()) {
      return new Column(c.spec(), c.size(), c.values().copy(), offsets.isEmpty() ? null : offsets.get(0),
          validity.get(0), c.lengths().copy());
    }
    return Column.of(c.spec(), c.size(), c.values().copy(), offsets, any ? validity : List.of());
  }

  private static boolean consecutive(long[] indices) {
    for (int i = 1; i < indices.length; i++) {
      if (indices[i] != indices[0] + i) {
        return false;
      }
    }
    return indices.length > 0;
  }

  private int row(long index) {
    if (first >= 0) {
      long row = index - first;
      if (row >= 0 && row < indices.length) {
        return (int) row;
      }
    } else {
      Integer row = rowOf.get(index);
      if (row != null) {
        return row;
      }
    }
    throw new IndexOutOfBoundsException("index " + index + " is not a row of " + this);
  }

  @Override
  public Schema schema() {
    return schema;
  }

  @Override
  public long size() {
    return indices.length;
  }

  /** The row at global index {@code index}: views of the heap columns, a null field where the row is null. */
  @Override
  public Example get(long index) {
    int row = row(index);
    Example.Builder b = Example.builder(index);
    for (Column c : columns) {
      if (c.isValid(row)) {
        b.put(c.name(), c.row(row));
      } else {
        b.putNull(c.name());
      }
    }
    return b.build();
  }

  /**
   * Copies the rows at {@code indices[from .. from + count)} into {@code target}: one column range
   * when they are consecutive rows of the batch, else a gather of those rows.
   */
  @Override
  public void gather(long[] indices, int from, int count, BatchBuilder target) {
    if (count == 0) {
      return;
    }
    int start = row(indices[from]);
    int[] rows = null;
    for (int i = 1; i < count; i++) {
      int r = row(indices[from + i]);
      if (rows == null && r != start + i) {
        rows = new int[count];
        for (int j = 0; j < i; j++) {
          rows[j] = start + j;
        }
      }
      if (rows != null) {
        rows[i] = r;
      }
    }
    try (Batch batch = Batch.of(schema, columns, this.indices, () -> { })) {
      if (rows == null) {
        target.appendRange(batch, start, count);
      } else {
        target.appendRows(batch, rows, 0, count);
      }
    }
  }

  @Override
  public String toString() {
    return "decoded rows " + (indices.length == 0 ? "[]" : "[" + indices[0] + ", ...] (" + indices.length + " rows)");
  }
}
