package dev.sluice.operators.internal.cache;

import dev.sluice.core.Schema;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The cache stores this process has open, one per cache directory (by its absolute, normalized
 * path): a directory is opened once per process and its later users share that store, whose index
 * is then opened at most once.
 */
final class CacheRegistry {
  private static final Map<Path, CacheStore> OPEN = new ConcurrentHashMap<>();

  private CacheRegistry() {}

  /**
   * The store of the cache in {@code dir}, opened by {@link CacheStore#create} on the first call
   * and returned by later ones, which must give the same schema and block geometry.
   *
   * @param key the cache's key, which its sealed manifest names
   * @param description the cache's description for {@value CacheStore#META_FILE}
   * @throws CacheIndex.Timeout when another process holds the index's creation lock too long
   * @throws IllegalStateException when the directory is open here with another schema or geometry
   */
  static CacheStore open(Path dir, Schema schema, Geometry geometry, String key, String description, String owner,
      long waitNanos) throws CacheIndex.Timeout {
    Path path = dir.toAbsolutePath().normalize();
    CacheStore s = OPEN.get(path);
    if (s == null) {
      synchronized (OPEN) {
        s = OPEN.get(path);
        if (s == null) {
          s = CacheStore.create(path, schema, geometry, key, description, owner, waitNanos);
          OPEN.put(path, s);
          return s;
        }
      }
    }
    s.checkSame(schema, geometry);
    return s;
  }

  /** The store of {@code dir} this process has open, else null. */
  static CacheStore opened(Path dir) {
    return OPEN.get(dir.toAbsolutePath().normalize());
  }

  /**
   * Closes the store of {@code dir} in this process, if open: its index is closed (its segments'
   * views stay valid) and the next {@link #open} opens the directory afresh.
   */
  static void release(Path dir) {
    CacheStore s;
    synchronized (OPEN) {
      s = OPEN.remove(dir.toAbsolutePath().normalize());
    }
    if (s != null) {
      s.index.close();
    }
  }
}
