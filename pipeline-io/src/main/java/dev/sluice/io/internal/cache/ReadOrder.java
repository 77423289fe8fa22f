package dev.sluice.io.internal.cache;

import java.util.ArrayList;
import java.util.List;

/**
 * The order in which the reader of one group of {@link CachedFile}s will read them: the files'
 * own order until the reader announces another ({@link #next(List)}). A file may appear several
 * times (a shuffle that visits a file's blocks at different times).
 */
final class ReadOrder {
  /** How far behind the cursor a file read out of order is still taken as part of the announced order. */
  private static final int BEHIND = 64;

  private final List<CachedFile> files;
  private List<CachedFile> order;
  private int cursor;

  ReadOrder(List<CachedFile> files) {
    this.files = files;
    this.order = files;
  }

  List<CachedFile> files() {
    return files;
  }

  /** The reader reads {@code upcoming} next, in this order (replacing what was announced before). */
  synchronized void next(List<CachedFile> upcoming) {
    order = List.copyOf(upcoming);
    cursor = 0;
  }

  /**
   * The reader has started reading {@code file}: moves the cursor to its next occurrence in the
   * order (or one a little behind the cursor) and returns the up to {@code n} distinct other files
   * that follow it there. A file found neither way means the reader has left the announced order:
   * the files' own order applies again.
   */
  synchronized List<CachedFile> reached(CachedFile file, int n) {
    int at = indexOf(file, cursor);
    for (int k = cursor - 1; at < 0 && k >= Math.max(0, cursor - BEHIND); k--) {
      if (order.get(k) == file) {
        at = k; // a read slightly out of order (reads in parallel)
      }
    }
    if (at < 0 && order != files) { // the reader has left the announced order: its pass is over
      order = files;
      at = indexOf(file, 0);
    }
    if (at < 0) {
      return List.of();
    }
    cursor = at;
    List<CachedFile> after = new ArrayList<>(n);
    for (int k = at + 1; k < order.size() && after.size() < n; k++) {
      CachedFile f = order.get(k);
      if (f != file && !after.contains(f)) {
        after.add(f);
      }
    }
    return after;
  }

  private int indexOf(CachedFile file, int from) {
    for (int k = from; k < order.size(); k++) {
      if (order.get(k) == file) {
        return k;
      }
    }
    return -1;
  }
}
