package dev.sluice.core.testing;

import dev.sluice.core.Schema;
import dev.sluice.core.spi.ColumnBuilder;
import dev.sluice.core.spi.ColumnCursor;
import java.util.Arrays;

/**
 * A test {@link ColumnCursor} over rows with consecutive global indices that enforces the
 * contract the way a real source does: each field decoded once per step, no more rows than are
 * left, {@link #advance} only past rows every field decoded. Subclasses write the values.
 */
public abstract class CheckedCursor implements ColumnCursor {
  private final Schema schema;
  private long next;
  private long left;
  private final int[] decoded;
  private boolean closed;

  /** Rows {@code [first, first + rows)} by global index. */
  protected CheckedCursor(Schema schema, long first, long rows) {
    this.schema = schema;
    this.next = first;
    this.left = rows;
    this.decoded = new int[schema.size()];
  }

  /** Writes field {@code field} of the rows with indices {@code first ..} into {@code into} from row {@code at}. */
  protected abstract void write(int field, ColumnBuilder into, int at, long first, int rows);

  /** Called once, by the first {@link #close()}. */
  protected void closed() {}

  @Override
  public Schema schema() {
    return schema;
  }

  @Override
  public long remaining() {
    return left;
  }

  @Override
  public long index() {
    return next;
  }

  @Override
  public void decode(int field, ColumnBuilder into, int at, int rows) {
    if (decoded[field] != 0) {
      throw new IllegalStateException("field " + field + " decoded twice");
    }
    if (rows > left) {
      throw new IllegalArgumentException(rows + " rows asked of " + left);
    }
    write(field, into, at, next, rows);
    decoded[field] = rows;
  }

  @Override
  public void advance(int rows) {
    for (int d : decoded) {
      if (d != rows) {
        throw new IllegalStateException("advance " + rows + " after " + Arrays.toString(decoded));
      }
    }
    Arrays.fill(decoded, 0);
    next += rows;
    left -= rows;
  }

  /** True once closed. */
  public boolean isClosed() {
    return closed;
  }

  @Override
  public void close() {
    if (!closed) {
      closed = true;
      closed();
    }
  }
}
