package dev.sluice.operators.internal;

import dev.sluice.core.BatchSplitDataset;
import dev.sluice.core.internal.metrics.StageMeter;
import dev.sluice.core.internal.metrics.TimedColumnCursor;
import dev.sluice.core.spi.BufferPool;
import dev.sluice.core.spi.ColumnCursor;
import dev.sluice.core.spi.ColumnWindow;
import java.util.ArrayList;
import java.util.List;

/**
 * The windows of a window shuffle over a source that decodes one column at a time
 * ({@link BatchSplitDataset#decodesColumns()}): the rows of the pieces in order, cut into windows of
 * {@code windowRows} rows (the last one fewer), each handed on as the same {@link ColumnWindow}
 * filled with cursors over its rows. A piece's cursor is opened when a window first reaches it,
 * checked to hold exactly the piece's rows, and closed once a window has passed its last row. Not
 * thread-safe: one pass owns it and closes it, which closes every cursor still open and the
 * window's buffers.
 */
final class ColumnWindows implements AutoCloseable {
  private final BatchSplitDataset<?> source;
  private final List<SplitPiece> pieces;
  private final int windowRows;
  private final StageMeter meter; // may be null
  private final ColumnWindow window;
  private final List<ColumnCursor> passed = new ArrayList<>(); // exhausted by the last window handed on
  private ColumnCursor current;
  private int next; // the next piece to open

  ColumnWindows(BatchSplitDataset<?> source, List<SplitPiece> pieces, int windowRows, BufferPool pool,
      StageMeter meter) {
    this.source = source;
    this.pieces = pieces;
    this.windowRows = windowRows;
    this.meter = meter;
    this.window = new ColumnWindow(source.schema(), windowRows, pool, source.toString());
  }

  /** The window of the next rows, or null after the last row. */
  ColumnWindow next() {
    closePassed();
    window.clear();
    while (window.size() < windowRows) {
      if (current == null) {
        if (next == pieces.size()) {
          break;
        }
        current = open(pieces.get(next++));
      }
      long left = current.remaining();
      int n = (int) Math.min(left, windowRows - window.size());
      window.add(current, n);
      if (n == left) {
        passed.add(current); // closed once the window's gather has moved past its rows
        current = null;
      }
    }
    return window.size() == 0 ? null : window;
  }

  private ColumnCursor open(SplitPiece p) {
    ColumnCursor c = TimedColumnCursor.open(() -> source.openColumns(p.split(), p.fromRow(), p.toRow()), meter,
        p.split().id(), p.fromRow(), p.rows());
    if (c.remaining() != p.rows()) {
      long found = c.remaining();
      c.close();
      throw SplitPiece.wrongCount(p.split(), p.fromRow(), p.toRow(), String.valueOf(found));
    }
    return c;
  }

  private void closePassed() {
    passed.forEach(ColumnCursor::close);
    passed.clear();
  }

  /** Closes every cursor still open and returns the window's buffers; idempotent. */
  @Override
  public void close() {
    try {
      closePassed();
      if (current != null) {
        current.close();
        current = null;
      }
    } finally {
      window.close();
    }
  }
}
