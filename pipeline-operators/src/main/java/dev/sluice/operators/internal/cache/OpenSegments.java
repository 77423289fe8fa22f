package dev.sluice.operators.internal.cache;

import dev.sluice.core.DatasetFormatException;
import dev.sluice.core.internal.shardfile.FieldLayout;
import dev.sluice.core.internal.shardfile.ShardFileReader;
import dev.sluice.core.internal.shardfile.ShardRows;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The published segments this process has opened, one per block, and the rows of the whole cache
 * once every block is open. A segment is opened at most once; readers race to open it and the first
 * one wins. Segments stay open (their views valid) for the life of the process.
 */
final class OpenSegments {
  private final Path dir;
  private final List<FieldLayout> layouts;
  private final Geometry geometry;
  private final String owner;
  private final Map<Long, CacheStore.Segment> segments = new ConcurrentHashMap<>();
  private volatile ShardRows complete;

  OpenSegments(Path dir, List<FieldLayout> layouts, Geometry geometry, String owner) {
    this.dir = dir;
    this.layouts = layouts;
    this.geometry = geometry;
    this.owner = owner;
  }

  /** The rows of every block, once this process has opened every segment; else null. */
  ShardRows complete() {
    return complete;
  }

  /** The segment of {@code block} when this process has it open, else null. */
  CacheStore.Segment get(long block) {
    return segments.get(block);
  }

  /**
   * Opens the segment of a published entry, checked against it (and its checksums when
   * {@code verify}); the segment already open when another thread opened it first.
   *
   * @throws DatasetFormatException naming the file when it does not match its entry, fails its
   *     checksums, or changed while mapped
   */
  CacheStore.Segment open(long block, IndexEntry e, boolean verify) {
    CacheStore.Segment known = segments.get(block);
    if (known != null) {
      return known;
    }
    Path file = dir.resolve(CacheFiles.segmentName(block, e.nonce()));
    int rows = geometry.blockSize(block);
    PrivateDirs.tighten(file);
    ShardFileReader r = ShardFileReader.open(file, layouts, Integer.MAX_VALUE, new SegmentCheck(e, rows));
    try {
      if (verify) {
        r.verify();
      }
      r.detach();
    } catch (RuntimeException | Error x) {
      closeQuietly(r); // a segment truncated under its mapping: verify and detach report it (MappedReads)
      throw x;
    }
    CacheStore.Segment s = new CacheStore.Segment(block, file, r, new ShardRows(file.toString(), owner, List.of(r),
        layouts.size(), geometry.blockStart(block)));
    CacheStore.Segment prev = segments.putIfAbsent(block, s);
    if (prev != null) {
      return prev;
    }
    if (segments.size() == geometry.blockCount()) {
      completeNow();
    }
    return s;
  }

  private synchronized void completeNow() {
    if (complete != null) {
      return;
    }
    List<ShardFileReader> readers = new ArrayList<>();
    for (long b = 0; b < geometry.blockCount(); b++) {
      readers.add(segments.get(b).reader());
    }
    complete = new ShardRows(dir.toString(), owner, readers, layouts.size(), 0);
  }

  private static void closeQuietly(ShardFileReader r) {
    try {
      r.close();
    } catch (RuntimeException ignored) {
      // the open failed; that is the error to report
    }
  }
}
