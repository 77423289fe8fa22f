package dev.sluice.operators.internal.cache;

import dev.sluice.core.Schema;
import dev.sluice.operators.CacheException;
import dev.sluice.operators.CacheSpec;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;

/**
 * The free-space check made when a pipeline with a cache is assembled: containers often give
 * {@code /dev/shm} only 64 MB, and a cache that fills it would make later writers fail.
 */
final class SpaceCheck {
  /** Bytes a segment adds to its rows: header, footer, block alignment (an upper bound for a few fields). */
  static final long SEGMENT_OVERHEAD = 4096;

  private SpaceCheck() {}

  /**
   * Compares what the cache still needs with the usable space of its directory: the budget, or the
   * cache's size when that is known (fixed-size rows) and smaller, less what is already cached.
   *
   * @throws CacheException with the figures when it does not fit
   */
  static void check(CacheState s) {
    Path root = s.spec.directory();
    Schema schema = s.knownSchema();
    long rowBytes = schema == null ? -1 : schema.fixedRowBytes();
    long rows = s.geometry.rows();
    long size = rowBytes < 0 ? -1 : satAdd(satMul(rows, rowBytes), satMul(s.geometry.blockCount(), SEGMENT_OVERHEAD));
    long max = s.spec.maxBytes();
    long needed = size >= 0 ? Math.min(size, max) : max == CacheSpec.UNLIMITED ? -1 : max;
    if (needed < 0) {
      return; // neither a budget nor a size: nothing to compare
    }
    long present = segmentBytes(s.dir);
    long more = needed - present;
    long usable = usableSpace(root);
    if (more > usable) {
      String why = size >= 0 && size <= max
          ? String.format(Locale.ROOT, "%,d rows x %,d bytes in %,d blocks", rows, rowBytes, s.geometry.blockCount())
          : "its budget";
      throw new CacheException(root.toString(), bytes(usable) + " free, but the cache needs " + bytes(more)
          + (present > 0 ? " more (" + bytes(present) + " already cached)" : "") + " (" + why + ", budget "
          + (max == CacheSpec.UNLIMITED ? "none" : bytes(max)) + "); give a budget that fits (CacheSpec.maxBytes,"
          + " sluice read --cache-max-bytes) or another directory (CacheSpec.directory, sluice read --cache DIR)", null);
    }
  }

  /** The usable space of the file system holding {@code dir} (or its nearest existing parent). */
  static long usableSpace(Path dir) {
    Path p = dir.toAbsolutePath();
    while (p != null && !Files.exists(p)) {
      p = p.getParent();
    }
    try {
      return p == null ? Long.MAX_VALUE : Files.getFileStore(p).getUsableSpace();
    } catch (IOException e) {
      throw new CacheException(dir.toString(), "cannot read the free space of its file system: " + e, e);
    }
  }

  /** Bytes of the segment files in {@code dir} (0 when it does not exist). */
  static long segmentBytes(Path dir) {
    if (!Files.isDirectory(dir)) {
      return 0;
    }
    long n = 0;
    try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, "block-*.shard")) {
      for (Path f : files) {
        n += Files.size(f);
      }
    } catch (IOException e) {
      return n;
    }
    return n;
  }

  static String bytes(long n) {
    return CacheAdmin.bytes(n);
  }

  private static long satMul(long a, long b) {
    long hi = Math.multiplyHigh(a, b);
    long lo = a * b;
    return hi != 0 || lo < 0 ? Long.MAX_VALUE : lo;
  }

  private static long satAdd(long a, long b) {
    long r = a + b;
    return r < 0 ? Long.MAX_VALUE : r;
  }
}
