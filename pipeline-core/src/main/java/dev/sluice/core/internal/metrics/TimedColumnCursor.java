package dev.sluice.core.internal.metrics;

import dev.sluice.core.Schema;
import dev.sluice.core.spi.ColumnBuilder;
import dev.sluice.core.spi.ColumnCursor;
import java.util.function.Supplier;

/**
 * Times the decode of one row range of a split read through a {@link ColumnCursor}, as
 * {@link FluxDecodeTimer} times a range read as batches: the time spent opening the cursor and in
 * its {@link #decode} calls. When it is closed with every row of the range
 * passed, the stage's meter records the range ({@link StageMeter#DECODE}) and a
 * {@code sluice.SplitDecode} flight-recorder event; a range closed early (cancel, error) is not
 * recorded. A clock is read twice per call, so it belongs on calls of many rows.
 */
public final class TimedColumnCursor implements ColumnCursor {
  private final ColumnCursor cursor;
  private final StageMeter meter;
  private final SplitDecodeEvent event;
  private final String split;
  private final long fromRow;
  private final long rows;
  private long nanos;
  private boolean closed;

  private TimedColumnCursor(ColumnCursor cursor, StageMeter meter, SplitDecodeEvent event, String split,
      long fromRow, long rows, long openNanos) {
    this.cursor = cursor;
    this.meter = meter;
    this.event = event;
    this.split = split;
    this.fromRow = fromRow;
    this.rows = rows;
    this.nanos = openNanos;
  }

  /**
   * The cursor {@code open} opens over rows {@code fromRow .. fromRow + rows - 1} of {@code split},
   * timed for {@code meter}, or as it is when {@code meter} is null or records no decodes.
   */
  public static ColumnCursor open(Supplier<ColumnCursor> open, StageMeter meter, String split, long fromRow,
      long rows) {
    if (meter == null || !meter.recordsDecodes()) {
      return open.get();
    }
    SplitDecodeEvent event = meter.beginDecode();
    long start = System.nanoTime();
    ColumnCursor c = open.get();
    return new TimedColumnCursor(c, meter, event, split, fromRow, rows, System.nanoTime() - start);
  }

  @Override
  public Schema schema() {
    return cursor.schema();
  }

  @Override
  public long remaining() {
    return cursor.remaining();
  }

  @Override
  public long index() {
    return cursor.index();
  }

  @Override
  public void decode(int field, ColumnBuilder into, int at, int n) {
    long start = System.nanoTime();
    try {
      cursor.decode(field, into, at, n);
    } finally {
      nanos += System.nanoTime() - start;
    }
  }

  @Override
  public void advance(int n) {
    cursor.advance(n);
  }

  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    boolean whole = cursor.remaining() == 0;
    cursor.close();
    if (whole) {
      meter.decoded(event, split, fromRow, rows, nanos);
    }
  }

  @Override
  public String toString() {
    return cursor.toString();
  }
}
